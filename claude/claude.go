// Package claude is the agentcli backend for Anthropic's Claude Code CLI
// (`claude`). Importing it registers the backend as "claude".
//
// Runs use `claude -p --input-format stream-json --output-format stream-json
// --verbose` (plus `--include-partial-messages` when text deltas are wanted)
// with `--permission-mode=dontAsk` for the zero Request.Permission (deny:
// claude refuses every call that is not approved in advance, and tells the
// model), `--dangerously-skip-permissions` for PermissionBypass and
// `--permission-mode=plan` for PermissionPlan (PermissionAsk is a live
// session; see live.go). Request.AllowedTools and DisallowedTools become
// `--tools`, `--allowedTools` and `--disallowedTools` (see toolArgs). The
// prompt is written to the CLI's
// stdin as one JSON user message marked as not typed at the prompt, so it
// reaches the model verbatim: never read as a flag, never run as a slash
// command ("/help"), never expanded as a file mention ("@README.md"). The
// system prompt goes to a private (0600) temporary file passed with
// `--append-system-prompt-file` and removed when the run ends. As root, Claude Code refuses
// `--dangerously-skip-permissions` unless IS_SANDBOX=1 is in its
// environment; the resulting error says so.
//
// # Settings
//
// Every orchestration setting is supported. Request.MCPServers go to a
// private (0600) file in the run's temporary directory, passed with
// `--mcp-config=FILE` and `--strict-mcp-config`: the run uses these servers
// and none of the user's or the project's. Their tools are
// "mcp__NAME__TOOL"; claude 2.1.330 may defer them behind its ToolSearch
// tool (the model then sees their names in a list and loads them on
// demand). Claude Code expands ${NAME} references in MCP configuration
// values (header values twice), so each "${" of the caller's text is
// written escaped through the variable AGENTCLI_DOLLAR=$, which the run's
// environment then holds: every value arrives as given. A server that did
// not start ("failed" or "needs-auth" in the init line) is an EventNotice
// naming it, after the EventInit, once per run or live session
// (mcpnotice.go).
// Request.OutputSchema is `--json-schema=SCHEMA` (claude takes the schema
// itself, compacted to one line; it must fit in one argument, 128 KiB):
// claude offers the model a StructuredOutput tool with the schema as its
// input schema, validates the call, and reports the value as the result's
// structured_output, which is Result.StructuredOutput; when the model does
// not comply, claude ends with subtype error_max_structured_output_retries
// (a *agentcli.ResultError). Request.Effort is `--effort=LEVEL` (low,
// medium, high, xhigh, max; the Messages request's output_config.effort).
// Request.FallbackModel is `--fallback-model=MODEL`: claude switches to it
// after the main model answered "overloaded" (529) three times in a row.
// Request.MaxBudgetUSD is `--max-budget-usd=AMOUNT`: once the run's cost
// reaches it, claude stops with subtype error_max_budget_usd and terminal
// reason budget_exhausted, a *agentcli.ResultError.
//
// # Interactive mode
//
// agentcli.Interactive runs Claude Code's own UI on a terminal:
//
//	claude --dangerously-skip-permissions|--permission-mode=default|plan|dontAsk
//	       [--append-system-prompt-file=F] [--resume=ID] [--allowedTools=R]... [--disallowedTools=R]...
//	       [--model=M] [--fallback-model=M] [--effort=LEVEL] [--mcp-config=F --strict-mcp-config]
//	       [ExtraArgs...] [-- PROMPT]
//
// for PermissionBypass, Ask, Plan and Deny. The UI connects MCP servers in
// the background: a first message given as Request.Prompt may reach the
// model before their tools do (a message typed later finds them). The
// first message is the
// positional prompt after "--"; it is submitted as typed (slash commands
// and @-mentions apply), and a one-word prompt gets a trailing space,
// because claude runs a subcommand named by its first operand ("update",
// "mcp", ...) even after "--". The UI takes no turn limit, spending cap or
// output schema (MaxTurns, MaxBudgetUSD and OutputSchema are ignored with
// a warning, or refused under Options.Strict). On first
// use the UI shows its onboarding, an API-key confirmation, the
// folder-trust dialog and, in bypass mode, a warning to accept;
// agentclitest.Server.Wire answers them.
//
// Live sessions (StartSession, and runs with a permission mode other than
// bypass, which are one turn of one) carry every setting the same way:
// their argv and files are a streaming run's. The settings hold for every
// turn; the spending cap covers the whole session (claude adds up its
// turns' cost), so the turn that reaches it and every later one fail with
// error_max_budget_usd. Under PermissionAsk claude asks about MCP tool
// calls like any other (raw name "mcp__NAME__TOOL").
//
// # Host tools, questions and hooks
//
// Request.Tools are agentcli's MCP server "agentcli" in the --mcp-config
// file, approved in advance (--allowedTools=mcp__agentcli: agentcli
// decides each call itself) and listed with _meta
// "anthropic/alwaysLoad", so that claude 2.1.330 offers them up front
// instead of behind ToolSearch; an allow list leaves the server alone.
// Its entry sets claude's per-server time limit for one tool call
// ("timeout") to driver.HostToolTimeout: claude 2.1.330 otherwise gives up
// on a call to an HTTP MCP server after 60 s without an answer, and a host
// tool's call ends when its handler returns or the run ends.
// Request.OnQuestion gets claude's AskUserQuestion (see live.go) under
// PermissionAsk, and under PermissionBypass without an allow list
// (--permission-prompt-tool=stdio, which makes no other tool ask there;
// such a run is a live turn); elsewhere claude's dontAsk or plan mode
// would refuse it, so AskUserQuestion is taken away and agentcli's
// question tool asks. Request.Hooks are claude's own (hooks.go).
package claude

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Name is the registry name of this backend.
const Name = "claude"

