// Package gemini is the agentcli backend for Google's Gemini CLI (`gemini`,
// tested with 0.61.0). Importing it registers the backend as "gemini".
//
// # Command line
//
// Runs use
//
//	gemini --output-format json|stream-json --approval-mode default|yolo|plan --skip-trust [--resume=ID] [--model=M] \
//	    [--allowed-mcp-server-names=NAME,...]
//
// with stream-json for Stream (and for Run when Request.OnText is set) and
// json otherwise. The approval mode is default for the zero
// Request.Permission (deny: headless gemini leaves out every tool that
// would ask, unless tools.allowed approves it), yolo for PermissionBypass
// and plan for PermissionPlan; tool lists go to the private settings
// overlay (see tools.go). --skip-trust is required: folder trust is on by default,
// and a headless run in an untrusted directory exits 55 after downgrading
// yolo. Request.ExtraArgs follow these flags; do not repeat one of them
// there (gemini turns a repeated --output-format into an array and falls
// back to text output).
//
// # Prompt
//
// The prompt is written to the CLI's stdin and never appears in argv; with
// stdin not a terminal gemini runs headless and takes stdin as the prompt
// (no -p needed). Gemini reads at most 8 MiB from stdin; a longer prompt is
// refused with a *PromptTooLongError instead of being truncated.
//
// Gemini acts on some prompt text before the model sees it, so two changes
// are made, and only these:
//
//   - A prompt starting with "/" (but not "//" or "/*") would run as a slash
//     command (/init rewrites the prompt and creates GEMINI.md, /quit exits,
//     custom commands come from .gemini/commands). One space is prepended:
//     the model receives " /help" for "/help".
//   - An "@" followed by a path character would include a file (its content
//     is appended to the message and the text rewritten; a missing path is
//     even looked up with a recursive glob), an agent or an MCP resource. A
//     backslash is inserted before each such "@", gemini's own escape, which
//     stays in the text: the model receives `look at \@README.md` for
//     "look at @README.md" and `a\@b.com` for "a@b.com". An "@" already
//     preceded by a backslash, or followed by whitespace, one of ,;!?()[]{}
//     or the end of the text, is left alone.
//
// Gemini offers no way to pass such text untouched in headless mode: it has
// no setting that disables slash commands or @-references there.
//
// # System prompt
//
// Request.SystemPrompt is prepended to the prompt text, followed by a blank
// line (SystemPromptPrepend). GEMINI_SYSTEM_MD, the only other channel,
// replaces gemini's whole built-in system prompt, tool instructions
// included, so it is not used; callers who want that can set it in
// Request.Env themselves.
//
// # Settings
//
// Request.MCPServers and Request.Effort are gemini settings, and gemini
// 0.61.0 reads user settings only from GEMINI_CLI_HOME/.gemini (the system
// settings files it skips unless root owns them and every directory above
// them). So a run with either gets a private GEMINI_CLI_HOME: a temporary
// .gemini whose entries are links to the user's own (credentials,
// sessions, history, extensions, ...) except settings.json, which is the
// user's settings with the run's merged in. The user's files are not
// changed, and sessions the run creates stay resumable by any later run.
//
// MCP servers are mcpServers entries ({command, args, env} or {url, type
// "http", headers}) and --allowed-mcp-server-names=NAME,... limits the run
// to them (no user, project or extension server). Their tools are
// "mcp_NAME_TOOL". A server that fails to start is not reported: gemini
// 0.61.0 goes on without its tools, one-shot and live, and says only "MCP
// issues detected. Run /mcp list for status." on stderr, naming no
// server. gemini expands $NAME and ${NAME} references in settings
// values (env and header values twice), so each "$" of the caller's text is
// written escaped through AGENTCLI_DOLLAR=$, set in the run's environment:
// every value arrives as given. gemini passes a stdio server its own
// environment without variables that look like credentials, plus Env.
//
// Request.Effort (low, medium, high) becomes the thinking setting of
// gemini's built-in chat models through their model-config aliases:
// thinkingLevel LOW, MEDIUM or HIGH for Gemini 3 models ("chat-base-3"),
// thinkingBudget 1024, 8192 or 24576 tokens for Gemini 2.5 models
// ("chat-base-2.5"). A model gemini has no alias for keeps its defaults.
// gemini has no structured output for the final answer, no fallback model
// setting and no spending cap.
//
// Live sessions (`gemini --acp`; StartSession, and runs with a permission
// mode other than bypass) pass the MCP servers in the protocol instead
// (session/new and session/load), where gemini expands $NAME and ${NAME}
// in env and header values only, so each "$" there is written "\$"; the
// effort goes through the same overlay as a run's. Only in bypass is
// --allowed-mcp-server-names passed: gemini also lets every tool of the
// servers it names run without asking, so under ask, deny and plan the
// user's own servers stay available and the request's servers' tools are
// asked about like any other (raw name "mcp_NAME_TOOL").
//
// # Sessions
//
// Result.SessionID is gemini's session UUID; Request.SessionID passes it to
// --resume. Gemini stores sessions per project (working directory), so a
// session must be resumed with the same Request.Dir as the run that
// created it; anywhere else it is not found and the run fails with an error
// matching agentcli.ErrSessionNotFound (exit 42). Gemini also reads
// "latest" and small numbers as --resume values ("the latest session", "the
// Nth session").
//
// # Output, usage and errors
//
// Result.Text is the text of the model's last turn (the text after the last
// tool call), which is what json's "response" holds. Usage comes from the
// CLI's stats and covers this run only, summed over every model the run
// used (the model router's small calls included): InputTokens are prompt
// tokens not read from cache (gemini's "input"), CacheReadTokens the cached
// ones, OutputTokens the candidates' tokens, ReasoningTokens the thought
// tokens (reported by json only). Gemini reports no cost and no thinking
// text.
//
// API errors make gemini exit with the HTTP status mod 256 (400 → 144,
// 429 → 173, 500 → 244); the error is a *agentcli.ResultError with the
// CLI's message, APIStatus set and Kind ErrAuth (401, 403) or
// ErrRateLimited (429). With stream-json the error is the final result
// line; with json gemini prints it as a JSON document on stderr (stdout
// stays empty), which is parsed. An empty or blocked model stream exits 0
// but fails with Subtype "INVALID_STREAM"; the settings limit
// model.maxSessionTurns (no flag exists, so Request.MaxTurns is not
// supported) fails with Subtype "error_max_turns" (exit 53). Failures
// before the run starts are *agentcli.ExitError (or *ResultError when json
// reported them on stderr): exit 41, no usable authentication, matches
// ErrAuth; exit 42 with "Error resuming session" matches
// ErrSessionNotFound; exit 42 "No input provided" means an empty prompt.
//
// With json the document is the first JSON object on stdout that has one
// of its members (session_id, response, error, stats): lines before it,
// after it or around it (noise, a lone "{", another JSON object, a
// document cut short) are EventNotice events. A run that exits 0 without
// that document but with something like one (a document cut short, not
// JSON, an object without those members) fails with a
// *agentcli.ParseError rather than succeeding without an answer.
//
// # Interactive mode
//
// agentcli.Interactive runs Gemini CLI's own UI on a terminal:
//
//	gemini --approval-mode=yolo|default|plan [--resume=ID] [--model=M] [ExtraArgs...] [--prompt-interactive=TEXT]
//
// for PermissionBypass, Ask and Plan. TEXT, the first message, is what a
// run writes to stdin: the system prompt, a blank line and the prompt,
// escaped the same way. The UI has no other channel for a system prompt
// (GEMINI_SYSTEM_MD replaces gemini's whole built-in one), so a system
// prompt without a prompt fails with an *agentcli.UnsupportedError. MCP
// servers and the effort go through the same private overlay of the gemini
// home as in a run, so settings changed in the UI during such a session are
// not kept. Folder trust is left to the UI, which asks in an untrusted
// folder unless folder trust is off (as agentclitest.Server.Wire sets it).
//
// # Host tools, questions and hooks
//
// Request.Tools are agentcli's MCP server "agentcli": in the settings
// overlay of a run or a live session (with trust; not ACP's session/new,
// which has no time limit field), its tools named in full in
// tools.allowed, since gemini 0.61.0 checks an MCP call's policy under
// the server's prefixed name, which no server-wide rule matches;
// agentcli decides each call itself, and a session allows whatever
// permission request gemini still sends about them. The settings give
// the server gemini's per-server limit for one tool call ("timeout",
// driver.HostToolTimeout; gemini's default is 10 minutes). gemini 0.61.0's fetch also gives up on a response whose
// headers take 60 s, which agentcli's server prevents by starting a long
// call's response after 15 s and keeping it alive. gemini removes its
// own ask_user tool from headless runs and ACP, so Request.OnQuestion
// gets agentcli's question tool. Hooks: hooks.go.
package gemini

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
const Name = "gemini"

