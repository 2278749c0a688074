package droid

// Switching mid-session, checked against droid 0.225.2's ACP daemon:
// SetModel is session/set_config_option "model" (the option session/new
// lists, with droid's model ids as values: custom:NAME for a custom
// model), and the next model request goes to that model; SetPermission
// is session/set_mode with the mode a session started in that permission
// mode gets (sessionMode: bypass auto-high, ask and deny normal, plan
// spec), and the session's own decisions follow the new mode. Steer is
// queued (SteerQueued).

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/acp"
)

// switching returns what a live session of req can switch.
func switching(req *agentcli.Request) acp.Switching {
	return acp.Switching{
		Model: acp.ModelOption,
		Mode: func(m agentcli.PermissionMode) (string, error) {
			r := *req
			r.Permission = m
			return sessionMode(&r), nil
		},
	}
}
