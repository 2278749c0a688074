package copilot

// Switching mid-session, checked against copilot 1.0.102: SetModel is ACP
// session/set_model (the next model request asks for the new model; the
// session offers no model option of its own with a bring-your-own-key
// provider). SetPermission sets two of the session's config options with
// session/set_config_option: "mode" (planMode for plan, agentMode
// otherwise) and "allow_all" ("on" under bypass, "off" otherwise, where
// copilot then asks and the session decides by the mode). A live session
// therefore never passes --allow-all: copilot ignores "allow_all" "off"
// in a session started with that flag (checked: the next command ran
// without a request). A session whose allow list has a command pattern
// approves paths and URLs at start under bypass (--allow-all-paths,
// --allow-all-urls, which no option takes back) and cannot switch to or
// from bypass: an *agentcli.UnsupportedError. Steer is queued.

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
)

// agentMode is copilot's value of its "mode" config option for its
// default agent mode.
const agentMode = "https://agentclientprotocol.com/protocol/session-modes#agent"

// allowAllOption returns the "allow_all" option of a live session of req
// (see above): on where a run of req would pass --allow-all. It is pure.
func allowAllOption(req *agentcli.Request) (acp.Option, error) {
	p, err := policyFor(req)
	if err != nil {
		return acp.Option{}, err
	}
	v := "off"
	if p.allowAll {
		v = "on"
	}
	return acp.Option{ID: "allow_all", Value: v}, nil
}

// switching returns what a live session of req can switch.
func switching(req *agentcli.Request) acp.Switching {
	start := driver.Mode(req)
	return acp.Switching{
		Model: acp.ModelSetModel,
		ModeOptions: func(m agentcli.PermissionMode) ([]acp.Option, error) {
			if (m == agentcli.PermissionBypass) != (start == agentcli.PermissionBypass) && patternBypass(req) {
				return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "SetPermission " + string(m),
					Reason: "under bypass, an allow list with a command pattern approves paths and URLs when copilot starts (--allow-all-paths, --allow-all-urls), which a session cannot switch"}
			}
			r := *req
			r.Permission = m
			mode := agentMode
			if m == agentcli.PermissionPlan {
				mode = planMode
			}
			aa, err := allowAllOption(&r)
			if err != nil {
				return nil, err
			}
			return []acp.Option{{ID: "mode", Value: mode}, aa}, nil
		},
	}
}

// patternBypass reports whether a session of req under bypass approves
// paths and URLs at start (see above). It is pure.
func patternBypass(req *agentcli.Request) bool {
	r := *req
	r.Permission = agentcli.PermissionBypass
	p, _ := policyFor(&r)
	return p.allowPathsURLs
}
