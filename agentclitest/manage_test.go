package agentclitest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

func TestScriptedSessionManagement(t *testing.T) {
	ctx := context.Background()
	b := agentclitest.NewBackend(agentclitest.Reply("hi", "s-new"))
	// No session yet: Continue fails as on a real backend, and uses no call.
	if _, err := b.Run(ctx, &agentcli.Request{Prompt: "p", Continue: true}); !errors.Is(err, agentcli.ErrNoSession) {
		t.Errorf("Continue with no session: %v; want ErrNoSession", err)
	}
	if _, err := b.Run(ctx, &agentcli.Request{Prompt: "p", ForkSession: true}); !errors.Is(err, agentcli.ErrBadRequest) {
		t.Errorf("ForkSession alone: %v; want ErrBadRequest", err)
	}
	now := time.Now()
	b.ListedSessions = []agentcli.SessionInfo{{ID: "old", Title: "o", Updated: now.Add(-time.Hour)}, {ID: "new", Title: "n", Updated: now}}
	list, err := agentcli.ListSessions(ctx, b, "")
	if err != nil || len(list) != 2 || list[0].ID != "new" {
		t.Errorf("ListSessions = %+v, %v; want newest first", list, err)
	}
	if res, err := b.Run(ctx, &agentcli.Request{Prompt: "p", Continue: true}); err != nil || res.Text != "hi" {
		t.Errorf("Continue: %v, %v", res, err)
	}
	s, err := agentcli.StartSession(ctx, b, &agentcli.Request{Continue: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "new" {
		t.Errorf("a continued live session's ID = %q; want the newest, %q", s.ID(), "new")
	}
	s.Close()
	s, err = agentcli.StartSession(ctx, b, &agentcli.Request{NewSessionID: "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d" {
		t.Errorf("ID = %q; want the chosen one", s.ID())
	}
	s.Close()

	// Capabilities set without session management: refused.
	r := &agentclitest.Backend{Caps: agentcli.Capabilities{PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass}}}
	req := &agentcli.Request{Prompt: "p", Permission: agentcli.PermissionBypass, SessionID: "x", ForkSession: true}
	if _, err := r.Run(ctx, req); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("fork without the capability: %v; want ErrUnsupported", err)
	}
	if _, err := agentcli.ListSessions(ctx, r, ""); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("ListSessions without the capability: %v; want ErrUnsupported", err)
	}
}
