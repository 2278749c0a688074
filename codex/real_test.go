package codex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// realCodex returns the pinned codex binary, and reports whether the test
// ran elsewhere: call it first, and return when it says so. A missing
// binary skips the test, or fails it under CI=true. With a network
// interface up, the test is run again in a private network namespace
// (backendtest.RunIsolated), or fails under CI=true when none can be made:
// real codex runs never see more than loopback.
func realCodex(t *testing.T) (bin string, ranElsewhere bool) {
	t.Helper()
	bin, err := filepath.Abs("../tools/clis/node_modules/.bin/codex")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		backendtest.SkipUnlessCI(t, "pinned codex not installed (scripts/install-clis.sh)")
	}
	return bin, backendtest.RunIsolated(t)
}

// realBackend returns a backend running bin against srv, and the working
// directory Wire made.
func realBackend(t *testing.T, bin string, srv *agentclitest.Server) (agentcli.Backend, string) {
	t.Helper()
	home, err := os.MkdirTemp("", "agentcli-codex-real-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	w, err := srv.Wire("codex", home)
	if err != nil {
		t.Fatal(err)
	}
	return New(&agentcli.Options{Path: bin, Env: w.Env}), w.Dir
}

func developerMessages(r agentclitest.ModelRequest) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "developer" {
			out = append(out, m.Text)
		}
	}
	return out
}

// TestRealSystemPrompt: a system prompt full of TOML and argv hazards
// reaches the model as a developer message, byte for byte.
func TestRealSystemPrompt(t *testing.T) {
	bin, elsewhere := realCodex(t)
	if elsewhere {
		return
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "ok"})
	defer srv.Close()
	b, dir := realBackend(t, bin, srv)
	sys := "Be \"brief\" and 'exact'.\x00nul\nPaths: C:\\dir\\ and \\u0041 (not A).\r\n\ttab, \x01 \x1b[0m \x7f, " +
		"café 😀 \u2028 \"\"\" ''' # [table] key = \"v\"\n-- --help -c x=y\n\\"
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", SystemPrompt: sys, Dir: dir, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "ok" {
		t.Fatalf("text %q", res.Text)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || !slices.Contains(developerMessages(reqs[0]), sys) {
		var got []string
		if len(reqs) > 0 {
			got = developerMessages(reqs[0])
		}
		t.Fatalf("no developer message equals the system prompt %q; got %q", sys, got)
	}
	if reqs[0].LastUserText() != "hi" {
		t.Fatalf("prompt %q", reqs[0].LastUserText())
	}
}

// TestRealToolAndResume: a real shell command, then a resume from another
// directory that sees the history and reports thread-cumulative usage.
func TestRealToolAndResume(t *testing.T) {
	bin, elsewhere := realCodex(t)
	if elsewhere {
		return
	}
	srv := agentclitest.NewServer(
		agentclitest.Turn{Shell: "echo hi"},
		agentclitest.Turn{Text: "It printed hi."},
		agentclitest.Turn{Text: "Still here."},
	)
	defer srv.Close()
	b, dir := realBackend(t, bin, srv)
	evs, err := backendtest.Collect(context.Background(), b, &agentcli.Request{Prompt: "--help: run it", Dir: dir, Model: "mock-model", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var use *agentcli.ToolUse
	var result *agentcli.ToolResult
	for _, ev := range evs {
		switch ev.Kind {
		case agentcli.EventToolUse:
			use = ev.Tool
		case agentcli.EventToolResult:
			result = ev.ToolResult
		}
	}
	if use == nil || use.Name != agentcli.ToolNameBash || !strings.Contains(string(use.Input), "echo hi") {
		t.Fatalf("tool use %+v", use)
	}
	if result == nil || result.ID != use.ID || result.Output != "hi\n" || result.IsError || result.ExitCode == nil || *result.ExitCode != 0 {
		t.Fatalf("tool result %+v", result)
	}
	first := evs[len(evs)-1].Result
	if first.Text != "It printed hi." || first.Usage.Cumulative || first.Usage.InputTokens != 20 {
		t.Fatalf("first result %+v", first)
	}
	reqs := srv.Requests()
	if reqs[0].Model != "mock-model" || reqs[0].LastUserText() != "--help: run it" {
		t.Fatalf("model %q prompt %q", reqs[0].Model, reqs[0].LastUserText())
	}

	other := t.TempDir()
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "and now?", SessionID: first.SessionID, Dir: other, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionID != first.SessionID || res.Text != "Still here." || !res.Usage.Cumulative || res.Usage.InputTokens != 30 {
		t.Fatalf("resumed result %+v", res)
	}
	last := srv.Requests()[len(srv.Requests())-1]
	var texts []string
	for _, m := range last.Messages {
		texts = append(texts, m.Text)
	}
	if !slices.Contains(texts, "--help: run it") || !slices.Contains(texts, "It printed hi.") || last.LastUserText() != "and now?" {
		t.Fatalf("the resumed request lacks the history: %q", texts)
	}
}

// TestRealErrors: retries that recover, an unknown thread id, and an API
// error.
func TestRealErrors(t *testing.T) {
	t.Run("retry", func(t *testing.T) {
		bin, elsewhere := realCodex(t)
		if elsewhere {
			return
		}
		srv := agentclitest.NewServer(agentclitest.Turn{Status: 502}, agentclitest.Turn{Text: "recovered"})
		defer srv.Close()
		b, dir := realBackend(t, bin, srv)
		evs, err := backendtest.Collect(context.Background(), b, &agentcli.Request{Prompt: "hi", Dir: dir, Timeout: time.Minute,
			ExtraArgs: []string{"-c", "model_providers.agentclitest.stream_max_retries=2"}})
		if err != nil {
			t.Fatal(err)
		}
		var retry *agentcli.Retry
		for _, ev := range evs {
			if ev.Kind == agentcli.EventRetry {
				retry = ev.Retry
			}
		}
		if retry == nil || retry.Attempt != 1 || retry.MaxRetries != 2 || retry.Status != 502 {
			t.Fatalf("retry %+v", retry)
		}
		if r := evs[len(evs)-1].Result; r == nil || r.Text != "recovered" {
			t.Fatalf("last event %+v", evs[len(evs)-1])
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		bin, elsewhere := realCodex(t)
		if elsewhere {
			return
		}
		srv := agentclitest.NewServer()
		defer srv.Close()
		b, dir := realBackend(t, bin, srv)
		_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", Dir: dir, Timeout: time.Minute,
			SessionID: "01a20096-0000-7000-8000-000000000000"})
		var ee *agentcli.ExitError
		if !errors.As(err, &ee) || !errors.Is(err, agentcli.ErrSessionNotFound) || ee.Code != 1 {
			t.Fatalf("err = %v; want *ExitError matching ErrSessionNotFound", err)
		}
	})
	t.Run("401", func(t *testing.T) {
		bin, elsewhere := realCodex(t)
		if elsewhere {
			return
		}
		srv := agentclitest.NewServer(agentclitest.Turn{Status: 401, Repeat: -1})
		defer srv.Close()
		b, dir := realBackend(t, bin, srv)
		res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", Dir: dir, Timeout: time.Minute})
		var re *agentcli.ResultError
		if !errors.As(err, &re) || re.APIStatus != 401 || !errors.Is(err, agentcli.ErrAuth) || res == nil || !res.IsError {
			t.Fatalf("err = %v, res %+v; want a ResultError matching ErrAuth", err, res)
		}
	})
}
