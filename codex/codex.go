// Package codex is the agentcli backend for the OpenAI Codex CLI (`codex`),
// driven through `codex exec --json`. Importing it registers the backend as
// "codex". It was written against codex-cli 0.169.0.
//
// # Command line
//
// A run is
//
//	codex exec --json --sandbox=read-only|--dangerously-bypass-approvals-and-sandbox --skip-git-repo-check \
//	    [--cd=DIR] [--model=MODEL] [-c model_reasoning_effort="LEVEL"] \
//	    [--output-schema=FILE] [ExtraArgs...] [resume -- SESSION_ID] -
//
// unless it has a system prompt or MCP servers and no ExtraArgs: such a run
// is one turn of a live session on `codex app-server` (see below and
// live.go), which takes them on stdin.
//
// The prompt is written to stdin (the final "-"), which is then closed:
// codex reads stdin to EOF whenever it is not a terminal, so it must end,
// and on stdin the prompt can neither be read as a flag nor hit the
// kernel's 128 KiB limit on one argument. Invalid UTF-8 in the prompt, which
// codex rejects, is replaced with U+FFFD. Request.Dir is both the process's
// working directory and, made absolute, the --cd value. Options sit before
// `resume` because --cd (like -s, -p and --add-dir) exists only at the exec
// level; exec-level options also apply to the resumed thread. codex exec
// never asks for approvals: the zero Request.Permission (deny) and
// PermissionPlan run in codex's read-only sandbox (commands run, writes
// fail, and the model sees why), PermissionBypass without it (the bypass
// flag); tool lists are codex's feature switches (see tools.go). The
// sandbox needs unprivileged user namespaces (codex ships bubblewrap),
// which some containers lack: there, use PermissionBypass inside a
// sandbox of your own.
//
// # Nothing written into CODEX_HOME
//
// agentcli writes no file into the user's CODEX_HOME and never creates it:
// a CODEX_HOME that does not exist is codex's own immediate error. Private
// files (the output schema, an MCP server's Env) live in the run's own
// temporary directory, removed when the run ends. codex 0.169.0 reads
// extra configuration only from CODEX_HOME (profiles: --profile takes a
// plain name, never a path), from the project's .codex directory, or from
// -c overrides on the command line, which every local user can read in
// /proc/PID/cmdline; a private CODEX_HOME would lose the user's login and
// configuration. So what must stay private goes through app-server.
//
// # System prompt
//
// codex has no system-prompt flag. Request.SystemPrompt becomes codex's
// developer instructions, which codex sends to the model as a
// developer-role message at the start of the thread, after its own base
// instructions: Capabilities().SystemPrompt is
// agentcli.SystemPromptDeveloper. A run with one goes through app-server,
// whose thread/start takes them (developerInstructions) on stdin, so the
// system prompt never appears in argv. A run with Request.ExtraArgs stays
// on codex exec (app-server takes none of exec's flags): the system prompt
// is then the config override -c developer_instructions="..." (a TOML
// basic string, every quote, backslash and control character escaped, so
// any text arrives intact), with a warning (once per backend); it must fit
// in one argument (about 128 KiB; Run fails early otherwise).
// model_instructions_file would replace codex's own base instructions
// (which describe its tools), and AGENTS.md would mean writing into the
// user's project. When resuming, codex 0.169.0 keeps the developer message
// the thread started with and ignores a new one.
//
// # Settings
//
// Request.MCPServers, likewise, make a run go through app-server, whose
// thread/start takes them as config overrides on stdin, Env and Headers
// included. A run with ExtraArgs takes them on exec's command line as
// -c mcp_servers.NAME.command/args/url overrides (every value a TOML
// string, which codex expands nothing in), with the warning: a stdio
// server's Env then goes into a private (0600) file in the run's temporary
// directory, which a /bin/sh wrapper (the server's command) reads before
// it runs the server, so it is on no command line; a server with Headers
// is refused with an *agentcli.RequestError (codex reads headers only from
// its config or its own environment, which the commands the model runs
// inherit). They are added to the servers of the user's config.toml,
// which stay available. codex starts a stdio server with only a few
// variables of its own environment (HOME, PATH, ...) besides Env, offers
// the tools to the model as a namespace "mcp__NAME" ("-" in NAME made
// "_"), and reports calls as mcp_tool_call items. Each server is marked
// required, with a startup timeout of 60 s, so that codex waits for it
// before its first model request (codex 0.169.0 waits for no other
// server, and a slow one's tools would be missing from the first turn);
// a server that does not start in time fails the run, with an
// *agentcli.ProtocolError for thread/start (with ExtraArgs, exec's
// *agentcli.ExitError) that names it.
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
// Live sessions (`codex app-server`; StartSession, runs with a permission
// mode other than bypass, and runs with a system prompt or MCP servers but
// no ExtraArgs) carry the same settings through the protocol instead: the
// MCP servers as thread/start's (or thread/resume's) config overrides, on
// stdin; the effort and the output schema with every
// turn, each turn's final agent message being its
// Result.StructuredOutput. Under PermissionAsk codex asks before an MCP
// tool runs (an MCP elicitation), which becomes a permission request for
// "mcp__NAME__TOOL"; under PermissionDeny the call is refused. See
// live.go.
//
// # Host tools, questions and hooks
//
// Request.Tools, Request.OnQuestion and Request.Hooks make a run go
// through app-server (with ExtraArgs they are an *agentcli.UnsupportedError:
// exec takes headers only from its config). The host tools are
// agentcli's MCP server "agentcli" in thread/start's config, required as
// every server is (see Settings), with each tool's approval_mode
// "approve" (agentcli decides each call itself) and tool_timeout_sec
// driver.HostToolTimeout (codex 0.169.0 gives up on a call after 300 s by
// default); the tool lists leave it alone. Questions are codex's
// request_user_input (live.go); hooks, hooks.go.
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
//	      [--cd=DIR] [--model=M] [-c developer_instructions="..."] [-c mcp_servers...]
//	      [-c model_reasoning_effort="LEVEL"]
//	      [ExtraArgs...] [-- [SESSION_ID] [PROMPT]]
//
// for PermissionBypass and PermissionAsk (codex has no plan or deny mode on
// its command line). --no-daemon keeps the TUI from starting codex's shared
// background server, which would outlive it. The system prompt and the MCP
// servers are on its command line, as in an exec run with ExtraArgs (a
// stdio server's Env through a private file, a server with Headers
// refused); the TUI takes no output schema (ignored with a warning, or
// refused under Options.Strict).
// The first message is positional, after "--", and submitted as typed. In a git repository the TUI first
// asks whether to trust the folder; agentclitest.Server.Wire trusts its
// working directory.
package codex

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Name is the registry name of this backend.
const Name = "codex"

