package conformance

import (
	"context"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	_ "github.com/agentcli/agentcli/claude" // registers "claude"
)

// TestUserStyle is how a user tests their own code against a real CLI and a
// scripted model: no credentials, no network, a handful of lines.
func TestUserStyle(t *testing.T) {
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "Hi there!"})
	defer srv.Close()
	w, err := srv.Wire("claude", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := agentcli.Open("claude", &agentcli.Options{Path: cliPath(t, "claude")})
	if err != nil {
		t.Fatal(err)
	}
	req := &agentcli.Request{Prompt: "Say hi."}
	w.Apply(req) // the one line that makes the run hermetic
	res, err := b.Run(context.Background(), req)
	if err != nil || res.Text != "Hi there!" || srv.Requests()[0].LastUserText() != "Say hi." {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}
