package gemini

// Hooks: a run or session with hooks is a live session (gemini --acp),
// where gemini 0.61.0 runs no BeforeTool or AfterTool hook of its own
// (ACP runs tools without them). PreToolUse is the permission path: the
// session runs in gemini's "default" mode (bypass included), where
// gemini asks before shell commands (except those its policy allows
// without asking, such as ls), edits, web fetches and MCP tool calls, but
// not before reading and searching tools (read_file, glob,
// grep_search, ...), which PreToolUse therefore does not see. A refusal
// answers "cancel": the model hears "Tool ... was canceled by the user",
// not the hook's reason; a changed input is refused. PostToolUse and Stop
// come from the event stream (no context for the model),
// UserPromptSubmit before each prompt.

import "github.com/agentcli/agentcli"

// hookSupport is gemini's Capabilities.Hooks.
var hookSupport = agentcli.HookSupport{PreToolUse: agentcli.HookAsked, PostToolUse: true, UserPromptSubmit: true, Stop: true}