func init() { driver.Register(Name, New) }

// New returns a Codex backend. opts may be nil; it is copied.
func New(opts *agentcli.Options) agentcli.Backend { return driver.New(&spec, opts) }

// spec declares codex exec: whole items (no text deltas), reasoning
// summaries, resume, a developer-message system prompt and thread-total
// usage; no max turns, tool filter or cost.
var spec = driver.Spec{
	Name:           Name,
	Credentials:    credentialVars,
	HasCredentials: hasCredentials,
	Login:          "run `codex login`, or configure a model provider in config.toml",
	Caps: agentcli.Capabilities{
		Thinking:        true,
		Resume:          true,
		SystemPrompt:    agentcli.SystemPromptDeveloper,
		CumulativeUsage: true,
		ToolFilter:      true,
		Interrupt:       true,
		SetModel:        true,
		SetPermission:   driver.PermissionModes,
		Steer:           agentcli.SteerNative,
		PermissionModes: driver.PermissionModes,

		MCP:              true,
		StructuredOutput: true,
		Efforts: []agentcli.Effort{agentcli.EffortMinimal, agentcli.EffortLow, agentcli.EffortMedium,
			agentcli.EffortHigh, agentcli.EffortXHigh},
		HostTools: true,
		Questions: true,
		Hooks:     hookSupport,
		// See attach.go.
		Attachments: attachmentKinds,

		ForkSession: agentcli.SessionModes{OneShot: true, Live: true},

		// Limits (limits.go): live sessions only (the app-server); codex exec
		// reports none of them.
		ContextUsage:   true,
		Compaction:     true,
		RateLimits:     true,
		RateLimitReset: true,
	},
	// codex asks with its own request_user_input tool, in app-server.
	Questions: func(*agentcli.Request) bool { return true },
	// codex exec reports item types rather than tool names; the parser
	// passes these item types (and exec_command-style names where it sees
	// them) here.
	Tools:         tools,
	Validate:      validate,
	Prepare:       prepare,
	StartSession:  startSession,
	LiveRun:       needsAppServer,
	ReplaySession: replaySession,
	NewParser:     func(r *driver.Run) driver.Parser { return newParser(r.Req) },
	// codex prints "Stack backtrace:" and a list of frames after a fatal
	// error; the error line before it is what matters.
	Stderr: func(s string) string {
		if i := strings.Index(s, "\nStack backtrace:"); i >= 0 {
			return s[:i]
		}
		return s
	},
	Classify: driver.ClassifyBy(
		driver.ErrorMatch{Contains: []string{"no rollout found"}, Err: agentcli.ErrSessionNotFound},
		driver.ErrorMatch{Contains: []string{"usage limit"}, Err: agentcli.ErrRateLimited},
	),
	Hint: driver.HintOn(
		driver.Hint{Contains: "No prompt provided", Say: "codex exec needs a non-empty prompt"},
		driver.Hint{Contains: "no rollout found", Say: "codex has no thread with that session id in its CODEX_HOME; start a new session"},
	),
	Interactive:   interactive,
	ExportSession: exportSession,
	ImportSession: importSession,
	ListSessions:  listSessions,
}

