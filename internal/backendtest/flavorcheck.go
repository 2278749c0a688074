package backendtest

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// FlavorCase is an argv whose meaning was established with the real CLI,
// stated as what the fake's parser must conclude and what the real CLI does,
// so that CheckFlavor can hold both to it.
type FlavorCase struct {
	Name string
	// Args is the argv after the program name; Stdin the CLI's input.
	Args  []string
	Stdin string

	// FakeErr: the fake's parser rejects Args. Otherwise Values are option
	// values it must find (by the name it records them under), Absent
	// options it must not find, and Positional, when not nil, its
	// positional words.
	FakeErr    bool
	Values     map[string][]string
	Absent     []string
	Positional []string

	// Exit is the real CLI's exit status (-1: any non-zero). Stderr, when
	// set, is a piece of its stderr. Model and Prompt, when set, are the
	// model the scripted server was asked for and a piece of the last user
	// message, PromptIs all of it; NoRequest says the CLI must not reach
	// the server at all.
	Exit      int
	Stderr    string
	Model     string
	Prompt    string
	PromptIs  string
	NoRequest bool
}

// CheckFlavor runs every case through the fake flavor of cli and through
// the real CLI at bin, hermetically: in a private network namespace
// (RunIsolated), against a scripted model server wired with Server.Wire, in
// a fresh home per case. It is how the fake's grammar is kept honest.
func CheckFlavor(t *testing.T, cli, bin string, cases []FlavorCase) {
	t.Helper()
	if RunIsolated(t) {
		return
	}
	fl := fakecli.Flavors[cli]
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			p, err := fl.Parse(c.Args)
			if err == nil && fl.Validate != nil {
				if msg := fl.Validate(p.Values, p.Positional); msg != "" {
					err = errors.New(msg)
				}
			}
			switch {
			case c.FakeErr && err == nil:
				t.Errorf("fake: accepts %q (%v); the real CLI does not", c.Args, p.Values)
			case !c.FakeErr && err != nil:
				t.Errorf("fake: rejects %q: %v", c.Args, err)
			case err == nil:
				for k, want := range c.Values {
					if got := p.Values[k]; !slices.Equal(got, want) {
						t.Errorf("fake: %s = %q, want %q", k, got, want)
					}
				}
				for _, k := range c.Absent {
					if p.Values[k] != nil {
						t.Errorf("fake: %s = %q, want no such option", k, p.Values[k])
					}
				}
				if c.Positional != nil && !slices.Equal(p.Positional, c.Positional) {
					t.Errorf("fake: positional %q, want %q", p.Positional, c.Positional)
				}
			}

			srv := agentclitest.NewServer(agentclitest.Turn{Text: "ok", Repeat: -1})
			defer srv.Close()
			w, werr := srv.Wire(cli, t.TempDir())
			if werr != nil {
				t.Fatal(werr)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, c.Args...)
			cmd.Env, cmd.Dir = w.Env, w.Dir
			cmd.Stdin = strings.NewReader(c.Stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			rerr := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(rerr, &ee) {
				code = ee.ExitCode()
			} else if rerr != nil {
				t.Fatalf("real: %v", rerr)
			}
			where := func() string {
				return "\nargs " + strings.Join(c.Args, " ") + "\nstderr: " + stderr.String() + "\nstdout: " + truncate(stdout.String())
			}
			if c.Exit == -1 && code == 0 || c.Exit != -1 && code != c.Exit {
				t.Errorf("real: exit %d, want %d%s", code, c.Exit, where())
			}
			if c.Stderr != "" && !strings.Contains(stderr.String(), c.Stderr) {
				t.Errorf("real: stderr lacks %q%s", c.Stderr, where())
			}
			var main []agentclitest.ModelRequest
			for _, r := range srv.Requests() {
				if !r.Utility {
					main = append(main, r)
				}
			}
			if c.NoRequest && len(main) > 0 {
				t.Errorf("real: reached the server (%d requests)%s", len(main), where())
			}
			if c.Model != "" || c.Prompt != "" || c.PromptIs != "" {
				if len(main) == 0 {
					t.Fatalf("real: no request reached the server%s", where())
				}
				last := main[len(main)-1]
				if c.Model != "" && last.Model != c.Model {
					t.Errorf("real: model %q, want %q", last.Model, c.Model)
				}
				if c.Prompt != "" && !strings.Contains(last.LastUserText(), c.Prompt) {
					t.Errorf("real: prompt %q lacks %q", last.LastUserText(), c.Prompt)
				}
				if c.PromptIs != "" && last.LastUserText() != c.PromptIs {
					t.Errorf("real: prompt %q, want %q", last.LastUserText(), c.PromptIs)
				}
			}
		})
	}
}

func truncate(s string) string {
	if len(s) > 2000 {
		return s[:1000] + " … " + s[len(s)-1000:]
	}
	return s
}
