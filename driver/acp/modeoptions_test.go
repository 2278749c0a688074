package acp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
)

// Switching.ModeOptions: SetPermission sets each option it returns, in
// order, with session/set_config_option; its refusal changes nothing.
func TestModeOptions(t *testing.T) {
	refused := &agentcli.UnsupportedError{Backend: "fake", Feature: "SetPermission plan"}
	cfg := Config{Switch: Switching{ModeOptions: func(m agentcli.PermissionMode) ([]Option, error) {
		switch m {
		case agentcli.PermissionBypass:
			return []Option{{ID: "mode", Value: "agent"}, {ID: "allow_all", Value: "on"}}, nil
		case agentcli.PermissionPlan:
			return nil, refused
		}
		return []Option{{ID: "mode", Value: "agent"}, {ID: "allow_all", Value: "off"}}, nil
	}}}
	s, err := start(t, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.SetPermission(ctx, agentcli.PermissionBypass); err != nil {
		t.Fatalf("SetPermission(bypass): %v", err)
	}
	if err := s.SetPermission(ctx, agentcli.PermissionPlan); !errors.Is(err, refused) {
		t.Fatalf("SetPermission(plan) = %v, want the refusal", err)
	}
	if err := s.SetPermission(ctx, agentcli.PermissionDeny); err != nil {
		t.Fatalf("SetPermission(deny): %v", err)
	}
	_, res, err := collect(t, s, "report")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Set []string `json:"set"`
	}
	if err := json.Unmarshal([]byte(res.Text), &rep); err != nil {
		t.Fatalf("%v: %q", err, res.Text)
	}
	if want := []string{"mode=agent", "allow_all=on", "mode=agent", "allow_all=off"}; !slices.Equal(rep.Set, want) {
		t.Errorf("options set %q, want %q", rep.Set, want)
	}
}