// tools maps codex's tool names to canonical ones.
var tools = driver.Tools{
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

// needsAppServer reports that a run of req goes through codex app-server
// (a one-shot turn of a live session) rather than codex exec: it has a
// system prompt or MCP servers, which app-server takes on stdin, while
// exec would take them only on its command line (every local user can
// read it) or in a profile file in the user's CODEX_HOME. A run with
// ExtraArgs stays on exec, whose flags they are.
func needsAppServer(req *agentcli.Request) bool {
	return len(req.ExtraArgs) == 0 && (req.SystemPrompt != "" || len(req.MCPServers) > 0 || req.OnQuestion != nil || req.Hooks != nil)
}

// commandLineSettings readies the system prompt and MCP servers of a run
// that has to take them on the command line (what says which: codex exec
// with ExtraArgs, or the interactive UI) and returns the request to build
// its arguments from. A stdio server's Env goes into a private (0600) file
// in the run's own temporary directory, which a /bin/sh wrapper reads
// before it runs the server (serverEnvFile), so that no credential is on a
// command line; an HTTP server with Headers is refused with an
// *agentcli.RequestError (codex reads headers only from its config or its
// own environment, which the commands the model runs inherit). The system
// prompt is allowed, with a warning (once per backend).
func commandLineSettings(r *driver.Run, req *agentcli.Request, what string) (*agentcli.Request, error) {
	if req.SystemPrompt == "" && len(req.MCPServers) == 0 {
		return req, nil
	}
	c := *req
	c.MCPServers = slices.Clone(req.MCPServers)
	for i, s := range c.MCPServers {
		if len(s.Headers) > 0 {
			return nil, &agentcli.RequestError{Backend: Name, Field: fmt.Sprintf("MCPServers[%d]", i),
				Reason: what + " takes MCP servers on its command line only, where the server's Headers would be readable by every local user"}
		}
		if len(s.Env) > 0 {
			file, err := serverEnvFile(r, i, s)
			if err != nil {
				return nil, err
			}
			c.MCPServers[i].Args = append([]string{"-c", `. "$0" && exec "$@"`, file, s.Command}, s.Args...)
			c.MCPServers[i].Command = "/bin/sh"
			c.MCPServers[i].Env = nil
		}
	}
	r.Warn("settings on the command line: "+what, "agentcli: "+what+" takes the system prompt and MCP servers on its command line, which every local user can read",
		"backend", Name)
	return &c, nil
}

// serverEnvFile writes the Env of MCP server s (the i-th) as a shell file
// of export lines, each value single-quoted, private to the user, in the
// run's temporary directory, and returns its path.
func serverEnvFile(r *driver.Run, i int, s agentcli.MCPServer) (string, error) {
	dir, err := r.TempDir()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	env := driver.MCPEnv(s)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		// Keys are shell names (the runner checks them); a value is
		// single-quoted, its own quotes written as '\''.
		b.WriteString("export " + k + "='" + strings.ReplaceAll(env[k], "'", `'\''`) + "'\n")
	}
	path := filepath.Join(dir, fmt.Sprintf("mcp-%d.env", i))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// prepare builds one run: the prompt goes on stdin, the working directory
// is passed with --cd as well.
func prepare(_ context.Context, r *driver.Run) (*driver.Job, error) {
	if r.HostTools() != nil || r.Req.OnQuestion != nil || r.Req.Hooks != nil {
		// Only app-server, which takes no ExtraArgs, carries the host
		// tools' server (its secret is a header), asks questions and
		// lets the host see calls before they run.
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "host tools, questions and hooks with Request.ExtraArgs",
			Reason: "they need codex app-server, which takes none of codex exec's flags"}
	}
	req := restrict(r.Req)
	if req.SystemPrompt != "" && req.SessionID != "" {
		r.Logger.Debug("agentcli: codex keeps a resumed thread's original developer instructions; the system prompt has no effect",
			"backend", Name)
	}
	req, err := commandLineSettings(r, req, "codex exec with Request.ExtraArgs")
	if err != nil {
		return nil, err
	}
	var files runFiles
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
	if args, err = imageArgs(r, args, req.Attachments, req.SessionID != ""); err != nil {
		return nil, err
	}
	if err := checkArgs(args); err != nil {
		return nil, err
	}
	return &driver.Job{
		Args:  args,
		Stdin: []byte(strings.ToValidUTF8(driver.InlineText(req.Prompt, req.Attachments), "\uFFFD")),
	}, nil
}
