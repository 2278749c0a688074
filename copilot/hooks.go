package copilot

// Hooks, checked against copilot 1.0.102: a run or session with hooks is
// a live session (copilot --acp). PreToolUse is the permission path:
// the session never approves in advance (no allow_all, not even under
// bypass, and no --allow-tool for the tool lists' tools, which the
// session judges itself after the hook), so copilot asks before every
// shell command, file write, MCP tool call and URL it would run, and the
// session calls PreToolUse with each request, then decides it by the
// lists and the mode (live.Host.Ask). Copilot does not ask before
// reading and searching (view, grep, glob), which PreToolUse therefore
// does not see. A refusal ends the turn at once, as any refusal does in
// copilot's ACP mode: the hook's reason does not reach the model, and a
// changed input is refused. PostToolUse (with the tool's output: copilot
// sends a shell command's output in tool_call_update) and Stop come from
// the event stream (no context for the model), UserPromptSubmit before
// each prompt. Host tools are left to agentcli's MCP server, which calls
// PreToolUse itself. Copilot has hooks of its own (settings.json
// "hooks", .github/hooks/*.json), but only in the user's or the
// repository's files, which agentcli does not write.

import "github.com/agentcli/agentcli"

// hookSupport is copilot's Capabilities.Hooks.
var hookSupport = agentcli.HookSupport{PreToolUse: agentcli.HookAsked, PostToolUse: true, PostOutput: true, UserPromptSubmit: true, Stop: true}

// liveRun reports that a one-shot run of req goes through a live
// session: with attachments (attach.go) or hooks.
func liveRun(req *agentcli.Request) bool { return req.Hooks != nil || len(req.Attachments) > 0 }
