package opencode

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
		// The zero value lets the TUI ask the person at the terminal.
		{"zero", agentcli.Request{}, nil},
		{"bypass", agentcli.Request{Permission: agentcli.PermissionBypass}, []string{"--auto"}},
		{"ask", agentcli.Request{Permission: agentcli.PermissionAsk}, nil},
		{"deny", agentcli.Request{Permission: agentcli.PermissionDeny}, nil},
		{"plan", agentcli.Request{Permission: agentcli.PermissionPlan}, []string{"--agent=plan"}},
		{"prompt", agentcli.Request{Prompt: "--help", Model: "p/-m", ExtraArgs: []string{"--mini"}, Permission: agentcli.PermissionBypass},
			[]string{"--auto", "--model=p/-m", "--mini", "--prompt=--help"}},
		{"resume", agentcli.Request{SessionID: "ses_abc", Permission: agentcli.PermissionBypass}, []string{"--auto", "--session=ses_abc"}},
	}
	for _, c := range cases {
		got, err := interactiveArgs(&c.req)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: interactiveArgs = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	for _, req := range []agentcli.Request{
		{SessionID: "ses_abc", Prompt: "ignored by the TUI"},
	} {
		if _, err := interactiveArgs(&req); !errors.Is(err, agentcli.ErrUnsupported) {
			t.Errorf("%+v: err = %v, want ErrUnsupported", req, err)
		}
	}
}
