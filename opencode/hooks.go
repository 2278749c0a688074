package opencode

// Hooks: a run or session with hooks is a live session (opencode acp).
// PreToolUse is the permission path: OPENCODE_PERMISSION starts with
// "*": "ask" (and what the tool lists approve is asked about too), so
// opencode 1.18.33 asks before every tool call, reads included; the
// session calls PreToolUse with each request, then decides it by the
// lists and the mode. A refusal ends the turn at once, as any refusal
// does in opencode (the next turn's history carries it): the hook's
// reason does not reach the model, and a changed input is refused.
// opencode's plugin hooks (tool.execute.before/after) would do better, but
// they are not loaded under OPENCODE_PURE and make opencode install a
// dependency from npm on start. PostToolUse and Stop come from the event
// stream (no context for the model), UserPromptSubmit before each
// prompt.

import "github.com/agentcli/agentcli"

// hookSupport is opencode's Capabilities.Hooks.
var hookSupport = agentcli.HookSupport{PreToolUse: agentcli.HookAsked, PostToolUse: true, PostOutput: true, UserPromptSubmit: true, Stop: true}
