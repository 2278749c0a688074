package codex

import (
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
)

func TestManageArgs(t *testing.T) {
	const id = "01a215c8-5186-7b63-bb0a-20d867ff8a3a"
	args := buildArgs(&agentcli.Request{SessionID: id, ForkSession: true}, "")
	if tail := args[len(args)-4:]; !slices.Equal(tail, []string{"fork", "--", id, "-"}) {
		t.Errorf("fork args %q; want them to end with fork -- ID -", args)
	}
	args = buildArgs(&agentcli.Request{SessionID: id}, "")
	if tail := args[len(args)-4:]; !slices.Equal(tail, []string{"resume", "--", id, "-"}) {
		t.Errorf("resume args %q; want them to end with resume -- ID -", args)
	}
}