func init() { driver.Register(Name, New) }

// New returns a Gemini CLI backend. opts may be nil; it is copied.
func New(opts *agentcli.Options) agentcli.Backend { return driver.New(&spec, opts) }

// spec declares Gemini CLI: text deltas, resume and a system prompt
// prepended to the prompt; no max turns (a settings-only limit), no tool
// filter (--allowed-tools is deprecated and only skips confirmation), no
// cost and no thinking text.
var spec = driver.Spec{
	Name:           Name,
	Credentials:    credentialVars,
	HasCredentials: hasCredentials,
	Login:          "log in with `gemini` (security.auth.selectedType in its settings.json)",
	Caps: agentcli.Capabilities{
		TextDeltas:      true,
		Resume:          true,
		ToolFilter:      true,
		SystemPrompt:    agentcli.SystemPromptPrepend,
		Interrupt:       true,
		SetModel:        true,
		SetPermission:   driver.PermissionModes,
		Steer:           agentcli.SteerQueued,
		PermissionModes: driver.PermissionModes,

		MCP:       true,
		Efforts:   []agentcli.Effort{agentcli.EffortLow, agentcli.EffortMedium, agentcli.EffortHigh},
		HostTools: true,
		Questions: true,
		Hooks:     hookSupport,
		// See attach.go.
		Attachments: attachmentKinds,

		ForkSession:  agentcli.SessionModes{OneShot: true, Live: true},
		NewSessionID: agentcli.SessionModes{OneShot: true},

		// Limits: no window size and no rate-limit state; a 429's error
		// suggests a retry delay (one-shot and live), which the
		// *RateLimitError carries.
		ContextUsage:   false,
		Compaction:     false,
		RateLimits:     false,
		RateLimitReset: true,
	},
	// A one-shot run with attachments is one turn of an ACP session
	// (attach.go).
	LiveRun: func(req *agentcli.Request) bool { return len(req.Attachments) > 0 },
	// One-shot runs call hooks through gemini's own (hooks.go).
	NativeHooks:   nativeHooks,
	Tools:         tools,
	Validate:      validate,
	Prepare:       prepare,
	StartSession:  startSession,
	ReplaySession: replaySession,
	NewParser: func(r *driver.Run) driver.Parser {
		if r.Deltas {
			return newParser(formatStream)
		}
		p := newJSONParser()
		if r.Options != nil && r.Options.MaxLineBytes > 0 {
			p.limit = r.Options.MaxLineBytes // the json document is one value
		}
		return p
	},
	Classify: classify,
	Hint:     hint,

	Interactive:   interactive,
	ExportSession: exportSession,
	ImportSession: importSession,
	ListSessions:  listSessions,
}

