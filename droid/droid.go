// Package droid is the agentcli backend for Factory Droid (`droid`, tested
// with 0.225.2). Importing it registers the backend as "droid".
//
// # Command line
//
// A one-shot run is `droid exec --output-format=stream-json` (see
// buildArgs) with the prompt on stdin, which the model receives byte for
// byte (droid exec runs no slash command), except that an "@" that tags a
// file gets an invisible word joiner after it, since droid would attach
// the file (see promptText). A run
// that carries what only droid's live protocol takes — PermissionAsk, a
// session to resume — is one turn of a live session (see live.go).
//
// # Permissions
//
// Droid's autonomy levels (--auto low|medium|high, the default read-only
// one) let a command run when the risk level the model itself states for
// it is at most the level: a model that labels `rm -rf ~` "low" runs it in
// the read-only mode (verified with `echo x > file`). agentcli does not map
// any mode to them. Runs skip droid's checks and get, instead, the tools
// they may use (--only-tools, --remove-tools), which droid enforces: the
// zero mode (deny) and plan have the reading and searching tools only
// (plan in droid's spec mode), bypass every tool. See buildArgs.
//
// # Sessions and resume
//
// Result.SessionID is droid's session UUID. `droid exec -s ID` fetches the
// session from Factory's API first, so it fails offline and in airgap mode
// (exit 1, nothing printed); a run with Request.SessionID is therefore one
// turn of a live session, which loads the session from disk (ACP
// session/load). Sessions are kept per working directory
// (~/.factory/sessions/<dir>/<id>.jsonl). Request.ForkSession is
// `exec --fork=ID` (a live session forks through droid's JSON-RPC), and
// Request.Continue resumes the newest session agentcli.ListSessions finds;
// a caller-chosen id (Request.NewSessionID) is made through droid's
// JSON-RPC, and a run with one is a live session's turn (see manage.go).
//
// # System prompt and settings
//
// Request.SystemPrompt is appended to droid's with
// --append-system-prompt-file (a private file in the run's temporary
// directory). Droid's ACP mode ignores that flag (verified), so in a live
// session the system prompt is put before the first prompt of a new
// session, followed by a blank line. Request.Effort is
// --reasoning-effort (droid's own models; droid sends no reasoning field to
// a generic Chat Completions custom model). Droid has no structured
// output, fallback model, turn limit or spending cap that agentcli can
// set.
//
// # MCP servers, host tools, questions, hooks, switching
//
// Request.MCPServers, Request.Tools and Request.OnQuestion (agentcli's
// MCP server) and Request.Hooks (droid's own command hooks, relayed to
// agentcli) travel in a private runtime settings file, --settings,
// one-shot and live (droid 0.225.2's ACP daemon fails every session/new
// that has mcpServers): see hosttools.go and hooks.go. Droid starts MCP
// servers in the background; the same file sets droid's blockOnMcpLoad,
// so that every turn, a live session's first one included, waits until
// no server is still connecting before it calls the model (at most 60 s,
// droid's FACTORY_MCP_BLOCKING_LOAD_TIMEOUT_MS; a server that failed
// does not hold it), and the first turn is offered every server's tools.
// In a live session a server that fails to start is not reported: droid's
// ACP daemon goes on without its tools and says nothing of it (a one-shot
// run fails instead, with an *agentcli.ExitError whose Hint says so).
// SetModel and SetPermission switch a live session over ACP (switch.go).
//
// # Credentials
//
// FACTORY_API_KEY, a login (~/.factory/auth.json), or custom models
// (BYOK) in ~/.factory/settings.json, which FACTORY_AIRGAP_ENABLED=1 makes
// the only thing droid talks to.
package droid

