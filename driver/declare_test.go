package driver

import (
	"context"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/tools/clis"
)

// TestCompletePinned: a Spec of a pinned CLI gets the binary, package and
// tested version tools/clis pins for its name where it leaves them
// empty; one with a binary of its own, or an unpinned name, gets none.
func TestCompletePinned(t *testing.T) {
	cases := []struct {
		in                  Spec
		binary, pkg, tested string
	}{
		{Spec{Name: "codex"}, "codex", "@openai/codex", clis.Version("codex")},
		{Spec{Name: "droid", Package: "@factory/cli"}, "droid", "@factory/cli", clis.Version("droid")},
		{Spec{Name: "qwen", Binary: "qwen", Tested: "9.9.9"}, "qwen", "@qwen-code/qwen-code", "9.9.9"},
		{Spec{Name: "codex", Binary: "my-codex"}, "my-codex", "", ""},
		{Spec{Name: "toy", Binary: "toyagent"}, "toyagent", "", ""},
	}
	for _, c := range cases {
		in := c.in
		s := complete(&in)
		if s.Binary != c.binary || s.Package != c.pkg || s.Tested != c.tested {
			t.Errorf("%s: binary %q package %q tested %q, want %q %q %q", c.in.Name, s.Binary, s.Package, s.Tested, c.binary, c.pkg, c.tested)
		}
		if in.Binary != c.in.Binary || in.Package != c.in.Package || in.Tested != c.in.Tested || s == &in {
			t.Errorf("%s: complete changed its argument", c.in.Name)
		}
	}
}

// TestCompleteCaps: Sessions follows StartSession and ContinueSession
// follows ListSessions (with Resume), whatever Caps declares.
func TestCompleteCaps(t *testing.T) {
	start := func(context.Context, *Run) (agentcli.Session, error) { return nil, nil }
	list := func(context.Context, *Run) ([]agentcli.SessionInfo, error) { return nil, nil }
	both, oneShot := agentcli.SessionModes{OneShot: true, Live: true}, agentcli.SessionModes{OneShot: true}
	cases := []struct {
		name     string
		spec     Spec
		sessions bool
		cont     agentcli.SessionModes
	}{
		{"live and listing", Spec{StartSession: start, ListSessions: list, Caps: agentcli.Capabilities{Resume: true}}, true, both},
		{"one-shot and listing", Spec{ListSessions: list, Caps: agentcli.Capabilities{Resume: true, Sessions: true}}, false, oneShot},
		{"no resume", Spec{StartSession: start, ListSessions: list, Caps: agentcli.Capabilities{ContinueSession: both}}, true, agentcli.SessionModes{}},
		{"no listing", Spec{StartSession: start, Caps: agentcli.Capabilities{Resume: true, ContinueSession: both}}, true, agentcli.SessionModes{}},
	}
	for _, c := range cases {
		c.spec.Name = "toy"
		caps := New(&c.spec, nil).Capabilities()
		if caps.Sessions != c.sessions || caps.ContinueSession != c.cont {
			t.Errorf("%s: sessions %v continue %+v, want %v %+v", c.name, caps.Sessions, caps.ContinueSession, c.sessions, c.cont)
		}
	}
}

// TestCapabilitiesCopiesModes: the mode lists a caller gets are copies,
// even when a Spec declares both with driver.PermissionModes.
func TestCapabilitiesCopiesModes(t *testing.T) {
	spec := testSpec()
	spec.Caps.PermissionModes, spec.Caps.SetPermission = PermissionModes, PermissionModes
	b := New(spec, nil)
	c := b.Capabilities()
	c.SetPermission[0], c.PermissionModes[1] = agentcli.PermissionPlan, agentcli.PermissionPlan
	want := []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan}
	if c := b.Capabilities(); !slices.Equal(c.SetPermission, want) || !slices.Equal(c.PermissionModes, want) || !slices.Equal(PermissionModes, want) {
		t.Fatalf("Capabilities shares its mode lists: %v %v %v", c.SetPermission, c.PermissionModes, PermissionModes)
	}
}