// classify knows gemini's and the Gemini API's wording of errors.
var classify = driver.ClassifyBy(
	driver.ErrorMatch{Contains: []string{"error resuming session", "invalid session identifier"}, Err: agentcli.ErrSessionNotFound},
	driver.ErrorMatch{Contains: []string{"resource_exhausted"}, Err: agentcli.ErrRateLimited},
	driver.ErrorMatch{Contains: []string{"api key not valid", "permission_denied"}, Err: agentcli.ErrAuth},
)

// tools maps gemini's tool names to canonical ones.
var tools = driver.Tools{
	"run_shell_command":   agentcli.ToolNameBash,
	"read_file":           agentcli.ToolNameRead,
	"read_many_files":     agentcli.ToolNameRead,
	"list_directory":      agentcli.ToolNameLS,
	"write_file":          agentcli.ToolNameWrite,
	"replace":             agentcli.ToolNameEdit,
	"edit":                agentcli.ToolNameEdit,
	"glob":                agentcli.ToolNameGlob,
	"search_file_content": agentcli.ToolNameGrep,
	"grep_search":         agentcli.ToolNameGrep,
	"grep":                agentcli.ToolNameGrep,
	"web_fetch":           agentcli.ToolNameWebFetch,
	"google_web_search":   agentcli.ToolNameWebSearch,
	"web_search":          agentcli.ToolNameWebSearch,
	"save_memory":         agentcli.ToolNameMemory,
	"write_todos":         agentcli.ToolNameTodoWrite,
	"ask_user":            agentcli.ToolNameAskUserQuestion,
	"activate_skill":      agentcli.ToolNameSkill,
	"delegate_to_agent":   agentcli.ToolNameTask,
	"invoke_agent":        agentcli.ToolNameTask,
}

