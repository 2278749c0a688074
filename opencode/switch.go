package opencode

// Switching mid-session and steering, checked against opencode 1.18.33:
// SetModel is session/set_config_option "model" (a model opencode's
// configuration declares; a plain name is completed to provider/name
// from the option's values); SetPermission can switch only what opencode
// switches in-process, its agent: plan (session/set_config_option "mode"
// "plan"), from a session started under deny or ask, and back to the
// mode the session started in ("build"). agentcli's ask, deny and bypass
// are opencode permission rules fixed at spawn (OPENCODE_PERMISSION), so
// switching between them is an *agentcli.UnsupportedError. Steer is a
// second session/prompt, which opencode merges into the running turn at
// its next model call; both prompts are answered when the turn ends, and
// the turn ends with the last answer.

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
)

// switching returns what a live session of req can switch.
func switching(req *agentcli.Request) acp.Switching {
	start := driver.Mode(req)
	return acp.Switching{
		Model:        acp.ModelOption,
		ModeByOption: true,
		Steer:        true,
		Mode: func(m agentcli.PermissionMode) (string, error) {
			switch {
			case m == start && m == agentcli.PermissionPlan, m == agentcli.PermissionPlan && (start == agentcli.PermissionDeny || start == agentcli.PermissionAsk):
				return "plan", nil
			case m == start:
				return "build", nil
			}
			return "", &agentcli.UnsupportedError{Backend: Name, Feature: "SetPermission " + string(m),
				Reason: "opencode's permission rules are fixed when it starts (OPENCODE_PERMISSION); a session can switch only to plan, from deny or ask, and back"}
		},
	}
}
