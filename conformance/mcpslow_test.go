//go:build unix

package conformance

import (
	"context"
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
	for _, cli := range []string{"droid"} {
		for _, live := range []bool{false, true} {
			t.Run(modeName(cli, live), func(t *testing.T) {
				t.Parallel()
				tool := mcpToolName(cli, "probe-srv", mcptest.ToolProbe)
				e := newEnv(t, cli, agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: tool}}, agentclitest.Turn{Text: "done"})
				b := openBackend(t, cli, nil)
				servers, logPath, _, _ := liveMCPServers(t)
				var res *agentcli.Result
				var err error
				if live {
					req, tag := e.liveRequest()
					req.MCPServers = []agentcli.MCPServer{slowStart(servers[0])}
					req.Permission = agentcli.PermissionBypass
					s := liveSession(t, b, req, tag)
					res, err = s.Run(context.Background(), "call the probe")
				} else {
					req, tag := e.request("call the probe")
					req.MCPServers = []agentcli.MCPServer{slowStart(servers[0])}
					req.Permission = agentcli.PermissionBypass
					res, _, err = run(t, b, req, tag)
				}
				if err != nil {
					t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
				}
				if res.Text != "done" {
					t.Errorf("Text = %q", res.Text)
				}
				checkStdioCall(t, e, tool, logPath)
			})
		}
	}
}
