package droid

// Live sessions: `droid exec --output-format acp-daemon`, the Agent Client
// Protocol (driver/acp), checked against droid 0.225.2. Droid's own
// JSON-RPC (--input-format stream-jsonrpc) would take more (a system
// prompt override, tool lists per session); ACP is the protocol agentcli
// already speaks.
//
// The session is created with session/new (or loaded with session/load
// for Request.SessionID: the airgap-safe resume) in Request.Dir, with no
// mcpServers (Request.MCPServers, agentcli's own server for host tools
// among them, are in the runtime settings file: hosttools.go); then its autonomy is chosen with
// session/set_mode, and the model and effort with
// session/set_config_option:
//
//	bypass  auto-high  (droid runs every action; "normal" when the request has tool lists)
//	ask     normal     (droid asks about every command and edit, whatever risk the model claims; the callback decides)
//	deny    normal     (and the session refuses every request)
//	plan    spec       (droid's read-only spec mode; what it asks about is refused)
//
// In "normal" ("Auto (Off)") droid asks about a command the model labels
// "low" too (verified), so the host, not the model's label, decides. It
// runs its reading tools (Read, LS, Grep, Glob, TodoWrite) without asking,
// and its ACP mode takes no tool list (--only-tools and --remove-tools are
// ignored there: verified). So a live session can hold a disallow list
// that names none of those (the session refuses the calls droid asks
// about), and no allow list: either is refused with an
// *agentcli.UnsupportedError before anything starts.
//
// Permission requests offer proceed_once (allow_once), proceed_always
// (allow_always: "Allow & auto-run low risk commands", which raises the
// session's autonomy to the risk the model claimed for that command, so
// that droid runs later commands it labels at most that level without
// asking) and cancel (reject_once); a refusal ends the turn (droid makes
// no further model call), and the next turn's history has it.
//
// Droid's ACP mode ignores --append-system-prompt-file: the system prompt
// is put before the first prompt of a new session. A prompt starting with
// "/" would run one of droid's commands: it gets a zero-width space in
// front. Droid makes a session-title model call (no tools) at its first
// prompt.

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// liveArgs returns the arguments of a live session; settings is the
// path of its runtime settings file ("" for none: see hosttools.go). It
// is pure.
func liveArgs(req *agentcli.Request, settings string) []string {
	args := []string{"exec", "--output-format=acp-daemon"}
	if settings != "" {
		args = append(args, "--settings="+settings)
	}
	return append(args, req.ExtraArgs...)
}

// sessionMode returns droid's session mode for req.
func sessionMode(req *agentcli.Request) string {
	switch driver.Mode(req) {
	case agentcli.PermissionBypass:
		if len(req.AllowedTools)+len(req.DisallowedTools) > 0 {
			return "normal"
		}
		return "auto-high"
	case agentcli.PermissionPlan:
		return "spec"
	}
	return "normal"
}

// checkLiveTools fails with an *agentcli.UnsupportedError when a live
// session cannot hold req's tool lists (see the top of this file).
func checkLiveTools(req *agentcli.Request) error {
	if len(req.AllowedTools) > 0 {
		return &agentcli.UnsupportedError{Backend: Name, Feature: "allowed tools in a live session",
			Reason: "droid's ACP mode takes no tool list and runs its reading tools (Read, LS, Grep, Glob, TodoWrite) without asking"}
	}
	for _, t := range req.DisallowedTools {
		for _, n := range droidNames(t) {
			if slices.Contains(readOnly, n) {
				return &agentcli.UnsupportedError{Backend: Name, Feature: "disallowed tools in a live session",
					Reason: "droid's ACP mode takes no tool list and runs " + n + " without asking"}
			}
		}
	}
	return nil
}

// guardPrompt keeps a prompt from being run as one of droid's commands,
// and from tagging files (promptText).
func guardPrompt(p string) string {
	p = promptText(p)
	if strings.HasPrefix(strings.TrimSpace(p), "/") {
		return "\u200b" + p
	}
	return p
}

// toolName names a tool call from its title: droid titles a command
// "`COMMAND` (RISK)", and an MCP tool by its name, SERVER___TOOL.
func toolName(_, title string) string {
	switch {
	case strings.HasPrefix(title, "`"):
		return "Execute"
	case strings.Contains(title, "___") && !strings.ContainsAny(title, " \t\n"):
		return title
	}
	return ""
}

// acpConfig returns the ACP configuration of a session for req in dir.
func acpConfig(req *agentcli.Request, dir string) acp.Config {
	ac := acp.Config{
		Dir:       dir,
		SessionID: req.SessionID,
		Mode:      sessionMode(req),
		Guard:     guardPrompt,
		RawName:   toolName,
		Tools:     tools,
		Switch:    switching(req),
	}
	if req.Model != "" {
		ac.Options = append(ac.Options, acp.Option{ID: "model", Value: req.Model})
	}
	if req.Effort != "" {
		ac.Options = append(ac.Options, acp.Option{ID: "reasoning_effort", Value: string(req.Effort), IfOffered: true})
	}
	// MCP servers are in the runtime settings file: droid 0.225.2's
	// daemon fails a session/new that has some.
	if req.SystemPrompt != "" && req.SessionID == "" {
		ac.FirstPrefix = req.SystemPrompt + "\n\n"
	}
	return ac
}

// startSession starts a droid live session for the prepared run r.
func startSession(ctx context.Context, r *driver.Run) (agentcli.Session, error) {
	req := r.Req
	if err := checkLiveTools(req); err != nil {
		return nil, err
	}
	if req.ForkSession {
		// ACP has no fork: droid's JSON-RPC forks, ACP loads the fork
		// (manage.go).
		id, err := forkSession(ctx, r, req.SessionID)
		if err != nil {
			return nil, err
		}
		c := *req
		c.SessionID, c.ForkSession = id, false
		req = &c
	}
	created := req.NewSessionID != ""
	if created {
		// ACP takes no id: droid's JSON-RPC makes the session (manage.go).
		if err := createSession(ctx, r, req.NewSessionID); err != nil {
			return nil, err
		}
		c := *req
		c.SessionID, c.NewSessionID = req.NewSessionID, ""
		req = &c
	}
	ac := acpConfig(req, r.Dir)
	if created && req.SystemPrompt != "" {
		ac.FirstPrefix, ac.Empty = req.SystemPrompt+"\n\n", true // a new session's, as acpConfig's
	}
	settings, env, err := runtimeSettings(r)
	if err != nil {
		return nil, err
	}
	return acp.Start(ctx, r, Name, req, liveArgs(req, settings), env, ac)
}

// replaySession replays a live session's wire log, with the protocol
// configured as the log recorded it and switching as the session did.
func replaySession(r *driver.Run, proto json.RawMessage, log *wirelog.Reader) iter.Seq2[agentcli.Event, error] {
	return acp.Replay(r, Name, proto, log, acp.Config{Guard: guardPrompt, RawName: toolName, Tools: tools,
		Switch: switching(r.Req)}, nil)
}