func init() { driver.Register(Name, New) }

// New returns a Claude Code backend. opts may be nil; it is copied.
func New(opts *agentcli.Options) agentcli.Backend { return driver.New(&spec, opts) }

// spec declares Claude Code: everything agentcli models is supported.
var spec = driver.Spec{
	Name:           Name,
	Credentials:    credentialVars,
	HasCredentials: hasCredentials,
	Login:          "log in with `claude` (/login), or set an apiKeyHelper in its settings",
	Caps: agentcli.Capabilities{
		TextDeltas:      true,
		Thinking:        true,
		Resume:          true,
		SystemPrompt:    agentcli.SystemPromptAppend,
		MaxTurns:        true,
		ToolFilter:      true,
		Cost:            true,
		Interrupt:       true,
		SetModel:        true,
		SetPermission:   driver.PermissionModes,
		Steer:           agentcli.SteerNative,
		PermissionModes: driver.PermissionModes,
		EditInput:       true,

		MCP:              true,
		StructuredOutput: true,
		Efforts:          []agentcli.Effort{agentcli.EffortLow, agentcli.EffortMedium, agentcli.EffortHigh, agentcli.EffortXHigh, agentcli.EffortMax},
		FallbackModel:    true,
		MaxBudget:        true,
		HostTools:        true,
		Questions:        true,
		Hooks:            hookSupport,
		Attachments:      attachmentKinds,

		ForkSession:  agentcli.SessionModes{OneShot: true, Live: true},
		NewSessionID: agentcli.SessionModes{OneShot: true, Live: true},

		// Limits (limits.go): the context window from the result, compact_boundary,
		// rate_limit_event (OAuth credentials only), the reset of a rejected request.
		ContextUsage:   true,
		Compaction:     true,
		RateLimits:     true,
		RateLimitReset: true,
	},
	Questions:   nativeQuestions,
	NativeHooks: nativeHooks,
	// claude asks its questions and calls its hooks while its stdin is
	// open: in a live session.
	LiveRun: func(req *agentcli.Request) bool {
		return req.OnQuestion != nil && nativeQuestions(req) || req.Hooks != nil
	},
	Tools:         tools,
	Validate:      validate,
	Prepare:       prepare,
	StartSession:  startSession,
	ReplaySession: replaySession,
	NewParser:     func(*driver.Run) driver.Parser { return newParser() },
	Classify: driver.ClassifyBy(
		driver.ErrorMatch{Contains: []string{"no conversation found"}, Err: agentcli.ErrSessionNotFound},
		driver.ErrorMatch{Contains: []string{"please run /login", "invalid x-api-key"}, Err: agentcli.ErrAuth},
	),
	Hint: driver.HintOn(
		driver.Hint{Contains: "root/sudo privileges", Say: "claude refuses --dangerously-skip-permissions when run as root unless IS_SANDBOX=1 is set; " +
			"add \"IS_SANDBOX=1\" to Options.Env or Request.Env if this is a sandbox"},
	),
	Interactive:   interactive,
	ExportSession: exportSession,
	ImportSession: importSession,
	ListSessions:  listSessions,
}

