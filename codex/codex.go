// Package codex is the agentcli backend for the OpenAI Codex CLI (`codex`),
// driven through `codex exec --json`. Importing it registers the backend as
// "codex". It was written against codex-cli 0.169.0.
//
// # Command line
//
// Every run is
//
//	codex exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check \
//	    [--cd=DIR] [--model=MODEL] [--profile=NAME | -c developer_instructions="..."] \
//	    [-c model_reasoning_effort="LEVEL"] [--output-schema=FILE] [ExtraArgs...] \
//	    [resume -- SESSION_ID] -
//
// The prompt is written to stdin (the final "-"), which is then closed:
// codex reads stdin to EOF whenever it is not a terminal, so it must end,
// and on stdin the prompt can neither be read as a flag nor hit the
// kernel's 128 KiB limit on one argument. Invalid UTF-8 in the prompt, which
// codex rejects, is replaced with U+FFFD. Request.Dir is both the process's
// working directory and, made absolute, the --cd value. Options sit before
// `resume` because --cd (like -s, -p and --add-dir) exists only at the exec
// level; exec-level options also apply to the resumed thread. codex exec
// never asks for approvals; the bypass flag also turns off codex's own
// sandbox, which needs unprivileged user namespaces that containers seldom
// have.
//
// # System prompt
//
// codex has no system-prompt flag. Request.SystemPrompt becomes codex's
// developer_instructions setting, which codex sends to the model as a
// developer-role message at the start of the thread, after its own base
// instructions: Capabilities().SystemPrompt is
// agentcli.SystemPromptDeveloper. It is written, encoded as a TOML basic
// string (every quote, backslash and control character escaped, so any text
// arrives intact), into a private (0600) profile file in CODEX_HOME under a
// random name, selected with --profile=NAME and removed when the run ends:
// codex 0.169.0 reads profiles only from CODEX_HOME, and has no other file,
// variable or stdin channel for developer instructions. So the system
// prompt never appears in argv, which every local user can read in
// /proc/PID/cmdline. When Request.ExtraArgs select a profile of their own
// (codex takes one), it falls back to the config override
// -c developer_instructions="..." on the command line, with a warning; it
// must then fit in one argument (about 128 KiB; Run fails early
// otherwise). The alternatives are worse: model_instructions_file replaces
// codex's own base instructions (which describe its tools), and AGENTS.md
// would mean writing into the user's project. When resuming, codex 0.169.0
// keeps the developer message the thread started with and ignores a new
// one.
//
// # Settings
//
// Request.MCPServers become [mcp_servers.NAME] tables (command, args and
// env, or url and http_headers, every value a TOML string, which codex
// expands nothing in) in the same private profile file as the system
// prompt, so credentials in Env and Headers never reach argv. When
// Request.ExtraArgs select a profile of their own, servers go on the
// command line as -c mcp_servers.NAME.command/args/url overrides instead,
// with a warning, and a server with Env or Headers is refused with an
// *agentcli.RequestError. They are added to the servers of the user's
// config.toml, which stay available. codex starts a stdio server with only
// a few variables of its own environment (HOME, PATH, ...) besides Env,
// offers the tools to the model as a namespace "mcp__NAME" ("-" in NAME
// made "_"), and reports calls as mcp_tool_call items.
//
// Request.OutputSchema is written to a private file passed with
// --output-schema: codex asks the Responses API for a strict json_schema
// text format, and the final agent message is the JSON value, which is
// Result.StructuredOutput (a final message that is not JSON fails the run
// with a *agentcli.ResultError). Request.Effort is
// -c model_reasoning_effort="LEVEL" (minimal, low, medium, high, xhigh;
// the request's reasoning.effort; codex 0.169.0 passes any word on, the
// API decides). codex has no fallback model and no spending cap.
//
// Live sessions (`codex app-server`; StartSession, and runs with a
// permission mode other than bypass) carry the same settings through the
// protocol instead: the MCP servers as thread/start's (or
// thread/resume's) config overrides, on stdin, so a profile chosen in
// ExtraArgs does not matter; the effort and the output schema with every
// turn, each turn's final agent message being its
// Result.StructuredOutput. Under PermissionAsk codex asks before an MCP
// tool runs (an MCP elicitation), which becomes a permission request for
// "mcp__NAME__TOOL"; under PermissionDeny the call is refused. See
// live.go.
//
// # Events
//
// codex exec reports whole items, never text deltas. thread.started gives
// EventInit with the thread id as session id; agent_message items are
// EventText (the final text is the last one); reasoning summaries are
// EventThinking; command_execution (canonical "Bash", input {"command"}),
// file_change ("Write" when every change adds a file, "Delete" when every
// change deletes one, "Edit" otherwise), mcp_tool_call (raw name
// "mcp__<server>__<tool>", Claude Code's spelling for MCP tools),
// web_search ("WebSearch"), todo_list ("TodoWrite"; each plan update is a
// new tool use under the item's id) and collab_tool_call ("Task") become
// EventToolUse when they start and EventToolResult when they complete (both
// at once when only the completion is reported). error items (warnings) and
// top-level error events are EventNotice; top-level "Reconnecting... N/M"
// errors are EventRetry. turn.completed gives EventUsage.
//
// # Outcome and usage
//
// A run succeeds when codex exits 0 after turn.completed with no
// turn.failed. turn.failed gives a *agentcli.ResultError. codex does not
// report HTTP statuses as such; APIStatus is recovered from the way codex
// words each error (a 400 is the raw response body, a 500 is "We're
// currently experiencing high demand...", others say "unexpected status N"
// or "last status: N"), and Kind follows from the status or the wording. A
// non-zero exit with no terminal
// event gives a *agentcli.ExitError (an unknown session id is
// ErrSessionNotFound); exit 0 without turn.completed gives a
// *agentcli.NoResultError.
//
// turn.completed carries the token usage of the whole thread, every resumed
// turn included. For a new thread that is exactly the run's usage; for a
// resumed one Usage.Cumulative is set (Capabilities().CumulativeUsage is
// true). codex reports no cost and has no max-turns or tool-filter flags;
// those Request fields are ignored with a warning.
//
// Request.SessionID must be a thread id (a UUID): codex reads any other
// word as a thread name and, when no thread has that name, silently starts
// a new one, so such ids are refused with an *agentcli.RequestError before
// anything starts. Should codex still report another thread than the one
// asked for, the backend reports an EventNotice, and Result.SessionID is
// the thread codex ran.
//
// # Interactive mode
//
// agentcli.Interactive runs codex's own UI (the TUI) on a terminal:
//
//	codex [resume] --no-daemon --dangerously-bypass-approvals-and-sandbox|--ask-for-approval=on-request
//	      [--cd=DIR] [--model=M] [--profile=NAME] [-c model_reasoning_effort="LEVEL"]
//	      [ExtraArgs...] [-- [SESSION_ID] [PROMPT]]
//
// for PermissionBypass and PermissionAsk (codex has no plan or deny mode on
// its command line). --no-daemon keeps the TUI from starting codex's shared
// background server, which would outlive it. The system prompt and the MCP
// servers go through a private profile, as in a run; the TUI takes no
// output schema (ignored with a warning, or refused under Options.Strict).
// The first message is positional, after "--", and submitted as typed. In a git repository the TUI first
// asks whether to trust the folder; agentclitest.Server.Wire trusts its
// working directory.
package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/runner"
)