import (
	"context"
	"os"
	"path/filepath"
	"runtime"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Name is the registry name of this backend.
const Name = "droid"

func init() { driver.Register(Name, New) }

// New returns a Factory Droid backend. opts may be nil; it is copied.
func New(opts *agentcli.Options) agentcli.Backend { return driver.New(&spec, opts) }

var spec = driver.Spec{
	Name:           Name,
	Package:        "@factory/cli", // tools/clis pins its linux/x64 build, @factory/cli-linux-x64
	Credentials:    []string{"FACTORY_API_KEY"},
	HasCredentials: hasCredentials,
	Login:          "log in with `droid` (/login), or declare custom models (BYOK) in ~/.factory/settings.json",
	Caps: agentcli.Capabilities{
		Resume:          true,
		SystemPrompt:    agentcli.SystemPromptAppend,
		ToolFilter:      true,
		Interrupt:       true,
		Steer:           agentcli.SteerQueued,
		PermissionModes: driver.PermissionModes,
		// MCP servers: a runtime settings file, not ACP's
		// session/new (hosttools.go).
		MCP:     true,
		Efforts: []agentcli.Effort{agentcli.EffortLow, agentcli.EffortMedium, agentcli.EffortHigh, agentcli.EffortXHigh, agentcli.EffortMax},
		// Host tools, questions and hooks: the runtime settings file
		// (hosttools.go, hooks.go); switching: switch.go.
		HostTools:     true,
		Questions:     true,
		Hooks:         hookSupport,
		SetModel:      true,
		SetPermission: driver.PermissionModes,
		// See manage.go.
		ForkSession:  agentcli.SessionModes{OneShot: true, Live: true},
		NewSessionID: agentcli.SessionModes{OneShot: true, Live: true},
	},
	NativeHooks:   nativeHooks,
	Interactive:   interactive,
	Tools:         tools,
	Validate:      validate,
	Prepare:       prepare,
	NewParser:     func(*driver.Run) driver.Parser { return newParser() },
	StartSession:  startSession,
	LiveRun:       liveRun, // manage.go
	ReplaySession: replaySession,
	ExportSession: exportSession,
	ImportSession: importSession,
	ListSessions:  listSessions,
	Classify: driver.ClassifyBy(
		driver.ErrorMatch{Contains: []string{"failed to fetch session", "session not found", "no session found"}, Err: agentcli.ErrSessionNotFound},
		driver.ErrorMatch{Contains: []string{"authentication failed", "please log in"}, Err: agentcli.ErrAuth},
	),
	// droid exec names no tool it cannot find: with --add-tools or
	// --only-tools of MCP:SERVER, a server that did not start has none.
	Hint: driver.HintOn(driver.Hint{Contains: "Unknown tool identifier",
		Say: "droid has no tool of a name it was given: an MCP server of the request that did not start has none, or a tool rule names a tool droid lacks"}),
}

// tools maps droid's tool names (0.225.2's llmIds) to canonical ones.
var tools = driver.Tools{
	"execute":      agentcli.ToolNameBash,
	"read":         agentcli.ToolNameRead,
	"ls":           agentcli.ToolNameLS,
	"edit":         agentcli.ToolNameEdit,
	"applypatch":   agentcli.ToolNameEdit,
	"create":       agentcli.ToolNameWrite,
	"grep":         agentcli.ToolNameGrep,
	"glob":         agentcli.ToolNameGlob,
	"todowrite":    agentcli.ToolNameTodoWrite,
	"fetchurl":     agentcli.ToolNameWebFetch,
	"websearch":    agentcli.ToolNameWebSearch,
	"askuser":      agentcli.ToolNameAskUserQuestion,
	"task":         agentcli.ToolNameTask,
	"skill":        agentcli.ToolNameSkill,
	"exitspecmode": agentcli.ToolNameExitPlanMode,
	"taskoutput":   agentcli.ToolNameBashOutput,
	"taskstop":     agentcli.ToolNameKillShell,
}

// prepare builds a one-shot run: buildArgs, the system prompt in a
// private file, the prompt on stdin.
func prepare(_ context.Context, r *driver.Run) (*driver.Job, error) {
	if r.Req.ForkSession && findTranscript(r, r.Req.SessionID) == "" {
		return nil, driver.SessionNotFound(Name, r.Req.SessionID) // manage.go
	}
	sys, err := writeSystemPrompt(r)
	if err != nil {
		return nil, err
	}
	settings, env, err := runtimeSettings(r)
	if err != nil {
		return nil, err
	}
	return &driver.Job{Args: buildArgs(r.Req, sys, settings), Env: env, Stdin: []byte(promptText(r.Req.Prompt))}, nil
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

// hasCredentials reports whether droid has a way to authenticate in r:
// FACTORY_API_KEY, the files its login writes, custom models declared in
// its settings (user, local or runtime). On macOS a login's token is in
// the keychain, which is not looked into: droid is assumed to have one.
func hasCredentials(r *driver.Run) bool {
	if runtime.GOOS == "darwin" || r.AnySet("FACTORY_API_KEY") {
		return true
	}
	// FACTORY_HOME_OVERRIDE stands for the home directory, not for
	// .factory (droid joins ".factory" to it, as sessions.go does).
	dir := filepath.Join(r.Home(), ".factory")
	if d := r.Lookup("FACTORY_HOME_OVERRIDE"); filepath.IsAbs(d) {
		dir = filepath.Join(d, ".factory")
	}
	for _, f := range []string{"auth.json", "auth-state.json", ".auth-state.json"} {
		if driver.FileExists(filepath.Join(dir, f)) {
			return true
		}
	}
	settings := []string{filepath.Join(dir, "settings.json"), filepath.Join(dir, "settings.local.json")}
	if p := r.Lookup("FACTORY_RUNTIME_SETTINGS_PATH"); p != "" {
		settings = append(settings, p)
	}
	for _, f := range settings {
		if driver.FileMentions(f, `"customModels"`, `"apiKey"`) {
			return true
		}
	}
	return false
}
