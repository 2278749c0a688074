package gemini

// Hooks.
//
// A one-shot run (gemini --output-format stream-json ...) has gemini's
// own hooks, from the settings overlay: BeforeTool and AfterTool run a
// command, `node RELAY`, where RELAY is a small script
// in the run's private temporary directory that posts the hook's input
// (stdin) to a loopback HTTP endpoint of the run's own, behind a secret
// of its own, and prints the answer (gemini runs the hook with its own
// environment, so node, which runs gemini itself, is on PATH). The
// endpoint calls the run's hooks and answers as gemini 0.61.0 expects:
//
//	BeforeTool  {} | {"decision": "deny", "reason": R}  (the model: "Tool execution blocked: R")
//	            | {"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": INPUT}}
//	AfterTool   {"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": C}}
//	            (appended to the tool's result as <hook_context>)
//
// so PreToolUse sees every call, a refusal's reason reaches the model, a
// changed input runs, and PostToolUse sees the output and adds context.
// Stop is the runner's, at the result: gemini's AfterAgent hook could
// make the run go on, but the text it gives the hook (prompt_response)
// is garbled in 0.61.0 (streamed chunks repeated, earlier turns
// included), so Stop would not see the final text. A relay that cannot reach the endpoint
// exits 2, which blocks the call. Calls of host tools are left to
// agentcli's MCP server, which calls PreToolUse itself.
//
// A live session (gemini --acp; and a one-shot run under PermissionAsk,
// which is one) runs no BeforeTool or AfterTool hook of gemini's (ACP runs
// tools without them). PreToolUse is the permission path there: the
// session runs in gemini's "default" mode (bypass included), where gemini
// asks before shell commands (except those its policy allows without
// asking, such as ls and echo), edits, web fetches and MCP tool calls,
// but not before reading and searching tools (read_file, glob,
// grep_search, ...), which PreToolUse therefore does not see. A refusal
// answers "cancel": the model hears "Tool ... was canceled by the user",
// not the hook's reason; a changed input is refused. PostToolUse and Stop
// come from the event stream there (no context for the model; ACP reports
// no shell output). Capabilities().Hooks describes the live session, the
// lesser of the two. UserPromptSubmit is the runner's in both (its
// context goes after the prompt).

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// hookSupport is gemini's Capabilities.Hooks (a live session's; see
// above for a one-shot run's).
var hookSupport = agentcli.HookSupport{PreToolUse: agentcli.HookAsked, PostToolUse: true, UserPromptSubmit: true, Stop: true}

// nativeHooks reports the hooks gemini calls itself: in a one-shot run,
// PreToolUse and PostToolUse.
func nativeHooks(_ *agentcli.Request, live bool) driver.NativeHooks {
	if live {
		return driver.NativeHooks{}
	}
	return driver.NativeHooks{PreToolUse: true, PostToolUse: true}
}

// hookSettings starts the hook relay of a one-shot run whose hooks gemini
// calls (see above) and returns the settings that register it, or nil.
func hookSettings(r *driver.Run) (map[string]any, error) {
	h := r.Hooks()
	n := h.Native()
	events := map[string]bool{"BeforeTool": n.PreToolUse && h.HasPreToolUse(), "AfterTool": n.PostToolUse && h.HasPostToolUse()}
	hooks, err := driver.RelayHooks(r, events, func(ctx context.Context, in *hookInput) any { return hookAnswer(ctx, h, r.HostTools(), in) },
		func(relay string) any {
			return []map[string]any{{"matcher": ".*", "hooks": []map[string]any{{"type": "command",
				"command": "node " + strconv.Quote(relay), "timeout": r.HookTimeout().Milliseconds()}}}}
		})
	if hooks == nil || err != nil {
		return nil, err
	}
	return map[string]any{"hooks": hooks}, nil
}

// hookInput is what gemini gives a hook command on stdin.
type hookInput = driver.HookInput

// hookAnswer calls the hook of in's event and returns gemini's answer.
func hookAnswer(ctx context.Context, h *driver.RunHooks, host *driver.HostTools, in *hookInput) map[string]any {
	out := map[string]any{}
	use, hostTool := driver.HookToolUse(tools, host, in.ToolName, in.ToolInput)
	switch in.Event {
	case "BeforeTool":
		if hostTool {
			break // agentcli's MCP server calls PreToolUse itself
		}
		res := h.PreToolUse(ctx, in.SessionID, use, "")
		switch {
		case res.Deny:
			out["decision"], out["reason"] = "deny", res.Reason
		case res.Input != nil:
			out["hookSpecificOutput"] = map[string]any{"hookEventName": "BeforeTool", "tool_input": res.Input}
		}
	case "AfterTool":
		res := h.PostToolUse(ctx, in.SessionID, use, agentcli.ToolResult{Output: responseText(in.ToolResponse)})
		if res.Context != "" {
			out["hookSpecificOutput"] = map[string]any{"hookEventName": "AfterTool", "additionalContext": res.Context}
		}
	}
	return out
}

// responseText returns an AfterTool tool_response as text: its
// llmContent when that is a string, else its returnDisplay, else the
// JSON.
func responseText(raw json.RawMessage) string { return driver.ToolResponseText(raw, false) }
