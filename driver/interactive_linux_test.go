package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/ptytest"
)

// interactiveBackend returns a backend whose CLI is script (a /bin/sh
// script) and whose Spec.Interactive passes the permission mode, the model
// and the prompt as arguments and FOO=bar as extra environment.
func interactiveBackend(t *testing.T, script string, opts *agentcli.Options) agentcli.Backend {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cli")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := testSpec()
	spec.Interactive = func(_ context.Context, r *Run) (*Job, error) {
		if r.Req.Permission == agentcli.PermissionDeny {
			return nil, &agentcli.UnsupportedError{Backend: "b", Feature: "permission mode deny"}
		}
		if r.Req.MaxTurns > 0 {
			if err := r.Unsupported("max turns"); err != nil {
				return nil, err
			}
		}
		return &Job{Args: []string{"perm=" + string(r.Req.Permission), "model=" + r.Req.Model, "--", r.Req.Prompt}, Env: []string{"FOO=bar"}}, nil
	}
	o := agentcli.Options{}
	if opts != nil {
		o = *opts
	}
	o.Path = path
	return New(spec, &o)
}

// The CLI gets the terminal as stdin, stdout and stderr, the arguments
// Spec.Interactive built, the run's directory and environment; its exit
// status is returned with a nil error. PermissionAsk needs no
// OnPermission here.
func TestInteractiveRuns(t *testing.T) {
	b := interactiveBackend(t, `[ -t 0 ] && [ -t 1 ] && [ -t 2 ] || exit 9
printf 'ARGS:'; printf '%s|' "$@"; echo; echo "PWD:$(pwd) FOO:$FOO REQ:$REQ"; exit 3`, nil)
	pty := ptytest.New(t, 24, 80)
	dir := t.TempDir()
	code, err := agentcli.Interactive(context.Background(), b, &agentcli.Request{
		Prompt: "-x hello", Model: "m1", Dir: dir, Env: []string{"REQ=1"}, Permission: agentcli.PermissionAsk,
	}, &agentcli.Terminal{Stdin: pty.Slave, Stdout: pty.Slave, Stderr: pty.Slave})
	if code != 3 || err != nil {
		t.Fatalf("Interactive = %d, %v; want 3, nil", code, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := "ARGS:perm=ask|model=m1|--|-x hello|"
	if _, err := pty.WaitFor(ctx, 0, want); err != nil {
		t.Error(err)
	}
	if _, err := pty.WaitFor(ctx, 0, "PWD:"+dir+" FOO:bar REQ:1"); err != nil {
		t.Error(err)
	}
}

func TestInteractiveErrors(t *testing.T) {
	pty := ptytest.New(t, 24, 80)
	term := &agentcli.Terminal{Stdin: pty.Slave, Stdout: pty.Slave}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	noTerm := &agentcli.Terminal{Stdin: devnull, Stdout: devnull}
	var logs bytes.Buffer
	b := interactiveBackend(t, "exit 0", &agentcli.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	strict := interactiveBackend(t, "exit 0", &agentcli.Options{Strict: true})
	cases := []struct {
		name  string
		b     agentcli.Backend
		req   *agentcli.Request
		term  *agentcli.Terminal
		want  error
		field string
	}{
		{"stdin not a terminal", b, nil, &agentcli.Terminal{Stdin: devnull, Stdout: pty.Slave}, agentcli.ErrBadRequest, "Terminal.Stdin"},
		{"stdout not a terminal", b, nil, &agentcli.Terminal{Stdin: pty.Slave, Stdout: devnull}, agentcli.ErrBadRequest, "Terminal.Stdout"},
		{"NUL in prompt", b, &agentcli.Request{Prompt: "a\x00b"}, term, agentcli.ErrBadRequest, "Prompt"},
		{"prompt over one argument", b, &agentcli.Request{Prompt: strings.Repeat("x", MaxArgLen+1)}, term, agentcli.ErrBadRequest, "Prompt"},
		{"bad dir", b, &agentcli.Request{Dir: "/nonexistent/dir"}, term, agentcli.ErrBadRequest, "Dir"},
		{"unknown permission mode", b, &agentcli.Request{Permission: "sometimes"}, term, agentcli.ErrBadRequest, "Permission"},
		{"mode the UI lacks", b, &agentcli.Request{Permission: agentcli.PermissionDeny}, term, agentcli.ErrUnsupported, ""},
		{"strict", strict, &agentcli.Request{MaxTurns: 3}, term, agentcli.ErrUnsupported, ""},
		{"no interactive mode", New(testSpec(), nil), nil, term, agentcli.ErrUnsupported, ""},
		// What the backend cannot run as asked is reported as such,
		// before the terminal is looked at.
		{"mode the UI lacks, no terminal", b, &agentcli.Request{Permission: agentcli.PermissionDeny}, noTerm, agentcli.ErrUnsupported, ""},
		{"strict, no terminal", strict, &agentcli.Request{MaxTurns: 3}, noTerm, agentcli.ErrUnsupported, ""},
		{"unknown permission mode, no terminal", b, &agentcli.Request{Permission: "sometimes"}, noTerm, agentcli.ErrBadRequest, "Permission"},
		{"bad dir, no terminal", b, &agentcli.Request{Dir: "/nonexistent/dir"}, noTerm, agentcli.ErrBadRequest, "Dir"},
		{"no interactive mode, no terminal", New(testSpec(), nil), nil, noTerm, agentcli.ErrUnsupported, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, err := agentcli.Interactive(context.Background(), c.b, c.req, c.term)
			if code != -1 || !errors.Is(err, c.want) {
				t.Fatalf("Interactive = %d, %v; want -1 and %v", code, err, c.want)
			}
			var re *agentcli.RequestError
			if c.field != "" && (!errors.As(err, &re) || re.Field != c.field) {
				t.Errorf("error %v does not name field %s", err, c.field)
			}
		})
	}
	// Capabilities say which backends have an interactive mode.
	if !b.Capabilities().Interactive || New(testSpec(), nil).Capabilities().Interactive {
		t.Errorf("Capabilities().Interactive: %v with Spec.Interactive, %v without",
			b.Capabilities().Interactive, New(testSpec(), nil).Capabilities().Interactive)
	}
	// Without Strict, an option the UI cannot honour is a warning.
	if code, err := agentcli.Interactive(context.Background(), b, &agentcli.Request{MaxTurns: 3}, term); code != 0 || err != nil {
		t.Fatalf("Interactive = %d, %v", code, err)
	}
	if !strings.Contains(logs.String(), "max turns in interactive mode") {
		t.Errorf("no warning logged: %s", logs.String())
	}
}

// Request.Timeout ends the session with a *TimeoutError; cancelling the
// context with a *CanceledError; both within the kill grace.
func TestInteractiveStopped(t *testing.T) {
	for _, timeout := range []bool{false, true} {
		b := interactiveBackend(t, `trap '' TERM; echo READY; sleep 60 & wait`, &agentcli.Options{KillGrace: 200 * time.Millisecond})
		pty := ptytest.New(t, 24, 80)
		ctx, cancel := context.WithCancel(context.Background())
		req := &agentcli.Request{}
		if timeout {
			req.Timeout = time.Second
		} else {
			go func() {
				wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer wcancel()
				pty.WaitFor(wctx, 0, "READY")
				cancel()
			}()
		}
		start := time.Now()
		code, err := agentcli.Interactive(ctx, b, req, &agentcli.Terminal{Stdin: pty.Slave, Stdout: pty.Slave})
		cancel()
		want := agentcli.ErrCanceled
		if timeout {
			want = agentcli.ErrTimeout
		}
		if code != -1 || !errors.Is(err, want) {
			t.Errorf("timeout=%v: Interactive = %d, %v; want -1 and %v", timeout, code, err, want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("timeout=%v: Interactive took %v", timeout, d)
		}
	}
}

// A CLI killed by a signal agentcli did not send is an *ExitError.
func TestInteractiveKilled(t *testing.T) {
	b := interactiveBackend(t, `kill -KILL $$`, nil)
	pty := ptytest.New(t, 24, 80)
	code, err := agentcli.Interactive(context.Background(), b, nil, &agentcli.Terminal{Stdin: pty.Slave, Stdout: pty.Slave})
	var xe *agentcli.ExitError
	if code != -1 || !errors.As(err, &xe) || xe.Code != -1 {
		t.Fatalf("Interactive = %d, %v; want -1 and an *ExitError", code, err)
	}
}

// The debug log shows the argv with the first message replaced by its
// length, as a run's prompt is.
func TestInteractiveLogElidesPrompt(t *testing.T) {
	var logs bytes.Buffer
	b := interactiveBackend(t, "exit 0", &agentcli.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	pty := ptytest.New(t, 24, 80)
	prompt := "start " + strings.Repeat("very long first message ", 20) + "END-OF-PROMPT"
	if code, err := agentcli.Interactive(context.Background(), b, &agentcli.Request{Prompt: prompt}, &agentcli.Terminal{Stdin: pty.Slave, Stdout: pty.Slave}); code != 0 || err != nil {
		t.Fatalf("Interactive = %d, %v", code, err)
	}
	if !strings.Contains(logs.String(), "starting CLI") || strings.Contains(logs.String(), "END-OF-PROMPT") || strings.Contains(logs.String(), "very long first") || !strings.Contains(logs.String(), fmt.Sprintf("<prompt: %d bytes>", len(prompt))) {
		t.Errorf("log:\n%s", logs.String())
	}
}
