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
		{"zero", agentcli.Request{}, "", []string{"--dangerously-skip-permissions"}},
		{"ask", agentcli.Request{Permission: agentcli.PermissionAsk}, "", []string{"--permission-mode=default"}},
		{"plan", agentcli.Request{Permission: agentcli.PermissionPlan}, "", []string{"--permission-mode=plan"}},
		{"deny", agentcli.Request{Permission: agentcli.PermissionDeny}, "", []string{"--permission-mode=dontAsk"}},
		{"full", agentcli.Request{
			Prompt: "--help me", SessionID: "387144c4-c3b7-4733-aa27-be4c71200f23", Model: "-m",
			AllowedTools: []string{"Bash(git *)"}, DisallowedTools: []string{"Write"}, ExtraArgs: []string{"--verbose"},
		}, "/tmp/s.md", []string{
			"--dangerously-skip-permissions", "--append-system-prompt-file=/tmp/s.md",
			"--resume=387144c4-c3b7-4733-aa27-be4c71200f23", "--allowedTools=Bash(git *)", "--disallowedTools=Write",
			"--model=-m", "--verbose", "--", "--help me",
		}},
		// One word could name a subcommand, which commander dispatches
		// even after "--".
		{"word", agentcli.Request{Prompt: "mcp"}, "", []string{"--dangerously-skip-permissions", "--", "mcp "}},
		{"flag word", agentcli.Request{Prompt: "--version"}, "", []string{"--dangerously-skip-permissions", "--", "--version "}},
	}
	for _, c := range cases {
		got, err := interactiveArgs(&c.req, c.sys, "")
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: interactiveArgs = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	settings := agentcli.Request{FallbackModel: "-f", Effort: agentcli.EffortHigh}
	got, err := interactiveArgs(&settings, "", "/tmp/mcp.json")
	want := []string{"--dangerously-skip-permissions", "--fallback-model=-f", "--effort=high", "--mcp-config=/tmp/mcp.json", "--strict-mcp-config"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("settings: interactiveArgs = %q, %v; want %q", got, err, want)
	}
	if _, err := interactiveArgs(&agentcli.Request{Permission: "sometimes"}, "", ""); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("unknown mode: err = %v", err)
	}
}
