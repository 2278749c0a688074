//go:build unix

package conformance

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/mcptest"
)

// slowStart makes s a stdio MCP server that starts slowDelay late (a
// shell that sleeps, then execs the server with its arguments as they
// were): what a busy machine, or a server that fetches something at
// start, looks like to the CLI.
func slowStart(s agentcli.MCPServer) agentcli.MCPServer {
	s.Args = append([]string{"-c", "sleep " + slowDelay + ` && exec "$0" "$@"`, s.Command}, s.Args...)
	s.Command = "/bin/sh"
	return s
}

// slowDelay is how late slowStart's server starts, in seconds: well
// beyond the time the CLIs take from start to their first model request
// on an idle machine.
const slowDelay = "3"

// TestMCPSlowServer: an MCP server that takes seconds to start is offered
// to the model in the first model request of a run, one-shot (bypass)
// and live (the first turn of a session): a CLI that loads MCP servers in
// the background waits for them before it calls the model, so that a
// first turn that needs an MCP tool (or a host tool) has it.
func TestMCPSlowServer(t *testing.T) {
	for _, cli := range []string{"claude", "codex", "gemini", "opencode", "copilot", "qwen", "droid"} {
		for _, live := range []bool{false, true} {
			t.Run(modeName(cli, live), func(t *testing.T) {
				t.Parallel()
				tool := mcpToolName(cli, "probe-srv", mcptest.ToolProbe)
				e := newEnv(t, cli, agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: tool}}, agentclitest.Turn{Text: "done"})
				b := openBackend(t, cli, nil)
				servers, logPath, _, _ := liveMCPServers(t)
				var evs []agentcli.Event
				var res *agentcli.Result
				var err error
				if live {
					req, tag := e.liveRequest()
					req.MCPServers = []agentcli.MCPServer{slowStart(servers[0])}
					req.Permission = agentcli.PermissionBypass
					s := liveSession(t, b, req, tag)
					evs, res, err = collectTurn(s, context.Background(), "call the probe")
				} else {
					req, tag := e.request("call the probe")
					req.MCPServers = []agentcli.MCPServer{slowStart(servers[0])}
					req.Permission = agentcli.PermissionBypass
					evs, err = stream(t, context.Background(), b, req, tag)
					res = resultOf(evs)
				}
				if err != nil {
					t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
				}
				if res == nil || res.Text != "done" {
					t.Errorf("Result = %+v", res)
				}
				checkStdioCall(t, e, tool, logPath)
				// A server that starts late does start: no notice says
				// otherwise.
				if n := mcpStartNotices(evs, servers[0].Name); len(n) > 0 {
					t.Errorf("notices %q about a server that started", n)
				}
			})
		}
	}
}

// reportsMCPStart reports whether the backend of cli says, with an
// EventNotice, that an MCP server did not start, one-shot or live: those
// whose CLI reports it (claude and qwen in their init line, copilot in
// its JSON output, not over ACP).
func reportsMCPStart(cli string, live bool) bool {
	switch cli {
	case "claude", "qwen":
		return true
	case "copilot":
		return !live
	}
	return false
}

// mcpStartNotices returns the texts of the notices of evs that say the MCP
// server name did not start.
func mcpStartNotices(evs []agentcli.Event, name string) []string {
	var out []string
	for _, ev := range evs {
		if ev.Kind == agentcli.EventNotice && strings.Contains(ev.Text, strconv.Quote(name)) && strings.Contains(ev.Text, "did not start") {
			out = append(out, ev.Text)
		}
	}
	return out
}

// resultOf returns the Result of the EventResult of evs, nil without one.
func resultOf(evs []agentcli.Event) *agentcli.Result {
	for _, ev := range evs {
		if ev.Kind == agentcli.EventResult {
			return ev.Result
		}
	}
	return nil
}

// TestMCPBrokenServer: an MCP server whose command does not exist. codex
// (which agentcli has wait for every server: it marks them required) and
// droid exec (which is given the server's tools by name) fail the run
// with an error that says so; the other CLIs, and a droid session, run
// without the server's tools, and those whose CLI reports it
// (reportsMCPStart) yield one EventNotice that names the server.
// Request.MCPServers documents the same.
func TestMCPBrokenServer(t *testing.T) {
	for _, cli := range []string{"claude", "codex", "gemini", "opencode", "copilot", "qwen", "droid"} {
		for _, live := range []bool{false, true} {
			t.Run(modeName(cli, live), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, cli, agentclitest.Turn{Text: "done"}, agentclitest.Turn{Text: "done"})
				b := openBackend(t, cli, nil)
				broken := agentcli.MCPServer{Name: "broken-srv", Command: filepath.Join(t.TempDir(), "no-such-server")}
				var evs []agentcli.Event
				var res *agentcli.Result
				var err error
				if live {
					req, tag := e.liveRequest()
					req.MCPServers = []agentcli.MCPServer{broken}
					req.Permission = agentcli.PermissionBypass
					var s agentcli.Session
					if s, err = agentcli.StartSession(context.Background(), b, req); err == nil {
						t.Cleanup(func() {
							s.Close()
							assertNoProcs(t, tag)
						})
						evs, res, err = collectTurn(s, context.Background(), "hi")
						if err == nil {
							// A second turn: the session has said it.
							evs2, _, err2 := collectTurn(s, context.Background(), "again")
							if n := mcpStartNotices(evs2, broken.Name); err2 != nil || len(n) > 0 {
								t.Errorf("second turn: notices %q, err %v; want none, nil", n, err2)
							}
						}
					}
				} else {
					req, tag := e.request("hi")
					req.MCPServers = []agentcli.MCPServer{broken}
					req.Permission = agentcli.PermissionBypass
					evs, err = stream(t, context.Background(), b, req, tag)
					res = resultOf(evs)
				}
				var pe *agentcli.ProtocolError
				var ee *agentcli.ExitError
				switch {
				case cli == "codex":
					if !errors.As(err, &pe) || pe.Method != "thread/start" || !strings.Contains(pe.Message, "broken-srv") {
						t.Fatalf("err = %v; want a ProtocolError for thread/start that names the server", err)
					}
				case cli == "droid" && !live:
					if !errors.As(err, &ee) || !strings.Contains(ee.Hint, "MCP server") {
						t.Fatalf("err = %v; want an ExitError whose hint names an MCP server", err)
					}
				case err != nil:
					t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
				case res == nil || res.Text != "done":
					t.Errorf("Result = %+v", res)
				}
				// Where the CLI says so, the program is told, once.
				notices := mcpStartNotices(evs, broken.Name)
				switch {
				case err != nil:
				case reportsMCPStart(cli, live) && len(notices) != 1:
					t.Errorf("notices %q; want one that says broken-srv did not start", notices)
				case !reportsMCPStart(cli, live) && len(notices) != 0:
					t.Errorf("notices %q from a CLI documented as not reporting it", notices)
				}
			})
		}
	}
}
