package driver

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

func TestCheckMode(t *testing.T) {
	var ue *agentcli.UnsupportedError
	if err := CheckPermissionMode("toy", agentcli.PermissionPlan, []agentcli.PermissionMode{agentcli.PermissionBypass}); !errors.As(err, &ue) || !strings.Contains(ue.Feature, "plan") {
		t.Errorf("CheckMode: %v", err)
	}
	if err := CheckPermissionMode("toy", "later", nil); !errors.As(err, &ue) {
		t.Errorf("unknown mode: %v", err)
	}
	if err := CheckPermissionMode("toy", "", []agentcli.PermissionMode{}); err != nil {
		t.Errorf("bypass: %v", err)
	}
}

func TestNormalize(t *testing.T) {
	all := []agentcli.PermissionOption{
		{ID: "a1", Kind: agentcli.AllowOnce}, {ID: "aa", Kind: agentcli.AllowAlways},
		{ID: "r1", Kind: agentcli.RejectOnce}, {ID: "ra", Kind: agentcli.RejectAlways},
	}
	onceOnly := []agentcli.PermissionOption{{ID: "a1", Kind: agentcli.AllowOnce}, {ID: "r1", Kind: agentcli.RejectOnce}}
	rejectOnly := []agentcli.PermissionOption{{ID: "ra", Kind: agentcli.RejectAlways}}
	cases := []struct {
		opts   []agentcli.PermissionOption
		in     agentcli.PermissionDecision
		edit   bool
		want   agentcli.PermissionOptionKind
		hasMsg bool
	}{
		{all, agentcli.PermissionDecision{}, false, agentcli.RejectOnce, true},
		{all, agentcli.PermissionDecision{Kind: "maybe"}, false, agentcli.RejectOnce, true},
		{all, agentcli.PermissionDecision{Kind: agentcli.AllowAlways}, false, agentcli.AllowAlways, false},
		{onceOnly, agentcli.PermissionDecision{Kind: agentcli.AllowAlways}, false, agentcli.AllowOnce, false},
		{onceOnly, agentcli.PermissionDecision{Kind: agentcli.RejectAlways}, false, agentcli.RejectOnce, true},
		{rejectOnly, agentcli.PermissionDecision{Kind: agentcli.RejectOnce}, false, agentcli.RejectAlways, true},
		{rejectOnly, agentcli.PermissionDecision{Kind: agentcli.AllowOnce}, false, agentcli.RejectAlways, true},
		{all, agentcli.PermissionDecision{Kind: agentcli.AllowOnce, Input: []byte(`{}`)}, false, agentcli.RejectOnce, true},
		{all, agentcli.PermissionDecision{Kind: agentcli.AllowOnce, Input: []byte(`{}`)}, true, agentcli.AllowOnce, false},
		{nil, agentcli.PermissionDecision{Kind: agentcli.AllowAlways}, false, agentcli.AllowAlways, false},
	}
	for i, c := range cases {
		got := NormalizeDecision(c.opts, c.in, c.edit)
		if got.Kind != c.want || (got.Message != "") != c.hasMsg {
			t.Errorf("case %d: NormalizeDecision(%+v) = %+v, want kind %s (message %v)", i, c.in, got, c.want, c.hasMsg)
		}
		if !got.Allowed() && got.Input != nil {
			t.Errorf("case %d: a refusal keeps input %s", i, got.Input)
		}
	}
}
