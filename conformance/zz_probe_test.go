//go:build unix

package conformance

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/mcptest"
)

func TestZZProbeWire(t *testing.T) {
	tool := mcpToolName("copilot", "probe-srv", mcptest.ToolProbe)
	e := newEnv(t, "copilot", agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: tool}}, agentclitest.Turn{Text: "refused"}, agentclitest.Turn{Text: "next"})
	b := openBackend(t, "copilot", nil)
	servers, _, _, _ := liveMCPServers(t)
	req, tag := e.liveRequest()
	req.MCPServers = servers[:1]
	req.Permission = agentcli.PermissionAsk
	req.AllowedTools = []string{"Read", "mcp__probe-srv"}
	req.OnPermission = func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{Kind: agentcli.RejectOnce}
	}
	var log bytes.Buffer
	req.WireLog = &log
	s := liveSession(t, b, req, tag)
	res, err := s.Run(context.Background(), "call the probe")
	t.Logf("%q %v", res.Text, err)
	s.Close()
	os.WriteFile("/tmp/zzwire.log", log.Bytes(), 0o644)
}
