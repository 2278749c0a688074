package claude

import (
	"errors"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
)

// The argv of the interactive UI; the conformance suite runs it against
// the real binary (TestInteractive).
func TestInteractiveArgs(t *testing.T) {
	cases := []struct {
		name string
		req  agentcli.Request
		sys  string
		want []string
	}{
		// The zero value lets the UI ask the person at the terminal.
		{"zero", agentcli.Request{}, "", []string{"--permission-mode=default"}},
		{"bypass", agentcli.Request{Permission: agentcli.PermissionBypass}, "", []string{"--dangerously-skip-permissions"}},
		// An allow list approves its rules and refuses the rest, bypass
		// or not.
		{"bypass allow list", agentcli.Request{Permission: agentcli.PermissionBypass, AllowedTools: []string{"read"}}, "",
			[]string{"--permission-mode=dontAsk", "--tools=Read", "--allowedTools=Read"}},
		{"ask", agentcli.Request{Permission: agentcli.PermissionAsk}, "", []string{"--permission-mode=default"}},
		{"plan", agentcli.Request{Permission: agentcli.PermissionPlan}, "", []string{"--permission-mode=plan"}},
		{"deny", agentcli.Request{Permission: agentcli.PermissionDeny}, "", []string{"--permission-mode=dontAsk"}},
		{"full", agentcli.Request{
			Prompt: "--help me", SessionID: "387144c4-c3b7-4733-aa27-be4c71200f23", Model: "-m",
			AllowedTools: []string{"Bash(git *)"}, DisallowedTools: []string{"Write"}, ExtraArgs: []string{"--verbose"},
			Permission: agentcli.PermissionBypass,
		}, "/tmp/s.md", []string{
			"--permission-mode=dontAsk", "--append-system-prompt-file=/tmp/s.md",
			"--resume=387144c4-c3b7-4733-aa27-be4c71200f23", "--tools=Bash", "--allowedTools=Bash(git *)", "--disallowedTools=Write",
			"--model=-m", "--verbose", "--", "--help me",
		}},
		// One word could name a subcommand, which commander dispatches
		// even after "--".
		{"word", agentcli.Request{Prompt: "mcp"}, "", []string{"--permission-mode=default", "--", "mcp "}},
		{"flag word", agentcli.Request{Prompt: "--version"}, "", []string{"--permission-mode=default", "--", "--version "}},
	}
	for _, c := range cases {
		got, err := interactiveArgs(&c.req, c.sys, "")
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: interactiveArgs = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	settings := agentcli.Request{FallbackModel: "-f", Effort: agentcli.EffortHigh, Permission: agentcli.PermissionBypass}
	got, err := interactiveArgs(&settings, "", "/tmp/mcp.json")
	want := []string{"--dangerously-skip-permissions", "--fallback-model=-f", "--effort=high", "--mcp-config=/tmp/mcp.json", "--strict-mcp-config"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("settings: interactiveArgs = %q, %v; want %q", got, err, want)
	}
	if _, err := interactiveArgs(&agentcli.Request{Permission: "sometimes"}, "", ""); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("unknown mode: err = %v", err)
	}
}
