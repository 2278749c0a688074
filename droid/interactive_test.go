package droid

import (
	"errors"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// TestInteractiveDropsSettings: the UI takes no model, effort or MCP
// servers: under Options.Strict the first of them is an
// *agentcli.UnsupportedError; otherwise they are left out of the command
// line, which still has the permission and the session.
func TestInteractiveDropsSettings(t *testing.T) {
	req := func() *agentcli.Request {
		return &agentcli.Request{Prompt: "hello there", Model: "custom:m", Effort: agentcli.EffortHigh, SessionID: "s1",
			Permission: agentcli.PermissionBypass, MCPServers: []agentcli.MCPServer{{Name: "x", Command: "x"}}}
	}
	var ue *agentcli.UnsupportedError
	r := &driver.Run{Req: req(), Options: &agentcli.Options{Strict: true}}
	if _, err := interactive(t.Context(), r); !errors.As(err, &ue) || ue.Feature != "model" {
		t.Fatalf("strict: %v, want the model unsupported", err)
	}
	r = &driver.Run{Req: req(), Options: &agentcli.Options{}}
	job, err := interactive(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--auto=high", "--resume=s1", "--", "hello there"}
	if len(job.Args) != len(want) {
		t.Fatalf("args %q, want %q", job.Args, want)
	}
	for i := range want {
		if job.Args[i] != want[i] {
			t.Fatalf("args %q, want %q", job.Args, want)
		}
	}
}
