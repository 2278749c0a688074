package agentcli_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPool(t *testing.T) {
	ctx := context.Background()
	b := agentclitest.NewBackend(agentclitest.Reply("one", "s1"), agentclitest.Reply("two", "s2"))
	p, err := agentcli.NewPool(b, &agentcli.Request{Permission: agentcli.PermissionBypass}, &agentcli.PoolOptions{Warm: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	waitFor(t, "two ready sessions", func() bool { return p.Ready() == 2 })
	s, err := p.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.Run(ctx, "hi"); err != nil || res.Text != "one" {
		t.Fatalf("a pooled session's turn: %+v %v", res, err)
	}
	s.Close()
	// Taken sessions are replaced.
	waitFor(t, "the replacement", func() bool { return p.Ready() == 2 })
	// The pool's request is every session's.
	if reqs := b.Requests(); len(reqs) != 1 || reqs[0].Permission != agentcli.PermissionBypass || reqs[0].Prompt != "hi" {
		t.Fatalf("requests %+v", reqs)
	}
	p.Close()
	if p.Ready() != 0 {
		t.Errorf("%d ready sessions after Close", p.Ready())
	}
	if _, err := p.Take(ctx); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Errorf("Take after Close: %v", err)
	}
}

// TestPoolIdle: ready sessions nobody takes are closed after the idle
// limit and not replaced until the next Take.
func TestPoolIdle(t *testing.T) {
	b := agentclitest.NewBackend()
	b.Default = &agentclitest.Call{Result: &agentcli.Result{Text: "ok"}}
	p, err := agentcli.NewPool(b, nil, &agentcli.PoolOptions{Warm: 3, IdleTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	waitFor(t, "the idle sessions closed", func() bool { return p.Ready() == 0 })
	time.Sleep(100 * time.Millisecond)
	if n := p.Ready(); n != 0 {
		t.Fatalf("%d sessions started again with nobody taking", n)
	}
	s, err := p.Take(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res, err := s.Run(context.Background(), "x"); err != nil || res.Text != "ok" {
		t.Fatalf("a session started on demand: %+v %v", res, err)
	}
}

func TestPoolRefuses(t *testing.T) {
	if _, err := agentcli.NewPool(agentclitest.NewBackend(), &agentcli.Request{SessionID: "s"}, nil); !errors.Is(err, agentcli.ErrBadRequest) {
		t.Errorf("a pool of resumed sessions: %v", err)
	}
	if _, err := agentcli.NewPool(agentclitest.NewBackend(), &agentcli.Request{Prompt: "first"}, nil); !errors.Is(err, agentcli.ErrBadRequest) {
		t.Errorf("a pool with a prompt: %v", err)
	}
	if _, err := agentcli.NewPool(agentclitest.NewBackend(), &agentcli.Request{Permission: "sometimes"}, nil); err == nil {
		t.Error("a request StartSession refuses was accepted")
	}
}
