package gemini

// Switching mid-session and steering, checked against gemini 0.61.0:
// SetModel is ACP session/set_model (the next model request goes to that
// model, and gemini's model router is skipped from then on);
// SetPermission is session/set_mode with the mode a session started in
// that permission mode gets (sessionMode: bypass yolo, ask and deny
// default, plan plan). A session started under bypass with MCP servers
// and no allow list names the request's servers with
// --allowed-mcp-server-names, which also lets every tool of theirs run
// without asking: it cannot leave bypass (an *agentcli.UnsupportedError).
// Steer is queued: a second session/prompt would cancel the running turn.

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
)

// switching returns what a live session of req can switch.
func switching(req *agentcli.Request) acp.Switching {
	trusted := len(req.AllowedTools) == 0 && len(driver.MCPNames(req)) > 0 && sessionMode(req) == "yolo"
	return acp.Switching{
		Model: acp.ModelSetModel,
		Mode: func(m agentcli.PermissionMode) (string, error) {
			if trusted && m != agentcli.PermissionBypass {
				return "", &agentcli.UnsupportedError{Backend: Name, Feature: "SetPermission " + string(m),
					Reason: "the session started under bypass with MCP servers, whose tools gemini then runs without asking in every mode"}
			}
			r := *req
			r.Permission = m
			return sessionMode(&r), nil
		},
	}
}
