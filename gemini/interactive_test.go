package gemini

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
		want []string
	}{
		// The zero value lets the UI ask the person at the terminal.
		{"zero", agentcli.Request{}, []string{"--approval-mode=default"}},
		{"bypass", agentcli.Request{Permission: agentcli.PermissionBypass}, []string{"--approval-mode=yolo"}},
		{"ask", agentcli.Request{Permission: agentcli.PermissionAsk}, []string{"--approval-mode=default"}},
		{"plan", agentcli.Request{Permission: agentcli.PermissionPlan}, []string{"--approval-mode=plan"}},
		{"full", agentcli.Request{Prompt: "--help", SessionID: "latest", Model: "-m", ExtraArgs: []string{"-d"}, Permission: agentcli.PermissionBypass},
			[]string{"--approval-mode=yolo", "--resume=latest", "--model=-m", "-d", "--prompt-interactive=--help"}},
		// The system prompt is prepended, and what gemini would act on
		// is escaped, as in a run.
		{"system", agentcli.Request{Prompt: "read @README.md", SystemPrompt: "be brief", Permission: agentcli.PermissionBypass},
			[]string{"--approval-mode=yolo", "--prompt-interactive=be brief\n\nread \\@README.md"}},
		{"slash", agentcli.Request{Prompt: "/quit", Permission: agentcli.PermissionBypass}, []string{"--approval-mode=yolo", "--prompt-interactive= /quit"}},
	}
	for _, c := range cases {
		got, err := interactiveArgs(&c.req)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: interactiveArgs = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	for _, req := range []agentcli.Request{
		{Permission: agentcli.PermissionDeny},
		{SystemPrompt: "no first message to carry it"},
	} {
		if _, err := interactiveArgs(&req); !errors.Is(err, agentcli.ErrUnsupported) {
			t.Errorf("%+v: err = %v, want ErrUnsupported", req, err)
		}
	}
}
