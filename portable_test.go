package agentcli_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

func TestDirStore(t *testing.T) {
	ctx := context.Background()
	s := agentcli.DirStore{Dir: t.TempDir() + "/store"}
	if keys, err := s.List(ctx, ""); err != nil || len(keys) != 0 {
		t.Fatalf("empty store: %q %v", keys, err)
	}
	if _, err := s.Get(ctx, agentcli.SessionKey("claude", "x")); !errors.Is(err, agentcli.ErrSessionNotFound) {
		t.Fatalf("Get of a missing key: %v", err)
	}
	for _, k := range []string{agentcli.SessionKey("claude", "a"), agentcli.SessionKey("codex", "b"), agentcli.SessionKey("claude", "c")} {
		if err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, "claude/a", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Get(ctx, "claude/a"); err != nil || string(b) != "new" {
		t.Fatalf("Get after Put: %q %v", b, err)
	}
	if keys, _ := s.List(ctx, "claude/"); !slices.Equal(keys, []string{"claude/a", "claude/c"}) {
		t.Fatalf("List(claude/) = %q", keys)
	}
	if err := s.Delete(ctx, "claude/a"); err != nil || s.Delete(ctx, "claude/a") != nil {
		t.Fatalf("Delete: %v", err)
	}
	if keys, _ := s.List(ctx, ""); !slices.Equal(keys, []string{"claude/c", "codex/b"}) {
		t.Fatalf("List = %q", keys)
	}
	for _, bad := range []string{"", "/abs", "a/../b", "..", "a//b", "a/", "a b", `a\b`, "a/./b"} {
		if err := s.Put(ctx, bad, nil); err == nil {
			t.Errorf("Put(%q) accepted", bad)
		}
	}
}

// TestPortableUnsupported: a backend that cannot move sessions says so.
func TestPortableUnsupported(t *testing.T) {
	b := agentcli.WithRetry(agentclitest.NewBackend(), nil)
	if _, err := agentcli.ExportSession(context.Background(), b, "", "x"); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("ExportSession: %v", err)
	}
	if _, err := agentcli.ImportSession(context.Background(), b, "", nil); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("ImportSession: %v", err)
	}
}