// Name is the registry name of this backend.
const Name = "codex"

func init() { agentcli.Register(Name, New) }

// New returns a Codex backend. opts may be nil; it is copied.
func New(opts *agentcli.Options) agentcli.Backend { return runner.New(&spec, opts) }

// spec declares codex exec: whole items (no text deltas), reasoning
// summaries, resume, a developer-message system prompt and thread-total
// usage; no max turns, tool filter or cost.
var spec = runner.Spec{
	Name:        Name,
	Binary:      "codex",
	Package:     "@openai/codex",
	Tested:      "0.169.0",
	Credentials: []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
	Caps: agentcli.Capabilities{
		Thinking:        true,
		Resume:          true,
		SystemPrompt:    agentcli.SystemPromptDeveloper,
		CumulativeUsage: true,
		Sessions:        true,
		Interrupt:       true,
		PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan},

		MCP:              true,
		StructuredOutput: true,
		Efforts: []agentcli.Effort{agentcli.EffortMinimal, agentcli.EffortLow, agentcli.EffortMedium,
			agentcli.EffortHigh, agentcli.EffortXHigh},
	},
	// codex exec reports item types rather than tool names; the parser
	// passes these item types (and exec_command-style names where it sees
	// them) here.
	Tools:         tools,
	Validate:      validate,
	Prepare:       prepare,
	StartSession:  startSession,
	ReplaySession: replaySession,
	NewParser:     func(r *runner.Run) runner.Parser { return newParser(r.Req) },
	// codex prints "Stack backtrace:" and a list of frames after a fatal
	// error; the error line before it is what matters.
	Stderr: func(s string) string {
		if i := strings.Index(s, "\nStack backtrace:"); i >= 0 {
			return s[:i]
		}
		return s
	},
	Classify: func(msg string) error {
		switch {
		case runner.Contains(msg, "no rollout found"):
			return agentcli.ErrSessionNotFound
		case runner.Contains(msg, "usage limit"):
			return agentcli.ErrRateLimited
		}
		return nil
	},
	Hint: func(e runner.Exit) string {
		switch {
		case strings.Contains(e.Stderr, "No prompt provided"):
			return "codex exec needs a non-empty prompt"
		case strings.Contains(e.Stderr, "no rollout found"):
			return "codex has no thread with that session id in its CODEX_HOME; start a new session"
		}
		return ""
	},
	Interactive: interactive,
}

