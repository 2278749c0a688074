// Package opencode is the agentcli backend for OpenCode (`opencode run`,
// tested with opencode-ai 1.18.33). Importing it registers the backend as
// "opencode".
//
// # Command line
//
// Every run (Run and Stream alike) uses
//
//	opencode run --format json [--auto | --agent=plan] --thinking --dir=DIR [--model=PROVIDER/MODEL] [--session=ID] \
//	    [--variant=LEVEL] [ExtraArgs...]
//
// --auto approves every permission request that the configuration does not
// explicitly deny; without it a headless run rejects anything configured as
// "ask" (it prints "permission requested: …; auto-rejecting" on stderr, the
// tool call fails and the run still exits 0). It is PermissionBypass, the
// equivalent of the other backends' bypass modes; the zero
// Request.Permission (deny) sets the tools that change things or reach
// out to "deny" in OPENCODE_PERMISSION instead (opencode takes them away
// from the model), and tool lists go there too (see tools.go). --thinking only makes opencode print the
// model's reasoning (it does not change the request). --dir is
// Request.Dir made absolute (the current directory when empty); see
// Sessions. Caller-supplied values use the --flag=value form so that a value
// starting with "-" is never read as a flag.
//
// # Prompt
//
// The prompt is written to opencode's stdin, which it reads to EOF, and
// reaches the model verbatim. It is never an argument: opencode wraps every
// message argument that contains a space in literal double quotes. A
// message argument in ExtraArgs is sent before the stdin text, separated by
// a newline. An empty prompt fails (exit 1, "You must provide a message or a
// command").
//
// # System prompt
//
// opencode has no system-prompt flag. Request.SystemPrompt is written to a
// private temporary file, which a second temporary config file lists in
// "instructions"; OPENCODE_CONFIG points at that config. opencode merges it
// with every other config layer (global config, OPENCODE_CONFIG_CONTENT,
// project config; "instructions" lists are concatenated) and appends the
// file to its own system prompt as "Instructions from: <path>" followed by
// the text (SystemPromptAppend). Both files are removed when the run ends.
// OPENCODE_CONFIG_CONTENT, often used for provider wiring, is left alone.
// Only when the run's environment already sets OPENCODE_CONFIG (which holds
// a single path and would be clobbered) is the system prompt prepended to
// the prompt instead, followed by a blank line, with a warning. An agent
// definition (config agent.<name>.prompt with --agent) was not chosen: its
// prompt replaces opencode's whole built-in system prompt, tool guidance
// included.
//
// # Settings
//
// Request.MCPServers go in the same private config file as the system
// prompt (named by OPENCODE_CONFIG) as "mcp" entries: {"type": "local",
// "command": [COMMAND, ARGS...], "environment": ENV} or {"type":
// "remote", "url": URL, "headers": HEADERS}. They are added to the servers
// of the user's configuration, which stay available. Their tools are
// "NAME_TOOL". opencode substitutes {env:NAME} and {file:PATH} in a config
// file's text; the "{" of such text in the caller's values is written as
// the JSON escape \u007b, so every value arrives as given. When the run's
// environment already sets OPENCODE_CONFIG, MCP servers cannot be passed
// and the run fails with an *agentcli.UnsupportedError. A server that
// fails to start is not reported: opencode 1.18.33 goes on without its
// tools and says nothing of it, in `opencode run`'s JSON output or over
// ACP.
//
// Request.Effort is --variant=LEVEL: the variant of that name of the
// model, which is provider-specific (for an OpenAI-compatible model
// declared with "reasoning": true, low, medium and high, sent as
// reasoning_effort). opencode silently ignores a variant the model does
// not have. opencode has no structured output for `opencode run`, no
// fallback model and no spending cap.
//
// Live sessions (`opencode acp`; StartSession, and runs with a permission
// mode other than bypass) pass the MCP servers in the protocol instead
// (session/new and session/load; opencode adds them as they are, nothing
// substituted), so OPENCODE_CONFIG set by the caller does not matter
// there. Under PermissionAsk and PermissionDeny the servers' tools
// ("NAME_*") are asked about or refused like opencode's own changing
// tools. Request.Effort is the session's "effort" config option (the
// model's variant of that name), which opencode offers only for a model
// with variants: for any other, or a level the model lacks, it is not set
// and a warning is logged. See live.go.
//
// # Sessions
//
// Result.SessionID is opencode's session id (ses_…, the sessionID field of
// every line); Request.SessionID resumes it with --session. --continue is
// not passed: with --session it is ignored, and alone it picks the most
// recent session, which is racy. opencode 1.18.33 hangs (until
// Request.Timeout) when a session is resumed from a directory other than the
// one it was created in, so resume with the same Request.Dir. As a safety
// net, a Backend remembers the directory of every session it saw, and when
// such a session is resumed with a different Dir it passes the remembered
// one to --dir (and logs a warning): opencode then runs in the session's own
// directory.
//
// # Output, usage and errors
//
// opencode prints full text parts, not deltas (EventText), reasoning
// (EventThinking), tool calls once they completed or failed (EventToolUse
// followed by EventToolResult; canonical names are agentcli's ToolName constants;
// Input is the tool's input, Output its output or error text, ExitCode the
// shell exit status when reported) and one step_finish per model call, each
// yielding an EventUsage with the usage summed so far. An EventInit carrying
// the session id comes first.
//
// Result.Text is the text parts of the run's last step (the last model call,
// i.e. after the last tool call), joined with "\n"; it is empty if that step
// produced no text. Usage and CostUSD are summed over this run's steps
// (never the whole session): InputTokens are the input tokens not read from
// cache, CacheReadTokens/CacheWriteTokens the cached ones, OutputTokens the
// output tokens without reasoning, ReasoningTokens the reasoning tokens
// (opencode's own split; the fields add up to its "total"). CostUSD is
// non-nil once a step reported a cost. Turns is the number of steps,
// StopReason the last step's finish reason ("stop", "tool-calls",
// "length", ...).
//
// opencode 1.18.33 prints no terminal event. A run succeeds when opencode
// exits 0, printed no error line, and finished its last step (at least one
// step_finish and no step left open); a later build's "done" line also ends
// a run successfully. Anything less is an *agentcli.NoResultError. An error
// line (opencode exits 1) gives an *agentcli.ResultError whose Subtype is
// the error name ("APIError", "ProviderAuthError", "UnknownError", ...),
// APIStatus the HTTP status, and Kind ErrAuth (ProviderAuthError, 401, 403)
// or ErrRateLimited (429). Exit 1 with "Session not found" on stderr is an
// *agentcli.ExitError matching agentcli.ErrSessionNotFound. opencode retries
// 5xx, 408, 409 and 429 responses for about a minute before it reports them.
//
// Request.MaxTurns and the tool filters are not supported (opencode has no
// flags for them; they are configuration) and are ignored with a warning.
//
// # Interactive mode
//
// agentcli.Interactive runs OpenCode's own UI (the TUI) on a terminal, in
// Request.Dir:
//
//	opencode [--auto | --agent=plan] [--model=PROVIDER/MODEL] [--session=ID] [ExtraArgs...] [--prompt=TEXT]
//
// --auto for PermissionBypass; for PermissionAsk and PermissionDeny, the
// tools that change things or reach out are set to "ask" (the UI asks) or
// "deny" in OPENCODE_PERMISSION, as in a live session; the read-only plan
// agent for PermissionPlan. The system prompt and the MCP servers go
// through a private OPENCODE_CONFIG, as in a run; the TUI takes no effort
// (ignored with a warning, or refused under Options.Strict). The
// first message (--prompt) is submitted as typed; opencode 1.18.33 ignores
// it when it resumes a session, so a request with both SessionID and
// Prompt fails with an *agentcli.UnsupportedError.
//
// # Host tools, questions and hooks
//
// Request.Tools are agentcli's MCP server "agentcli" (the private config
// of a run, ACP's session/new), its tools "agentcli_*": "allow" in
// OPENCODE_PERMISSION in every mode and whatever the tool lists say:
// agentcli decides each call itself. A run's config gives the server
// opencode's limit for one tool call ("timeout", driver.HostToolTimeout;
// otherwise the MCP SDK's 60 s); a live session's server (ACP's
// session/new has no such field) sends progress during a long call, which
// resets that limit, as opencode 1.18.33 asks. opencode's own question
// tool is denied in `opencode run` and hangs an ACP turn when forced on,
// so Request.OnQuestion gets agentcli's question tool. Hooks: hooks.go.
package opencode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Name is the registry name of this backend.
const Name = "opencode"

