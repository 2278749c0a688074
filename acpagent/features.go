package acpagent

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
)

// Host tools, questions, hooks, attachments and switching, on any ACP
// agent, through what ACP itself carries:
//
//   - Host tools (Request.Tools) and agentcli's question tool
//     (Request.OnQuestion) are served by agentcli's loopback HTTP MCP
//     server, handed to the agent in session/new; an agent that does not
//     advertise mcpCapabilities.http fails the start with an
//     *agentcli.UnsupportedError. A call of one of the server's tools is
//     recognised by its ACP title or id (hostToolName), whichever of the
//     usual forms the agent gives it (agentcli-TOOL, agentcli_TOOL,
//     agentcli/TOOL, mcp__agentcli__TOOL), so that a permission request
//     the agent sends about it is left to the server, which decides each
//     call itself.
//   - Hooks: PreToolUse sees what the agent asks about (its permission
//     requests); PostToolUse comes from the tool call updates,
//     UserPromptSubmit before each prompt, Stop at the answer.
//   - Attachments go as ACP image and text blocks; images only to an
//     agent that advertises promptCapabilities.image (checked when the
//     session starts, for the first turn's).
//   - SetModel sets the "model" config option where the session offers
//     one, and sends session/set_model otherwise; an agent with neither
//     answers with an error. SetPermission is the session's own answers
//     to permission requests, with the agent's mode where Agent.Modes
//     names one for every permission mode; an agent whose modes agentcli
//     knows only in part (or not at all) cannot be switched into or out
//     of plan, since the mode to go back to is not known, and one that
//     is configured for its mode when it starts (Agent.Env: opencode,
//     which asks only what its configuration says) cannot be switched to
//     a mode configured otherwise.

// hookSupport is every ACP agent's Capabilities.Hooks.
var hookSupport = agentcli.HookSupport{PreToolUse: agentcli.HookAsked, PostToolUse: true, UserPromptSubmit: true, Stop: true}

// attachmentKinds: images (where the agent takes them) and text files.
var attachmentKinds = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}

// hostForms are the prefixes under which ACP agents title a call of an
// MCP tool of agentcli's server (copilot: SERVER-TOOL; opencode:
// SERVER_TOOL).
var hostForms = []string{
	"mcp__" + agentcli.HostServerName + "__", "mcp_" + agentcli.HostServerName + "_", agentcli.HostServerName + "__",
	agentcli.HostServerName + "-", agentcli.HostServerName + "_", agentcli.HostServerName + "/",
}

// hostToolName returns the RawName hook of a session with host tools: a
// call whose title or id is one word in one of hostForms is named
// mcp__agentcli__TOOL, the form driver.HostTools.Match knows. An id may
// carry a suffix after "__" (gemini: mcp_agentcli_TOOL__mcp_agentcli_TOOL_N_0;
// its title is "TOOL (agentcli MCP Server)").
func hostToolName(req *agentcli.Request) func(id, title string) string {
	names := driver.HostToolNames(req)
	if len(names) == 0 {
		return nil
	}
	return func(id, title string) string {
		head, _, _ := strings.Cut(id, "__")
		for _, s := range []string{title, id, head} {
			if s == "" || strings.ContainsFunc(s, unicode.IsSpace) {
				continue
			}
			for _, p := range hostForms {
				if rest, ok := strings.CutPrefix(s, p); ok {
					for _, n := range names {
						if rest == n {
							return "mcp__" + agentcli.HostServerName + "__" + n
						}
					}
				}
			}
		}
		return ""
	}
}

// fullModes reports whether a's Modes names a mode of its own for every
// permission mode.
func fullModes(a Agent) bool {
	for _, m := range []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan} {
		if a.Modes[string(m)] == "" {
			return false
		}
	}
	return true
}

// switchModes is a's Capabilities.SetPermission.
func switchModes(a Agent) []agentcli.PermissionMode {
	if fullModes(a) {
		return []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan}
	}
	return []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny}
}

// switching is what a session of the agent, started for req, can switch.
func (s *state) switching(req *agentcli.Request) acp.Switching {
	a := s.agent
	start := driver.Mode(req)
	return acp.Switching{
		Model: acp.ModelAuto,
		Mode: func(m agentcli.PermissionMode) (string, error) {
			if !slices.Equal(a.Env[string(start)], a.Env[string(m)]) {
				return "", &agentcli.UnsupportedError{Backend: a.Name, Feature: "SetPermission " + string(m),
					Reason: fmt.Sprintf("the agent is configured for its permission mode when it starts (Agent.Env), and %s needs another configuration than %s", m, start)}
			}
			if fullModes(a) {
				return a.Modes[string(m)], nil
			}
			if m == agentcli.PermissionPlan || start == agentcli.PermissionPlan {
				return "", &agentcli.UnsupportedError{Backend: a.Name, Feature: "SetPermission " + string(m),
					Reason: fmt.Sprintf("agentcli does not know the agent's mode for every permission mode, so a session cannot be switched into or out of plan (it started in %s)", start)}
			}
			return "", nil // the session's answers are the mode
		},
	}
}

// checkImages refuses the first turn's images for an agent that does not
// advertise promptCapabilities.image.
func checkImages(backend string, req *agentcli.Request, info *initInfo) error {
	if info.AgentCapabilities.PromptCapabilities.Image {
		return nil
	}
	for _, at := range req.Attachments {
		if driver.AttachmentKindOf(at) == agentcli.AttachmentImage {
			return &agentcli.UnsupportedError{Backend: backend, Feature: "image attachments",
				Reason: "the agent does not advertise promptCapabilities.image"}
		}
	}
	return nil
}
