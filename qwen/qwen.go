// Package qwen is the agentcli backend for Qwen Code (`qwen`, npm
// @qwen-code/qwen-code, tested with 0.24.4). Importing it registers the
// backend as "qwen".
//
// # Command line
//
// Every run speaks qwen's stream-json protocol, Claude Code's almost
// verbatim:
//
//	qwen --input-format stream-json --output-format stream-json [--include-partial-messages]
//	     --approval-mode=yolo|default|plan [--append-system-prompt=TEXT] [--resume=ID]
//	     [tool lists] [--max-session-turns=N] [--model=M] [--fallback-model=M]
//	     [--mcp-config=FILE] [ExtraArgs...]
//
// The prompt is one stream-json user message on stdin (never an argument,
// so it is never read as a flag and may exceed one argument's 128 KiB);
// qwen's plain-text stdin would get two newlines appended, and its
// --prompt argument is size-bound. Values from the caller are attached
// with "=" (see buildArgs).
//
// Qwen acts on some prompt text before the model sees it, stream-json
// messages included, so two changes are made, and only these (see
// promptText): a prompt starting with "/" (a slash command: /help ends
// the turn with no model call) gets one space in front, and each "@" that
// starts a file reference (whose content qwen would append) gets qwen's
// own escape, a backslash, which stays in the text.
//
// # Permissions
//
// PermissionBypass is --approval-mode=yolo, a plain one-shot run (stdin
// closed after the prompt). Whenever its input is stream-json, qwen asks
// the host about every call that needs approval (a can_use_tool control
// request on stdout) and waits for the answer, even with its stdin closed:
// so a run in any other mode is one turn of a live session (see live.go),
// which answers: the zero mode (deny) and plan refuse, ask calls
// OnPermission. Deny is --approval-mode=default (reading and searching
// run; a command or an edit is asked about, refused, and the model hears
// "[Operation Cancelled] Reason: ..."); plan is qwen's plan mode. Tool
// lists: see tools.go.
//
// # System prompt and settings
//
// Request.SystemPrompt is appended to qwen's with --append-system-prompt
// (qwen has no file or protocol channel for it, so it is on the command
// line, visible to other local users, and limited to 128 KiB).
// Request.MCPServers go to a private (0600) file in the run's temporary
// directory passed with --mcp-config=FILE (qwen reads it as it is: no
// variable expansion), stdio servers as {command, args, env}, HTTP ones as
// {httpUrl, headers}; their tools are "mcp__NAME__TOOL", which qwen defers
// behind its tool_search tool. A server that did not start ("disconnected"
// in the init line) is an EventNotice naming it, after the EventInit, once
// per run or live session (mcpnotice.go). Request.Effort (low, medium, high, xhigh,
// max) is sent in the session's initialize request (a run with an effort
// is one turn of a live session): qwen's model.reasoningEffort, the
// request's reasoning.effort. Request.FallbackModel is --fallback-model.
// Qwen has no structured output agentcli can use: "--json-schema cannot
// be used with --input-format stream-json; the "first structured_output
// call ends the session" contract is incompatible with the long-lived
// stream-json input protocol" (qwen 0.24.4), and stream-json input is the
// only way to pass a prompt to qwen exactly.
// Request.MaxTurns is --max-session-turns (qwen then exits 53 with no
// result line: an *agentcli.ExitError). Qwen has no spending cap.
//
// # Host tools, questions and hooks
//
// Request.Tools are agentcli's MCP server, loaded up front and approved
// in advance; Request.OnQuestion gets qwen's ask_user_question (a live
// turn), or agentcli's question tool under an allow list (hosttools.go);
// Request.Hooks are qwen's own settings hooks, posting to a loopback
// endpoint of the run's (hooks.go).
//
// # Sessions
//
// Result.SessionID is qwen's session UUID; Request.SessionID passes it to
// --resume. Qwen keeps sessions per working directory
// (~/.qwen/projects/<dir>/chats), so a session must be resumed from the
// Request.Dir that created it; elsewhere it is not found
// (agentcli.ErrSessionNotFound). Request.ForkSession is --fork-session,
// Request.NewSessionID --session-id, Request.Continue resumes the newest
// session agentcli.ListSessions finds (see manage.go).
//
// # Output, usage and errors
//
// See parse.go. Usage is the run's total: qwen's input_tokens count cache
// reads, which agentcli reports apart (InputTokens excludes them). An API
// error is a *agentcli.ResultError whose APIStatus is read from qwen's
// "[API Error: 400 Bad Request]" (qwen does not pass the server's message
// on). Qwen retries 429 and 5xx about seven times over more than a minute
// (no setting bounds it).
package qwen

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Name is the registry name of this backend.
const Name = "qwen"

