package claude

// Hooks: claude's own, through the control protocol (a live session; a
// one-shot run with hooks is one turn of one, since claude answers a
// hook only while its stdin is open). initialize registers one callback
// per hook the request has ("hooks": {"PreToolUse": [{"hookCallbackIds":
// ["agentcli_pre"], "timeout": SECONDS}], ...}); claude then sends a
// hook_callback control request for each event, whose answer is the hook
// output claude's command hooks print:
//
//	PreToolUse   {} | {"hookSpecificOutput": {"hookEventName": "PreToolUse",
//	             "permissionDecision": "deny", "permissionDecisionReason": R}}
//	             | {"hookSpecificOutput": {..., "updatedInput": INPUT}}
//	PostToolUse  {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": C}}
//	Stop         {"decision": "block", "reason": R}
//
// PreToolUse fires for every call, in every permission mode (bypass
// included), before claude's permission check; claude tells the model a
// refusal's reason ("PreToolUse:Bash hook error: R"). A changed input
// runs instead of the model's, and the permission mode still decides the
// call. PostToolUse's additionalContext reaches the model as a system
// message; a Stop that blocks makes claude go on with the reason as the
// next user message (stop_hook_active is set then). Checked against
// claude 2.1.330. UserPromptSubmit is the runner's (the context goes
// after the prompt). Calls of host tools are left to agentcli's MCP
// server, which calls PreToolUse itself.

import (
	"encoding/json"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// nativeHooks reports the hooks claude calls itself: all but
// UserPromptSubmit.
func nativeHooks(*agentcli.Request, bool) driver.NativeHooks {
	return driver.NativeHooks{PreToolUse: true, PostToolUse: true, Stop: true}
}

// hookSupport is claude's Capabilities.Hooks.
var hookSupport = agentcli.HookSupport{PreToolUse: agentcli.HookAll, DenyReason: true, Rewrite: true,
	PostToolUse: true, PostOutput: true, PostContext: true, UserPromptSubmit: true, Stop: true, StopContinue: true}

// Callback ids of the hooks.
const (
	hookPre  = "agentcli_pre"
	hookPost = "agentcli_post"
	hookStop = "agentcli_stop"
)

// hookConfig returns initialize's "hooks" for h, or nil for none.
func hookConfig(h *driver.RunHooks) map[string]any {
	if h == nil {
		return nil
	}
	cfg := map[string]any{}
	add := func(event, id string) {
		cfg[event] = []map[string]any{{"hookCallbackIds": []string{id}}}
	}
	if h.HasPreToolUse() {
		add("PreToolUse", hookPre)
	}
	if h.HasPostToolUse() {
		add("PostToolUse", hookPost)
	}
	if h.HasStop() {
		add("Stop", hookStop)
	}
	if len(cfg) == 0 {
		return nil
	}
	return cfg
}

// hookRequest is a hook_callback control request.
type hookRequest struct {
	CallbackID string `json:"callback_id"`
	Input      struct {
		SessionID      string          `json:"session_id"`
		Event          string          `json:"hook_event_name"`
		ToolName       string          `json:"tool_name"`
		ToolInput      json.RawMessage `json:"tool_input"`
		ToolResponse   json.RawMessage `json:"tool_response"`
		ToolUseID      string          `json:"tool_use_id"`
		LastMessage    string          `json:"last_assistant_message"`
		StopHookActive bool            `json:"stop_hook_active"`
	} `json:"input"`
}

// hookCallback answers a hook_callback: the hook runs on a goroutine of
// its own (the reader goes on), and an unknown event gets {} (no
// opinion).
func (p *liveProto) hookCallback(id string, raw json.RawMessage) {
	var r hookRequest
	_ = json.Unmarshal(raw, &r) // fields of an unexpected type are left zero
	in := r.Input
	go func() {
		ctx, cancel := p.h.TurnContext()
		defer cancel()
		sid := in.SessionID
		if sid == "" {
			sid = p.h.SessionID()
		}
		out := map[string]any{}
		switch {
		case r.CallbackID == hookPre && in.Event == "PreToolUse":
			if _, ok := p.host.Match(in.ToolName); ok {
				break // agentcli's MCP server calls PreToolUse itself
			}
			name, kind := tools.Canonical(in.ToolName)
			use := agentcli.ToolUse{ID: in.ToolUseID, Name: name, RawName: in.ToolName, Kind: kind, Input: toolInput(in.ToolInput)}
			res := p.hooks.PreToolUse(ctx, sid, use, "")
			switch {
			case res.Deny:
				out["hookSpecificOutput"] = map[string]any{"hookEventName": "PreToolUse",
					"permissionDecision": "deny", "permissionDecisionReason": res.Reason}
			case res.Input != nil:
				out["hookSpecificOutput"] = map[string]any{"hookEventName": "PreToolUse", "updatedInput": res.Input}
			}
		case r.CallbackID == hookPost && in.Event == "PostToolUse":
			name, kind := tools.Canonical(in.ToolName)
			if n, ok := p.host.Match(in.ToolName); ok {
				name, kind = n, agentcli.ToolOther
			}
			use := agentcli.ToolUse{ID: in.ToolUseID, Name: name, RawName: in.ToolName, Kind: kind, Input: toolInput(in.ToolInput)}
			res := p.hooks.PostToolUse(ctx, sid, use, agentcli.ToolResult{ID: in.ToolUseID, Output: responseText(in.ToolResponse)})
			if res.Context != "" {
				out["hookSpecificOutput"] = map[string]any{"hookEventName": "PostToolUse", "additionalContext": res.Context}
			}
		case r.CallbackID == hookStop && in.Event == "Stop":
			res := p.hooks.Stop(ctx, agentcli.StopInput{SessionID: sid, Text: in.LastMessage, Continued: in.StopHookActive})
			if res.Continue != "" {
				out["decision"], out["reason"] = "block", res.Continue
			}
		}
		p.reply(id, out, "")
	}()
}

// toolInput returns raw as a tool input: a JSON object, or {}.
func toolInput(raw json.RawMessage) json.RawMessage {
	if len(raw) > 0 && raw[0] == '{' && json.Valid(raw) {
		return raw
	}
	return json.RawMessage("{}")
}

// responseText returns a PostToolUse tool_response as text: an MCP tool's
// content blocks' text, Bash's stdout and stderr, a string as it is,
// anything else as JSON.
func responseText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil && len(blocks) > 0 {
		var out []string
		for _, b := range blocks {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
		return strings.Join(out, "\n")
	}
	var sh struct {
		Stdout *string `json:"stdout"`
		Stderr string  `json:"stderr"`
	}
	if json.Unmarshal(raw, &sh) == nil && sh.Stdout != nil {
		if sh.Stderr != "" {
			return *sh.Stdout + "\n" + sh.Stderr
		}
		return *sh.Stdout
	}
	return string(raw)
}
