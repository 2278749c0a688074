package codex

import (
	"errors"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
)

// The argv of the interactive UI; the conformance suite runs it against
// the real binary (TestInteractive).
func TestInteractiveArgs(t *testing.T) {
	const id = "019a0000-0000-7000-8000-000000000000"
	cases := []struct {
		name string
		req  agentcli.Request
		dir  string
		want []string
	}{
		// The zero value lets the UI ask the person at the terminal.
		{"zero", agentcli.Request{}, "", []string{"--no-daemon", "--ask-for-approval=on-request"}},
		{"bypass", agentcli.Request{Permission: agentcli.PermissionBypass}, "", []string{"--no-daemon", "--dangerously-bypass-approvals-and-sandbox"}},
		// An allow list without the patch tool or the shell: codex's
		// read-only sandbox instead of none.
		{"bypass read-only list", agentcli.Request{Permission: agentcli.PermissionBypass, AllowedTools: []string{"Read"}}, "",
			[]string{"--no-daemon", "--ask-for-approval=never", "--sandbox=read-only", "-c", "features.shell_tool=false", "-c", `web_search="disabled"`,
				"-c", "features.multi_agent=false", "-c", "features.multi_agent_v2=false", "-c", "features.goals=false", "-c", "features.image_generation=false"}},
		{"ask", agentcli.Request{Permission: agentcli.PermissionAsk}, "", []string{"--no-daemon", "--ask-for-approval=on-request"}},
		{"prompt", agentcli.Request{Prompt: "exec", Model: "-m", SystemPrompt: "be brief", Permission: agentcli.PermissionBypass}, "/w",
			[]string{"--no-daemon", "--dangerously-bypass-approvals-and-sandbox", "--cd=/w", "--model=-m", "-c", `developer_instructions="be brief"`, "--", "exec"}},
		{"system on the command line", agentcli.Request{SystemPrompt: "a \"b\"", Permission: agentcli.PermissionBypass}, "",
			[]string{"--no-daemon", "--dangerously-bypass-approvals-and-sandbox", "-c", `developer_instructions="a \"b\""`}},
		{"resume", agentcli.Request{SessionID: id, Prompt: "--help", ExtraArgs: []string{"--search"}, Permission: agentcli.PermissionBypass}, "",
			[]string{"resume", "--no-daemon", "--dangerously-bypass-approvals-and-sandbox", "--search", "--", id, "--help"}},
		{"resume without prompt", agentcli.Request{SessionID: id, Permission: agentcli.PermissionBypass}, "",
			[]string{"resume", "--no-daemon", "--dangerously-bypass-approvals-and-sandbox", "--", id}},
		{"settings on the command line", agentcli.Request{Effort: agentcli.EffortLow, Permission: agentcli.PermissionBypass,
			MCPServers: []agentcli.MCPServer{{Name: "fs", Command: "mcp-fs"}}}, "",
			[]string{"--no-daemon", "--dangerously-bypass-approvals-and-sandbox", "-c", "mcp_servers.fs.required=true", "-c", "mcp_servers.fs.startup_timeout_sec=60", "-c", `mcp_servers.fs.command="mcp-fs"`, "-c", `model_reasoning_effort="low"`}},
	}
	for _, c := range cases {
		got, err := interactiveArgs(&c.req, c.dir)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: interactiveArgs = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	for _, m := range []agentcli.PermissionMode{agentcli.PermissionPlan, agentcli.PermissionDeny} {
		if _, err := interactiveArgs(&agentcli.Request{Permission: m}, ""); !errors.Is(err, agentcli.ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", m, err)
		}
	}
}