func init() { driver.Register(Name, New) }

// New returns a Qwen Code backend. opts may be nil; it is copied.
func New(opts *agentcli.Options) agentcli.Backend { return driver.New(&spec, opts) }

var spec = driver.Spec{
	Name:           Name,
	Credentials:    credentialVars,
	HasCredentials: hasCredentials,
	Login:          "set an OpenAI-compatible key and base URL (OPENAI_API_KEY, OPENAI_BASE_URL), or configure a provider in ~/.qwen/settings.json (/auth in `qwen`)",
	Caps: agentcli.Capabilities{
		TextDeltas:      true,
		Thinking:        true,
		Resume:          true,
		SystemPrompt:    agentcli.SystemPromptAppend,
		MaxTurns:        true,
		ToolFilter:      true,
		Interrupt:       true,
		SetModel:        true,
		SetPermission:   driver.PermissionModes,
		Steer:           agentcli.SteerQueued,
		PermissionModes: driver.PermissionModes,

		MCP:           true,
		Efforts:       []agentcli.Effort{agentcli.EffortLow, agentcli.EffortMedium, agentcli.EffortHigh, agentcli.EffortXHigh, agentcli.EffortMax},
		FallbackModel: true,
		HostTools:     true,
		Questions:     true,
		Hooks:         hookSupport,
		// See manage.go.
		ForkSession:  agentcli.SessionModes{OneShot: true, Live: true},
		NewSessionID: agentcli.SessionModes{OneShot: true, Live: true},
	},
	// Host tools, questions and hooks: hosttools.go.
	Questions:     nativeQuestions,
	NativeHooks:   nativeHooks,
	Tools:         tools,
	Validate:      validate,
	Prepare:       prepare,
	NewParser:     func(*driver.Run) driver.Parser { return newParser() },
	StartSession:  startSession,
	LiveRun:       func(req *agentcli.Request) bool { return !oneShot(req) || req.Effort != "" || asksNative(req) },
	ReplaySession: replaySession,
	ExportSession: exportSession,
	ImportSession: importSession,
	ListSessions:  listSessions,
	Classify: driver.ClassifyBy(
		driver.ErrorMatch{Contains: []string{"no saved session found", "session not found"}, Err: agentcli.ErrSessionNotFound},
		driver.ErrorMatch{Contains: []string{"[api error: 401", "[api error: 403", "missing api key"}, Err: agentcli.ErrAuth},
		driver.ErrorMatch{Contains: []string{"[api error: 429", "possible quota limitations"}, Err: agentcli.ErrRateLimited},
	),
	Interactive: interactive,
	Stderr:      usageError,
}

// usageError reduces qwen's answer to a command line it refuses (its
// whole --help text, then the error) to the error, so that the words of
// the help ("Authentication type", ...) are not read as the error's kind.
func usageError(s string) string {
	if !strings.Contains(s, "Usage: qwen ") || !strings.Contains(s, "\nOptions:\n") {
		return s
	}
	parts := strings.Split(strings.TrimSpace(s), "\n\n")
	return strings.TrimSpace(parts[len(parts)-1])
}

