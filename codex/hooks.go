package codex

// Hooks: codex's own hooks run only when trusted (a hash of each in the
// user's config.toml, or --dangerously-bypass-hook-trust /
// bypass_hook_trust, which would also run every untrusted hook of the
// user's and the project's for the run), so agentcli does not use them.
// PreToolUse is the permission path instead: a session with PreToolUse
// runs under approvalPolicy "untrusted" in every mode (danger-full-access,
// or read-only for plan), where codex 0.169.0 asks before every command
// (ls included), every patch and every call of an MCP tool that is not
// approved in advance; the session calls PreToolUse with each request,
// then decides it by the tool lists and the mode (bypass: allow). A
// refusal declines the request and tells the model the hook's reason
// with turn/steer (a user message in the running turn), since codex's
// decline carries no message. codex cannot run a call with changed input
// (such a call is refused). web_search, view_image and sub-agents are
// never asked about: PreToolUse does not see them. PostToolUse and Stop
// come from the event stream (no context for the model), UserPromptSubmit
// before each prompt.

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/live"
)

// hookSupport is codex's Capabilities.Hooks.
var hookSupport = agentcli.HookSupport{PreToolUse: agentcli.HookAsked, DenyReason: true,
	PostToolUse: true, PostOutput: true, UserPromptSubmit: true, Stop: true}

var _ live.HookDenier = (*appServer)(nil)

// HookDenied tells the model why PreToolUse refused pr: a turn/steer with
// the reason, into the running turn.
func (p *appServer) HookDenied(pr *agentcli.PermissionRequest, reason string) {
	p.mu.Lock()
	thread, turn := p.thread, p.turn
	p.mu.Unlock()
	if thread == "" || turn == "" {
		return
	}
	text := "The host's PreToolUse hook refused the tool call"
	if pr.Title != "" {
		text += " (" + pr.Title + ")"
	}
	text += ": " + reason
	ctx, cancel := p.h.TurnContext()
	go func() {
		defer cancel()
		if _, err := p.rpc.Call(ctx, "turn/steer", map[string]any{"threadId": thread, "expectedTurnId": turn,
			"input": []map[string]any{{"type": "text", "text": text}}}); err != nil {
			p.h.Logger().Debug("agentcli: steering the turn with a hook's refusal failed", "backend", Name, "err", err)
		}
	}()
}