// writeMCPConfig writes the request's MCP servers, if any, to a private
// file in the run's temporary directory (see mcpConfig) and returns its
// path ("" for none) and the environment the file's escapes need.
func writeMCPConfig(r *driver.Run) (string, []string, error) {
	if len(r.Req.MCPServers) == 0 {
		return "", nil, nil
	}
	dir, err := r.TempDir()
	if err != nil {
		return "", nil, err
	}
	content, dollar := mcpConfig(r.Req.MCPServers, driver.IsHostServer(r.Req, agentcli.HostServerName))
	f := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(f, content, 0o600); err != nil {
		return "", nil, err
	}
	if dollar {
		return f, []string{driver.DollarEnv}, nil
	}
	return f, nil, nil
}

// writeSystemPrompt writes the system prompt, if any, to a private file in
// the run's temporary directory and returns its path ("" for none).
func writeSystemPrompt(r *driver.Run) (string, error) {
	if r.Req.SystemPrompt == "" {
		return "", nil
	}
	dir, err := r.TempDir()
	if err != nil {
		return "", err
	}
	f := filepath.Join(dir, "system-prompt.md")
	return f, os.WriteFile(f, []byte(r.Req.SystemPrompt), 0o600)
}

// tools maps claude's tool names to canonical ones.
var tools = driver.Tools{
	"agent":          agentcli.ToolNameTask, // renamed from Task in Claude Code 2.x
	"notebookread":   agentcli.ToolNameRead,
	"killbash":       agentcli.ToolNameKillShell,
	"bash_output":    agentcli.ToolNameBashOutput,
	"exit_plan_mode": agentcli.ToolNameExitPlanMode,
}

// prepare builds one run. Text deltas (partial messages) are asked for only
// when the caller streams. The prompt goes on stdin.
func prepare(_ context.Context, r *driver.Run) (*driver.Job, error) {
	job, err := prepareArgs(r, r.Deltas)
	if err != nil {
		return nil, err
	}
	job.Stdin = userMessageWith(r.Req.Prompt, r.Req.Attachments)
	return job, nil
}

// prepareArgs builds the argv and the extra environment of a one-shot run
// (deltas when the caller streams) and of a live session (always deltas)
// alike: the system prompt and the MCP configuration go to private files in
// the run's temporary directory (see buildArgsMCP), and AGENTCLI_DOLLAR
// joins the environment when the MCP configuration needs it.
func prepareArgs(r *driver.Run, deltas bool) (*driver.Job, error) {
	sysFile, err := writeSystemPrompt(r)
	if err != nil {
		return nil, err
	}
	job := &driver.Job{}
	mcpFile, env, err := writeMCPConfig(r)
	if err != nil {
		return nil, err
	}
	job.Env = env
	job.Args = buildArgsHost(r.Req, deltas, sysFile, mcpFile, hostArgsOf(r))
	if err := checkArgs(job.Args); err != nil {
		return nil, err
	}
	return job, nil
}

// maxArgLen is the longest single argument the Linux kernel passes to a new
// program (MAX_ARG_STRLEN, 32 pages of 4 KiB, including the terminating NUL).
const maxArgLen = 32*4096 - 1

// checkArgs reports an argument too long for the kernel to pass (the
// output schema is one), which would otherwise surface as a baffling exec
// failure (E2BIG).
func checkArgs(args []string) error {
	for _, a := range args {
		if len(a) > maxArgLen {
			name, _, _ := strings.Cut(a, "=")
			reason := fmt.Sprintf("%s is %d bytes on the command line; the limit for one argument is %d bytes", name, len(a), maxArgLen)
			if name == "--json-schema" {
				return &agentcli.RequestError{Backend: Name, Field: "OutputSchema", Reason: reason}
			}
			return fmt.Errorf("claude: %s", reason)
		}
	}
	return nil
}
