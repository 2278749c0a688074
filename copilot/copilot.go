// Package copilot is the agentcli backend for GitHub Copilot CLI (`copilot`,
// npm package @github/copilot, tested with 1.0.102). Importing it registers
// the backend as "copilot".
//
// # Command line
//
// A run (Run and Stream alike, except under PermissionAsk; see Live
// sessions) is
//
//	copilot --output-format=json --no-auto-update [--allow-all | --plan] [--model=M] [--reasoning-effort=LEVEL]
//	    [--resume=ID] [--additional-mcp-config=@FILE] [--plugin-dir=DIR] [TOOL FLAGS] --usage-output-file=FILE
//	    [--no-ask-user] [ExtraArgs...]
//
// with the prompt on stdin, which copilot reads whole when -p is absent and
// stdin is not a terminal: the prompt is never an argument (copilot 1.0.102
// reads `-p "-x"` as an unquoted prompt and exits 1; `--prompt=-x` would
// work but an argument is capped at 128 KiB), so "--help", "-p x", "/help"
// and "@README.md" reach the model verbatim. Copilot puts a
// <current_datetime> element before every user message it sends.
// Caller-supplied values use the --flag=value form, so that a value
// starting with "-" is never read as a flag (copilot parses its argv with
// Rust's clap). --no-auto-update keeps copilot from downloading a newer
// version and running it instead of the installed one.
//
// # Permissions
//
// Headless copilot refuses, without asking, every tool call that needs
// approval (a shell command, a file write, an MCP tool, a URL): the model
// hears "Permission denied because no interactive user response was
// available" and goes on. That is the zero Request.Permission (deny),
// which passes no flag; COPILOT_ALLOW_ALL, which would approve everything,
// is set empty (off) in every mode but bypass.
//
//	bypass  --allow-all (tools, paths and URLs approved)
//	deny    nothing: what needs approval is refused
//	plan    --plan: copilot's plan mode, which blocks every change outside its session folder
//	ask     a live session (see below): the host decides each request
//
// # Tool lists
//
// Request.AllowedTools and DisallowedTools restrict in every mode (see
// tools.go): --available-tools (the only tools the model sees),
// --excluded-tools (never offered), --allow-tool (approved in advance) and
// --deny-tool (refused at call time, even under --allow-all).
//
// # System prompt
//
// Copilot has no system-prompt flag. Request.SystemPrompt is written to a
// private temporary directory as agentcli.instructions.md, named by
// COPILOT_CUSTOM_INSTRUCTIONS_DIRS (after the caller's own directories,
// when the environment sets some): copilot appends such a file, verbatim,
// to its own system prompt (SystemPromptAppend), after the instructions
// files of the repository (AGENTS.md, .github/copilot-instructions.md, ...).
//
// # Settings
//
// Request.MCPServers go to a private (0600) JSON file passed as
// --additional-mcp-config=@FILE, {"mcpServers": {NAME: {"type": "local",
// "command", "args", "env", "tools"} | {"type": "http", "url", "headers",
// "tools"}}}; copilot adds them to the servers of its own configuration
// and offers their tools as NAME-TOOL. A server that failed to start is an
// EventNotice naming it, with copilot's error, in one-shot runs; in live
// sessions (ACP) a server that fails to start is not reported: copilot
// says nothing of it there (mcpnotice.go). Request.Effort is
// --reasoning-effort=LEVEL (every level; copilot sends it as the Chat
// Completions reasoning_effort). Copilot has no max turns, structured
// output, fallback model or spending cap in USD (--max-ai-credits counts
// GitHub's AI credits).
//
// # Output, usage and errors
//
// Copilot prints JSONL: text deltas (assistant.message_delta), reasoning
// deltas and blocks, whole messages with their tool requests, tool
// executions and their results, retries, and a last "result" line with
// the session id and copilot's exit code (see parse.go). It reports no
// session id before that last line, so a run yields no EventInit. Token
// usage is not in the output: copilot writes it to the file named by
// --usage-output-file when the run ends, and the backend reads it and hands
// it to the parser as one more line, {"type": "agentcli.usage_file",
// "data": FILE}, which the wire log records like the others.
//
// An API error is a "session.error" event and exit 1: an
// *agentcli.ResultError whose Subtype is copilot's errorType ("query",
// "authentication", "rate_limit") and APIStatus its statusCode, with the
// server's message (from the failed model call) in Message. Copilot
// retries 429 and 5xx for up to a minute (no knob; 400 fails at once).
//
// # Sessions
//
// Result.SessionID is copilot's session UUID; Request.SessionID resumes it
// with --resume=ID (only a UUID is accepted: copilot would also match a
// session name or an id prefix). A resumed run moves to the session's own
// working directory, whatever Request.Dir says. An unknown id fails before
// a model call with "No session, task, or name matched" (exit 1), an
// *agentcli.ExitError matching agentcli.ErrSessionNotFound.
// Request.ForkSession forks through copilot's headless server first,
// Request.NewSessionID is --session-id (one-shot), and
// agentcli.ListSessions asks the headless server (see manage.go).
//
// # Live sessions
//
// StartSession (and a run under PermissionAsk) speaks the Agent Client
// Protocol with `copilot --acp` (see live.go). Copilot also has a richer
// headless JSON-RPC server (--headless --stdio, the protocol of its
// official SDKs, with system messages and host tools), but it frames
// messages with Content-Length headers and no newline, which a line-based
// session cannot read without holding the last message back; ACP is
// line-delimited, takes the same flags and carries everything agentcli
// asks of a live session (permissions, interrupt, load, usage).
//
// # Host tools, questions, hooks, switching
//
// Request.Tools are served by agentcli's MCP server, named in the private
// MCP configuration and approved in advance with --allow-tool=agentcli;
// Request.OnQuestion gets agentcli's question tool (hosttools.go).
// Request.Hooks' PreToolUse is an http hook of copilot's own, in a
// private plugin (hooks.go). A live session switches model and
// permission mode over ACP (switch.go).
//
// # Interactive mode
//
// agentcli.Interactive runs copilot's own UI (see interactive.go).
package copilot

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Name is the registry name of this backend.
const Name = "copilot"

