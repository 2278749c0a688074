package copilot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestRealSessionID: the session id agentcli chooses for a new session
// (--session-id) is the one copilot reports at the end, and the EventInit
// carries it before the model's first word; a run resumed with it keeps
// it.
func TestRealSessionID(t *testing.T) {
	if backendtest.RunIsolated(t) {
		return
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "one"}, agentclitest.Turn{Text: "two"})
	defer srv.Close()
	b, req, _ := backendtest.RealBackend(t, Name, srv, New)
	req.Prompt = "hi"
	evs, err := backendtest.Collect(context.Background(), b, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 2 || evs[0].Kind != agentcli.EventInit || evs[0].SessionID == "" {
		t.Fatalf("first event %+v; want an EventInit with the session id", evs[0])
	}
	res := evs[len(evs)-1].Result
	if res == nil || res.SessionID != evs[0].SessionID || res.Text != "one" {
		t.Fatalf("result %+v; want session %s", res, evs[0].SessionID)
	}
	req.Prompt, req.SessionID = "again", res.SessionID
	res2, err := b.Run(context.Background(), req)
	if err != nil || res2.SessionID != res.SessionID || res2.Text != "two" || !res2.Usage.Cumulative {
		t.Fatalf("resumed: %+v, %v", res2, err)
	}
}

// TestRealLiveSystemPromptAndPlan: in a live session the system prompt
// reaches the model's system message as in a run (the instructions
// directory), and plan mode is copilot's: the session's "mode" option is
// plan, and a command that writes is refused by it, not run.
func TestRealLiveSystemPromptAndPlan(t *testing.T) {
	if backendtest.RunIsolated(t) {
		return
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Shell: "touch PLANNED"}, agentclitest.Turn{Text: "planned"})
	defer srv.Close()
	b, req, dir := backendtest.RealBackend(t, Name, srv, New)
	req.SystemPrompt = "LIVE-SYSTEM-MARKER: be brief."
	req.Permission = agentcli.PermissionPlan
	ctx := context.Background()
	s, err := agentcli.StartSession(ctx, b, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(ctx, "Make a plan.")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("plan turn: %q", res.Text)
	if _, err := os.Stat(filepath.Join(dir, "PLANNED")); err == nil {
		t.Error("the command ran in plan mode")
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || !strings.Contains(reqs[0].System, "LIVE-SYSTEM-MARKER") {
		t.Fatalf("the system prompt did not reach the model: %d requests", len(reqs))
	}
}
