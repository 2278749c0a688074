//go:build unix

package conformance

import (
	"context"
	"errors"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// TestToolLists: Request.AllowedTools and DisallowedTools restrict what
// the agent may use, on every CLI, in every mode, one-shot and live; and
// the zero permission mode refuses what would need approval. The scripted
// model asks for a shell command that creates a marker file: it must
// never exist where the request does not allow the shell, and it must
// exist where it does (so that the check can fail). A refused call must
// reach the model, which goes on to answer.
func TestToolLists(t *testing.T) {
	for _, cli := range []string{"qwen", "opencode", "gemini", "claude", "codex", "copilot"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			b := openBackend(t, cli, nil)
			if !b.Capabilities().ToolFilter {
				t.Fatal("Capabilities().ToolFilter = false")
			}
			cases := []struct {
				name                string
				mode                agentcli.PermissionMode
				allowed, disallowed []string
				runs                bool
			}{
				{"zero mode refuses the shell", "", nil, nil, false},
				{"deny refuses the shell", agentcli.PermissionDeny, nil, nil, false},
				{"only reading", agentcli.PermissionBypass, []string{"Read"}, nil, false},
				{"reading and the shell", agentcli.PermissionBypass, []string{"Read", "Bash"}, nil, true},
				{"the shell approved in advance", "", []string{"Read", "Bash"}, nil, true},
				{"the shell disallowed", agentcli.PermissionBypass, nil, []string{"Bash"}, false},
				{"allowed and disallowed", agentcli.PermissionBypass, []string{"Read", "Bash"}, []string{"bash"}, false},
				{"the CLI's own names", agentcli.PermissionBypass, []string{ownShell[cli]}, nil, true},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					e := newEnv(t, cli, agentclitest.Turn{Shell: "touch MARKER"}, agentclitest.Turn{Text: "went on"})
					req, tag := e.request("Create the marker.")
					req.Permission, req.AllowedTools, req.DisallowedTools = c.mode, c.allowed, c.disallowed
					res, _, err := run(t, b, req, tag)
					checkMarker(t, e, res, err, c.runs)
				})
			}
			t.Run("pattern", func(t *testing.T) {
				e := newEnv(t, cli, agentclitest.Turn{Shell: "touch MARKER"}, agentclitest.Turn{Text: "went on"})
				req, tag := e.request("Create the marker.")
				req.Permission, req.AllowedTools = agentcli.PermissionBypass, []string{"Read", "Bash(git *)"}
				res, _, err := run(t, b, req, tag)
				if cli == "codex" {
					// codex has no per-command rules: refused before
					// anything starts.
					if !errors.Is(err, agentcli.ErrUnsupported) || len(e.srv.Requests()) != 0 {
						t.Fatalf("Run = %s with %d model calls; want an UnsupportedError and none", errSummary(err), len(e.srv.Requests()))
					}
					return
				}
				checkMarker(t, e, res, err, false)
			})
			t.Run("live", func(t *testing.T) {
				for _, allowed := range [][]string{{"Read"}, {"Read", "Bash"}} {
					e := newEnv(t, cli, agentclitest.Turn{Shell: "touch MARKER"}, agentclitest.Turn{Text: "went on"})
					req, tag := e.liveRequest()
					req.Permission, req.AllowedTools = agentcli.PermissionBypass, allowed
					s := liveSession(t, b, req, tag)
					res, err := s.Run(context.Background(), "Create the marker.")
					checkMarker(t, e, res, err, len(allowed) == 2)
					s.Close()
				}
			})
		})
	}
}

// ownShell is each CLI's own name of its shell tool.
var ownShell = map[string]string{"claude": "Bash", "codex": "exec_command", "gemini": "run_shell_command", "opencode": "bash", "qwen": "run_shell_command", "copilot": "bash"}

// checkMarker checks a run whose model asked to touch MARKER: it
// succeeded, the file exists exactly when the shell was allowed, and a
// refused call reached the model, which answered (opencode ends a run at
// a refusal it was asked about, but a tool it does not have is refused
// like on the other CLIs).
func checkMarker(t *testing.T, e *env, res *agentcli.Result, err error, runs bool) {
	t.Helper()
	if err != nil {
		t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
	}
	if got := fileExists(e.w.Dir, "MARKER"); got != runs {
		t.Fatalf("MARKER exists = %v, want %v", got, runs)
	}
	main := e.main()
	if len(main) < 2 || len(main[1].ToolResults) == 0 {
		t.Fatalf("the tool call's outcome did not reach the model: %s", describe(e.srv.Requests()))
	}
	if res.Text != "went on" {
		t.Errorf("Result.Text = %q, want %q", res.Text, "went on")
	}
	if !runs {
		t.Logf("the model heard: %s", shorten(main[1].ToolResults[len(main[1].ToolResults)-1].Output))
	}
}