// tools maps qwen's tool names (0.24.4's ToolNames) to canonical ones.
var tools = driver.Tools{
	"run_shell_command": agentcli.ToolNameBash,
	"monitor":           agentcli.ToolNameBashOutput,
	"task_stop":         agentcli.ToolNameKillShell,
	"read_file":         agentcli.ToolNameRead,
	"zoom_image":        agentcli.ToolNameRead,
	"list_directory":    agentcli.ToolNameLS,
	"write_file":        agentcli.ToolNameWrite,
	"edit":              agentcli.ToolNameEdit,
	"notebook_edit":     agentcli.ToolNameNotebookEdit,
	"glob":              agentcli.ToolNameGlob,
	"grep_search":       agentcli.ToolNameGrep,
	"web_fetch":         agentcli.ToolNameWebFetch,
	"web_search":        agentcli.ToolNameWebSearch,
	"todo_write":        agentcli.ToolNameTodoWrite,
	"save_memory":       agentcli.ToolNameMemory,
	"agent":             agentcli.ToolNameTask,
	"skill":             agentcli.ToolNameSkill,
	"ask_user_question": agentcli.ToolNameAskUserQuestion,
	"exit_plan_mode":    agentcli.ToolNameExitPlanMode,
}

// prepare builds a one-shot run (bypass only; see LiveRun): the argv of
// buildArgs and the prompt as one stream-json message on stdin, which is
// then closed.
func prepare(_ context.Context, r *driver.Run) (*driver.Job, error) {
	if err := checkNewID(r); err != nil {
		return nil, err // manage.go
	}
	mcpFile, err := writeMCPConfig(r)
	if err != nil {
		return nil, err
	}
	henv, _, err := hookEnv(r) // hooks.go
	if err != nil {
		return nil, err
	}
	return &driver.Job{Args: buildArgs(r.Req, r.Deltas, mcpFile), Stdin: userMessage(r.Req.Prompt), Env: henv}, nil
}

// writeMCPConfig writes the request's MCP servers, if any, to a private
// file in the run's temporary directory and returns its path ("" for
// none).
func writeMCPConfig(r *driver.Run) (string, error) {
	if len(r.Req.MCPServers) == 0 {
		return "", nil
	}
	dir, err := r.TempDir()
	if err != nil {
		return "", err
	}
	f := filepath.Join(dir, "mcp.json")
	return f, os.WriteFile(f, mcpConfig(r.Req.MCPServers, r.HostTools() != nil), 0o600)
}

// mcpConfig returns the --mcp-config file content for servers:
// {"mcpServers": {NAME: {command, args, env} | {httpUrl, headers}}},
// every value as given (qwen expands nothing in this file). host says
// that the server named agentcli.HostServerName is agentcli's own, whose
// tools qwen must offer up front ("alwaysLoadTools"; hosttools.go) and
// whose calls may run as long as their handlers do ("timeout", qwen's
// limit for one call, driver.HostToolTimeout in ms; qwen 0.24.4's default
// is 10 minutes). It is pure.
func mcpConfig(servers []agentcli.MCPServer, host bool) []byte {
	type server struct {
		Command         string            `json:"command,omitempty"`
		Args            []string          `json:"args,omitempty"`
		Env             map[string]string `json:"env,omitempty"`
		HTTPURL         string            `json:"httpUrl,omitempty"`
		Headers         map[string]string `json:"headers,omitempty"`
		AlwaysLoadTools bool              `json:"alwaysLoadTools,omitempty"`
		Timeout         int64             `json:"timeout,omitempty"`
	}
	all := map[string]server{}
	for _, s := range servers {
		sv := server{Command: s.Command, Args: s.Args, Env: driver.MCPEnv(s), HTTPURL: s.URL,
			AlwaysLoadTools: host && s.Name == agentcli.HostServerName}
		if sv.AlwaysLoadTools {
			sv.Timeout = driver.HostToolTimeout.Milliseconds()
		}
		if len(s.Headers) > 0 {
			sv.Headers = s.Headers
		}
		all[s.Name] = sv
	}
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": all}, "", "  ")
	return append(b, '\n')
}