// maxSessionDirs bounds the session → directory memory.
const maxSessionDirs = 4096

func init() { driver.Register(Name, New) }

// New returns an OpenCode backend. opts may be nil; it is copied.
func New(opts *agentcli.Options) agentcli.Backend { return driver.New(&spec, opts) }

// spec declares OpenCode: resume, reasoning text, cost and a system prompt
// appended to opencode's own; whole text parts rather than deltas; no max
// turns and no tool filter.
var spec = driver.Spec{
	Name:           Name,
	Credentials:    credentialVars,
	HasCredentials: hasCredentials,
	Login:          "run `opencode auth login`, configure a provider, or name a free OpenCode Zen model (Model \"opencode/...\")",
	Caps: agentcli.Capabilities{
		Thinking:        true,
		Resume:          true,
		ToolFilter:      true,
		SystemPrompt:    agentcli.SystemPromptAppend,
		Cost:            true,
		Interrupt:       true,
		SetModel:        true,
		SetPermission:   []agentcli.PermissionMode{agentcli.PermissionPlan},
		Steer:           agentcli.SteerNative,
		PermissionModes: driver.PermissionModes,

		MCP:       true,
		Efforts:   agentcli.Efforts(),
		HostTools: true,
		Questions: true,
		Hooks:     hookSupport,
		// See attach.go.
		Attachments: attachmentKinds,

		ForkSession: agentcli.SessionModes{OneShot: true, Live: true},

		// Limits: usage_update (ACP sessions); it retries 429s on its own.
		ContextUsage:   true,
		Compaction:     false,
		RateLimits:     false,
		RateLimitReset: false,
	},
	// Hooks need a live session: PreToolUse is the permission path.
	LiveRun:       func(req *agentcli.Request) bool { return req.Hooks != nil || len(req.Attachments) > 0 },
	Tools:         tools,
	Validate:      validate,
	Prepare:       prepare,
	StartSession:  startSession,
	ReplaySession: replaySession,
	NewParser:     func(*driver.Run) driver.Parser { return newParser() },
	Classify: driver.ClassifyBy(
		driver.ErrorMatch{Contains: []string{"providerautherror"}, Err: agentcli.ErrAuth},
	),
	Hint: driver.HintOn(
		driver.Hint{Contains: "You must provide a message", Say: "the prompt was empty"},
		driver.Hint{Contains: "Failed to change directory", Say: "the working directory does not exist"},
	),
	Stderr:   stripANSI,
	NewState: func() any { return &state{dirs: map[string]string{}, models: map[string][]string{}} },

	Interactive:   interactive,
	ExportSession: exportSession,
	ImportSession: importSession,
	ListSessions:  listSessions,
}

