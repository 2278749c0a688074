package claude

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// The live goldens hold the flags verified against claude 2.1.330 (see the
// comment at the top of live.go): a live session's argv is a streaming
// one-shot run's (prepareArgs with deltas). The conformance suite
// runs them for real.
func TestLiveArgsGolden(t *testing.T) {
	cases := []struct {
		name string
		req  agentcli.Request
		sys  string
		mcp  string
	}{
		{"live-zero", agentcli.Request{}, "", ""},
		{"live-bypass", agentcli.Request{Permission: agentcli.PermissionBypass}, "", ""},
		{"live-bypass-allowed", agentcli.Request{Permission: agentcli.PermissionBypass,
			AllowedTools: []string{"bash(git *)", "Read", "mcp__docs__search"}, DisallowedTools: []string{"task"},
			MCPServers: []agentcli.MCPServer{{Name: "docs", Command: "docs-server"}, {Name: "shell", Command: "shell-server"}},
		}, "", "/tmp/agentcli-run-1/mcp.json"},
		{"live-ask", agentcli.Request{Permission: agentcli.PermissionAsk}, "", ""},
		{"live-deny", agentcli.Request{Permission: agentcli.PermissionDeny}, "", ""},
		{"live-plan", agentcli.Request{Permission: agentcli.PermissionPlan}, "", ""},
		{"live-full", agentcli.Request{
			SessionID: "387144c4-c3b7-4733-aa27-be4c71200f23", Model: "claude-sonnet-4-5", MaxTurns: 7,
			AllowedTools: []string{"Read"}, DisallowedTools: []string{"WebFetch"}, ExtraArgs: []string{"--effort", "low"},
			Permission: agentcli.PermissionAsk,
		}, "/tmp/agentcli-claude-system-1.md", ""},
		{"live-settings", agentcli.Request{
			Permission: agentcli.PermissionAsk, Effort: agentcli.EffortHigh, FallbackModel: "claude-haiku-4-5",
			MaxBudgetUSD: 0.25, OutputSchema: json.RawMessage(`{"type": "object"}`),
			MCPServers: []agentcli.MCPServer{{Name: "probe", Command: "probe-server"}},
		}, "", "/tmp/agentcli-run-1/mcp.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backendtest.GoldenArgs(t, c.name, buildArgsMCP(&c.req, true, c.sys, c.mcp))
		})
	}
}

// allow_always keeps claude's own addRules suggestions, for this session
// only; the other suggestions (a mode switch, extra directories) are
// dropped, since they would allow far more than the call.
func TestSessionRules(t *testing.T) {
	sugg := []json.RawMessage{
		json.RawMessage(`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch M1"}],"behavior":"allow","destination":"localSettings"}`),
		json.RawMessage(`{"type":"addDirectories","directories":["/w"],"destination":"session"}`),
		json.RawMessage(`{"type":"setMode","mode":"acceptEdits","destination":"session"}`),
		json.RawMessage(`not json`),
	}
	got, _ := json.Marshal(sessionRules("Bash", sugg))
	want := `[{"behavior":"allow","destination":"session","rules":[{"ruleContent":"touch M1","toolName":"Bash"}],"type":"addRules"}]`
	if string(got) != want {
		t.Errorf("sessionRules = %s\nwant %s", got, want)
	}
	got, _ = json.Marshal(sessionRules("Write", nil))
	want = `[{"behavior":"allow","destination":"session","rules":[{"toolName":"Write"}],"type":"addRules"}]`
	if string(got) != want {
		t.Errorf("sessionRules without suggestions = %s\nwant %s", got, want)
	}
}

// realBackend returns the pinned claude and a request wired to srv. The
// calling test must have called backendtest.RunIsolated.
func realBackend(t *testing.T, srv *agentclitest.Server) (agentcli.Backend, *agentcli.Request, string) {
	t.Helper()
	return backendtest.RealBackend(t, "claude", srv, New)
}

// A one-shot Run with PermissionAsk goes through a live session: the
// callback is asked, its refusal holds, the run goes on to its result, and
// no file appears.
func TestLiveOneShotAskReal(t *testing.T) {
	if backendtest.RunIsolated(t) {
		return
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Shell: "touch NOPE"}, agentclitest.Turn{Text: "fine"})
	defer srv.Close()
	b, req, dir := realBackend(t, srv)
	req.Prompt = "Touch NOPE."
	req.Permission = agentcli.PermissionAsk
	asked := 0
	req.OnPermission = func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		asked++
		return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "no NOPE"}
	}
	res, err := b.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "fine" || asked != 1 {
		t.Errorf("Result.Text = %q after %d permission requests; want %q after 1", res.Text, asked, "fine")
	}
	if _, err := os.Stat(filepath.Join(dir, "NOPE")); err == nil {
		t.Error("NOPE exists: the refused command ran")
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if len(last.ToolResults) != 1 || !strings.Contains(last.ToolResults[0].Output, "no NOPE") {
		t.Errorf("the model got tool results %+v, want the refusal message", last.ToolResults)
	}
}

// PermissionDeny needs no callback: the call is refused, in a one-shot run
// too.
func TestLiveOneShotDenyReal(t *testing.T) {
	if backendtest.RunIsolated(t) {
		return
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Shell: "touch NOPE"}, agentclitest.Turn{Text: "fine"})
	defer srv.Close()
	b, req, dir := realBackend(t, srv)
	req.Prompt = "Touch NOPE."
	req.Permission = agentcli.PermissionDeny
	res, err := b.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "fine" {
		t.Errorf("Result.Text = %q, want %q", res.Text, "fine")
	}
	if _, err := os.Stat(filepath.Join(dir, "NOPE")); err == nil {
		t.Error("NOPE exists: the command ran under PermissionDeny")
	}
}