func init() { driver.Register(Name, New) }

// New returns a GitHub Copilot CLI backend. opts may be nil; it is copied.
func New(opts *agentcli.Options) agentcli.Backend { return driver.New(&spec, opts) }

// spec declares GitHub Copilot CLI.
var spec = driver.Spec{
	Name:           Name,
	Credentials:    credentialVars,
	HasCredentials: hasCredentials,
	Login:          "run `copilot login`, or point it at a provider with COPILOT_PROVIDER_BASE_URL (and COPILOT_PROVIDER_API_KEY)",
	Caps: agentcli.Capabilities{
		TextDeltas:      true,
		Thinking:        true,
		Resume:          true,
		CumulativeUsage: true,
		SystemPrompt:    agentcli.SystemPromptAppend,
		ToolFilter:      true,
		Interrupt:       true,
		Steer:           agentcli.SteerQueued,
		PermissionModes: driver.PermissionModes,
		MCP:             true,
		Efforts:         agentcli.Efforts(),
		// See attach.go.
		Attachments: attachmentKinds,
		// See hosttools.go, hooks.go and switch.go.
		HostTools:     true,
		Questions:     true,
		Hooks:         hookSupport,
		SetModel:      true,
		SetPermission: driver.PermissionModes,
		// See manage.go.
		ForkSession:  agentcli.SessionModes{OneShot: true, Live: true},
		NewSessionID: agentcli.SessionModes{OneShot: true},
	},
	// A one-shot run with attachments is one turn of an ACP session
	// (attach.go).
	LiveRun: func(req *agentcli.Request) bool { return len(req.Attachments) > 0 },
	// PreToolUse is copilot's own hook (hooks.go).
	NativeHooks:   nativeHooks,
	Tools:         tools,
	Validate:      validate,
	Prepare:       prepare,
	NewParser:     func(r *driver.Run) driver.Parser { return newParser(r.Req.Model, r.Req.SessionID != "") },
	StartSession:  startSession,
	ReplaySession: replaySession,
	ExportSession: exportSession,
	ImportSession: importSession,
	ListSessions:  listSessions,
	Classify: driver.ClassifyBy(
		driver.ErrorMatch{Contains: []string{"no session, task, or name matched"}, Err: agentcli.ErrSessionNotFound},
		driver.ErrorMatch{Contains: []string{"no github oauth token", "authentication failed"}, Err: agentcli.ErrAuth},
	),
	Hint: driver.HintOn(
		driver.Hint{Contains: "Invalid command format", Say: "copilot read an argument as part of an unquoted prompt (check ExtraArgs)"},
		driver.Hint{Contains: "No prompt provided", Say: "the prompt was empty"},
	),
	Interactive: interactive,
}

// tools maps copilot's tool names to canonical ones. The shell's helpers
// (read_bash, write_bash, list_bash: the output and input of an async
// shell; stop_bash) follow the shell into and out of tool lists.
var tools = driver.Tools{
	"bash":               agentcli.ToolNameBash,
	"read_bash":          agentcli.ToolNameBashOutput,
	"write_bash":         agentcli.ToolNameBashOutput,
	"list_bash":          agentcli.ToolNameBashOutput,
	"stop_bash":          agentcli.ToolNameKillShell,
	"powershell":         agentcli.ToolNameBash,
	"read_powershell":    agentcli.ToolNameBashOutput,
	"write_powershell":   agentcli.ToolNameBashOutput,
	"list_powershell":    agentcli.ToolNameBashOutput,
	"stop_powershell":    agentcli.ToolNameKillShell,
	"view":               agentcli.ToolNameRead,
	"create":             agentcli.ToolNameWrite,
	"edit":               agentcli.ToolNameEdit,
	"str_replace_editor": agentcli.ToolNameEdit,
	"apply_patch":        agentcli.ToolNameEdit,
	"grep":               agentcli.ToolNameGrep,
	"rg":                 agentcli.ToolNameGrep,
	"glob":               agentcli.ToolNameGlob,
	"web_fetch":          agentcli.ToolNameWebFetch,
	"web_search":         agentcli.ToolNameWebSearch,
	"task":               agentcli.ToolNameTask,
	"skill":              agentcli.ToolNameSkill,
	"ask_user":           agentcli.ToolNameAskUserQuestion,
	"exit_plan_mode":     agentcli.ToolNameExitPlanMode,
}