// state is what one Backend remembers across runs.
type state struct {
	mu     sync.Mutex
	dirs   map[string]string   // session id → directory it ran in
	models map[string][]string // configuration → the models it declares
}

// remember records the directory a session ran in.
func (s *state) remember(sid, dir string) {
	if sid == "" || dir == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.dirs[sid]; !ok && len(s.dirs) >= maxSessionDirs {
		clear(s.dirs)
	}
	// The id may share the memory of the line it was read from, and the
	// lines around it (see runner.detachResult): a copy keeps none alive.
	s.dirs[strings.Clone(sid)] = dir
}

func (s *state) lookup(sid string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.dirs[sid]
	return d, ok
}

// tools maps opencode's tool names to canonical ones.
var tools = driver.Tools{
	"bash":        agentcli.ToolNameBash,
	"read":        agentcli.ToolNameRead,
	"list":        agentcli.ToolNameLS,
	"write":       agentcli.ToolNameWrite,
	"edit":        agentcli.ToolNameEdit,
	"multiedit":   agentcli.ToolNameMultiEdit,
	"patch":       agentcli.ToolNameEdit,
	"apply_patch": agentcli.ToolNameEdit,
	"glob":        agentcli.ToolNameGlob,
	"grep":        agentcli.ToolNameGrep,
	"codesearch":  agentcli.ToolNameGrep,
	"webfetch":    agentcli.ToolNameWebFetch,
	"websearch":   agentcli.ToolNameWebSearch,
	"todowrite":   agentcli.ToolNameTodoWrite,
	"todoread":    agentcli.ToolNameTodoRead,
	"task":        agentcli.ToolNameTask,
	"question":    agentcli.ToolNameAskUserQuestion,
	"skill":       agentcli.ToolNameSkill,
}