// prepare builds one run: stream-json when the caller streams, json
// otherwise; the prompt (made safe, see promptInput) goes on stdin.
func prepare(_ context.Context, r *driver.Run) (*driver.Job, error) {
	f := formatJSON
	if r.Deltas {
		f = formatStream
	}
	in := promptInput(r.Req)
	if len(in) > MaxPromptBytes {
		return nil, &PromptTooLongError{Len: len(in), Limit: MaxPromptBytes}
	}
	hooks, err := hookSettings(r)
	if err != nil {
		return nil, err
	}
	env, err := settingsEnvWith(r, hooks)
	if err != nil {
		return nil, err
	}
	var sessionFile string
	if r.Req.ForkSession {
		if sessionFile, err = forkFile(r, r.Req.SessionID); err != nil {
			return nil, err
		}
	}
	return &driver.Job{
		Args:  buildArgsFile(r.Req, f, sessionFile),
		Stdin: []byte(in),
		Env:   env,
	}, nil
}

// runHome returns a private overlay of the user's gemini home, in r's
// temporary directory, with extra merged into its settings.json (see
// overlayHome).
func runHome(r *driver.Run, extra map[string]any) (string, error) {
	tmp, err := r.TempDir()
	if err != nil {
		return "", err
	}
	home, err := userHome(r)
	if err != nil {
		return "", err
	}
	return overlayHome(home, filepath.Join(tmp, "gemini-home"), extra)
}

// settingsEnv returns the environment that carries the request's settings
// (MCP servers, effort; see runSettings), or nil when it has none: a
// private overlay of the user's gemini home with those settings merged
// into settings.json, named by GEMINI_CLI_HOME.
func settingsEnv(r *driver.Run) ([]string, error) { return settingsEnvWith(r, nil) }

// settingsEnvWith is settingsEnv with more settings merged in.
func settingsEnvWith(r *driver.Run, more map[string]any) ([]string, error) {
	extra, dollar := runSettings(r.Req)
	if more != nil {
		if extra == nil {
			extra = map[string]any{}
		}
		merge(extra, more)
	}
	return overlayEnv(r, extra, dollar)
}

// overlayEnv returns the environment that names a private overlay of the
// user's gemini home with extra merged into its settings.json (with
// driver.DollarEnv when the settings spell a "$" through it), or nil when
// extra is nil.
func overlayEnv(r *driver.Run, extra map[string]any, dollar bool) ([]string, error) {
	if extra == nil {
		return nil, nil
	}
	over, err := runHome(r, extra)
	if err != nil {
		return nil, err
	}
	env := []string{"GEMINI_CLI_HOME=" + over}
	if dollar {
		env = append(env, driver.DollarEnv)
	}
	return env, nil
}

// userHome returns the directory whose .gemini holds the user's settings,
// as gemini finds it: $GEMINI_CLI_HOME (relative to the working
// directory), else $HOME, else this process's home directory.
func userHome(r *driver.Run) (string, error) {
	h := r.Lookup("GEMINI_CLI_HOME")
	if h == "" {
		h = r.Lookup("HOME")
	}
	if h == "" {
		var err error
		if h, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("gemini: cannot locate the home directory: %w", err)
		}
	}
	if !filepath.IsAbs(h) {
		h = filepath.Join(r.Dir, h)
	}
	return h, nil
}

// hint explains well-known start-up failures.
func hint(exit driver.Exit) string {
	switch {
	case exit.Code == exitAuth:
		return "gemini found no usable authentication: set GEMINI_API_KEY (with security.auth.selectedType " +
			"\"gemini-api-key\" in ~/.gemini/settings.json when GOOGLE_GEMINI_BASE_URL is set), " +
			"use Vertex AI credentials, or log in once interactively"
	case exit.Code == exitUntrusted:
		return "gemini does not trust the working directory (--skip-trust was overridden, e.g. by GEMINI_CLI_TRUST_WORKSPACE=false)"
	case exit.Code == exitInput && strings.Contains(exit.Stderr, "No input provided"):
		return "the prompt was empty"
	case exit.Code == exitInput && classify(exit.Stderr) == agentcli.ErrSessionNotFound:
		return "gemini looks sessions up per working directory: resume with the Request.Dir of the run that created the session"
	}
	return ""
}