// tools maps codex's tool names to canonical ones.
var tools = runner.Tools{
	"command_execution":  agentcli.ToolNameBash,
	"exec_command":       agentcli.ToolNameBash,
	"shell":              agentcli.ToolNameBash,
	"local_shell":        agentcli.ToolNameBash,
	"file_change":        agentcli.ToolNameEdit,
	"apply_patch":        agentcli.ToolNameEdit,
	"web_search":         agentcli.ToolNameWebSearch,
	"todo_list":          agentcli.ToolNameTodoWrite,
	"update_plan":        agentcli.ToolNameTodoWrite,
	"view_image":         agentcli.ToolNameRead,
	"request_user_input": agentcli.ToolNameAskUserQuestion,
	"collab_tool_call":   agentcli.ToolNameTask,
}

// writeRunProfile writes the private profile that carries the request's
// system prompt and MCP servers, if it has any, and returns its name ("":
// none, or they go on the command line as -c overrides). The profile keeps
// them out of argv (readable by every local user), unless the caller picks
// a profile of their own: codex takes one. MCP servers with Env or Headers
// (credentials, as a rule) never go on the command line. The profile is
// removed when the run ends.
func writeRunProfile(r *runner.Run) (string, error) {
	req := r.Req
	if req.SystemPrompt == "" && len(req.MCPServers) == 0 {
		return "", nil
	}
	if selectsProfile(req.ExtraArgs) {
		for i, s := range req.MCPServers {
			if len(s.Env) > 0 || len(s.Headers) > 0 {
				return "", &agentcli.RequestError{Backend: Name, Field: fmt.Sprintf("MCPServers[%d]", i),
					Reason: "Request.ExtraArgs select a codex profile, so the server's Env or Headers would go on the command line"}
			}
		}
		r.Logger.Warn("agentcli: Request.ExtraArgs select a codex profile; the system prompt and MCP servers go on the command line",
			"backend", Name)
		return "", nil
	}
	name, remove, err := writeProfile(r.Env, r.Dir, profileContent(req))
	if err != nil {
		return "", err
	}
	r.Defer(remove)
	return name, nil
}

// prepare builds one run: the prompt goes on stdin, the working directory
// is passed with --cd as well.
func prepare(_ context.Context, r *runner.Run) (*runner.Job, error) {
	req := r.Req
	if req.SystemPrompt != "" && req.SessionID != "" {
		r.Logger.Debug("agentcli: codex keeps a resumed thread's original developer instructions; the system prompt has no effect",
			"backend", Name)
	}
	var files runFiles
	var err error
	if files.profile, err = writeRunProfile(r); err != nil {
		return nil, err
	}
	if len(req.OutputSchema) > 0 {
		dir, err := r.TempDir()
		if err != nil {
			return nil, err
		}
		files.schema = filepath.Join(dir, "output-schema.json")
		if err := os.WriteFile(files.schema, req.OutputSchema, 0o600); err != nil {
			return nil, err
		}
	}
	args := buildArgsFiles(req, r.Dir, files)
	if err := checkArgs(args); err != nil {
		return nil, err
	}
	return &runner.Job{
		Args:  args,
		Stdin: []byte(strings.ToValidUTF8(req.Prompt, "\uFFFD")),
	}, nil
}