// prepare builds one run: a resumed session runs in its own directory; the
// system prompt goes through a private config file named by
// OPENCODE_CONFIG.
func prepare(ctx context.Context, r *driver.Run) (*driver.Job, error) {
	req := r.Req
	st := r.State.(*state)
	d := r.Dir
	if req.SessionID != "" {
		if orig, ok := st.lookup(req.SessionID); ok && orig != d {
			r.Logger.Warn("agentcli: opencode hangs when a session is resumed from another directory; "+
				"running in the session's own directory", "backend", Name,
				"session", req.SessionID, "dir", d, "session_dir", orig)
			d = orig
		}
	}
	model, err := st.resolveModel(ctx, r, req.Model)
	if err != nil {
		return nil, err
	}
	withModel := *req
	withModel.Model = model
	job := &driver.Job{
		Args:      buildArgs(&withModel, d),
		OnSession: func(id string) { st.remember(id, d) },
	}
	prompt := req.Prompt
	system := req.SystemPrompt
	if v := r.Lookup("OPENCODE_CONFIG"); v != "" {
		if len(req.MCPServers) > 0 {
			return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "MCP servers",
				Reason: "OPENCODE_CONFIG is already set in the run's environment, and it names the one file through which agentcli would pass them"}
		}
		if system != "" {
			r.Warn("system prompt with OPENCODE_CONFIG", "agentcli: OPENCODE_CONFIG is already set; prepending the system prompt to the prompt instead",
				"backend", Name, "OPENCODE_CONFIG", v)
			prompt = system + "\n\n" + prompt
			system = ""
		}
	}
	// OPENCODE_CONFIG is not set anywhere in the environment (checked
	// above), so it cannot override a caller's value.
	if job.Env, err = configEnv(r, system, req.MCPServers); err != nil { // args.go
		return nil, err
	}
	if v := permissionEnv(req, r.Lookup("OPENCODE_PERMISSION")); v != "" {
		job.Env = append(job.Env, "OPENCODE_PERMISSION="+v)
	}
	job.Stdin = []byte(prompt)
	return job, nil
}

// resolveModel turns a plain model name into the provider/model that
// opencode's configuration declares (opencode fails with "Unexpected server
// error" on a plain name). A name with a "/" is passed as is. The models
// are listed with `opencode models` (no model call; about two seconds),
// once per configuration and Backend.
func (s *state) resolveModel(ctx context.Context, r *driver.Run, model string) (string, error) {
	if model == "" || strings.Contains(model, "/") {
		return model, nil
	}
	key := strings.Join([]string{r.Dir, r.Lookup("OPENCODE_CONFIG_CONTENT"), r.Lookup("OPENCODE_CONFIG"),
		r.Lookup("HOME"), r.Lookup("XDG_CONFIG_HOME")}, "\x00")
	s.mu.Lock()
	known, ok := s.models[key]
	s.mu.Unlock()
	if !ok {
		out, err := driver.Output(ctx, r, 30*time.Second, "models")
		if err != nil {
			return "", fmt.Errorf("opencode: resolving model %q (a plain name; opencode needs provider/model): %w", model, err)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if l = strings.TrimSpace(l); strings.Contains(l, "/") && !strings.ContainsAny(l, " \t") {
				known = append(known, l)
			}
		}
		s.mu.Lock()
		if len(s.models) >= 64 {
			clear(s.models)
		}
		s.models[key] = known
		s.mu.Unlock()
	}
	var match []string
	for _, m := range known {
		if _, name, _ := strings.Cut(m, "/"); name == model {
			match = append(match, m)
		}
	}
	bad := func(reason string) error {
		return &agentcli.RequestError{Backend: Name, Field: "Model", Reason: reason}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) > 1:
		return "", bad(fmt.Sprintf("%q is ambiguous: %s; give provider/model", model, strings.Join(match, ", ")))
	}
	list := known
	if len(list) > 20 {
		list = append(list[:20:20], "...")
	}
	return "", bad(fmt.Sprintf("opencode's configuration declares no model named %q; it knows %s (give provider/model)",
		model, strings.Join(list, ", ")))
}

// writeConfig writes the run's opencode config (see configContent; host
// as there) into dir (a private 0700 directory), with system.md holding
// the system prompt when there is one, and returns the config's path.
func writeConfig(dir, system string, servers []agentcli.MCPServer, host bool) (string, error) {
	sys := ""
	if system != "" {
		sys = filepath.Join(dir, "system.md")
		if err := os.WriteFile(sys, []byte(system), 0o600); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, "opencode.json")
	return path, os.WriteFile(path, configContent(sys, servers, host), 0o600)
}

// writeSystemPrompt writes system.md and an opencode config that lists it in
// "instructions" into dir (a private 0700 directory) and returns the
// config's path.
func writeSystemPrompt(dir, system string) (string, error) {
	return writeConfig(dir, system, nil, false)
}
