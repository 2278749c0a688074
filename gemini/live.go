package gemini

// Live sessions: `gemini --acp`, the Agent Client Protocol (driver/acp),
// checked against gemini 0.61.0.
//
// Argv: gemini --acp --skip-trust [--model=M] [--allowed-mcp-server-names=NAME,...]
// [ExtraArgs...], and GEMINI_CLI_HOME set to a one-shot run's private
// overlay when Request.Effort or host tools need settings (liveEnv). The
// session is created with session/new (or loaded with session/load for
// Request.SessionID) in Request.Dir, with Request.MCPServers as its
// mcpServers (gemini advertises mcpCapabilities http and sse; stdio is
// always there) except agentcli's host-tool server, which is a setting
// (an ACP server has no call time limit and replaces a setting's server
// of its name, so in the protocol it would keep gemini's 10 minutes),
// then its approval mode is chosen with session/set_mode:
//
//	bypass  yolo     (every tool runs without asking, as `--approval-mode yolo`)
//	ask     default  (gemini asks for shell commands, edits and web fetches; the callback decides)
//	deny    default  (and the session refuses every request)
//	plan    plan     (gemini's read-only mode)
//
// Permission requests offer proceed_always (allow_always), proceed_once
// (allow_once) and cancel (reject_once); a refusal goes back to the model
// as "Tool ... was canceled by the user" and the turn goes on. ACP cannot
// carry edited input or a message for the model. The tool's name comes
// from its call id ("run_shell_command__..."), its input from rawInput
// when gemini sends one (for shell commands the title is the command).
//
// Resuming: gemini 0.61.0's session/load starts a new chat recording
// before it reads the session, in a file named after the current UTC
// minute and the session id ("session-2026-11-22T20-00-0440eb0b.jsonl"). In
// the minute the session's own file was created that is the same file, and
// the load wipes the history (and every later load fails with "No previous
// sessions found for this project"). So when that file carries the current
// minute, StartSession waits for the next minute (bounded by its ctx)
// before it loads the session.
//
// Prompts: in ACP mode gemini passes "@path" through verbatim, but runs a
// prompt whose text starts with "/" or "$" as one of its commands when one
// has that name (/help, /init, /memory ...). Such a prompt gets a zero-width
// space (U+200B) in front, which gemini does not trim; the model receives
// "\u200b/help". Request.SystemPrompt is prepended to the first prompt of
// a new session, followed by a blank line (SystemPromptPrepend, as in a
// one-shot run). Usage comes from the _meta.quota.token_count of
// session/prompt's answer.

import (
	"context"
	"encoding/json"
	"iter"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// liveArgs returns the arguments of a live session. It is pure.
func liveArgs(req *agentcli.Request) []string {
	args := []string{"--acp", "--skip-trust"}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if len(req.AllowedTools) > 0 {
		// The servers the allow list names, and no other (the user's
		// own included); the session asks about their tools and
		// answers from the list (live.Host.Ask).
		lists, _ := listsFor(req)
		args = append(args, "--allowed-mcp-server-names="+lists.serverNames(req))
	} else if names := driver.MCPNames(req); len(names) > 0 && sessionMode(req) == "yolo" {
		// As in a one-shot run: the request's servers and no other. Only
		// where nothing asks: gemini also allows every tool of the
		// servers it names without asking.
		args = append(args, "--allowed-mcp-server-names="+strings.Join(names, ","))
	}
	return append(args, req.ExtraArgs...)
}

// mcpValue escapes an MCP server's env or header value for ACP: gemini
// 0.61.0 expands $NAME and ${NAME} in them (dotenv-expand) when it starts
// the server, and turns "\$" into a plain "$". Command, args and URL are
// taken as they are (verified with hostile values by conformance
// TestLiveMCPServers).
func mcpValue(v string) string { return strings.ReplaceAll(v, "$", `\$`) }

// liveEnv returns the environment entries a live session adds to r.Env:
// the private GEMINI_CLI_HOME overlay of a one-shot run (see overlayHome)
// when the request's effort or agentcli's host-tool server needs
// settings, or nothing. Other MCP servers travel in the protocol.
func liveEnv(r *driver.Run) ([]string, error) {
	var host []agentcli.MCPServer
	for _, s := range r.Req.MCPServers {
		if driver.IsHostServer(r.Req, s.Name) {
			host = append(host, s)
		}
	}
	extra, dollar := runSettings(&agentcli.Request{Effort: r.Req.Effort, MCPServers: host,
		AllowedTools: r.Req.AllowedTools, DisallowedTools: r.Req.DisallowedTools,
		Tools: r.Req.Tools, OnQuestion: r.Req.OnQuestion})
	return overlayEnv(r, extra, dollar)
}

// sessionMode returns gemini's approval mode for req's permission mode.
// Under bypass with an allow list gemini asks, and the session answers
// from the list (a listed tool is allowed, any other refused), since
// yolo would run every tool of a server the list names.
func sessionMode(req *agentcli.Request) string {
	if driver.AsksAll(req) && driver.Mode(req) == agentcli.PermissionBypass {
		// PreToolUse sees what gemini asks about; the session allows
		// what the hook lets through (live.Host.Ask).
		return "default"
	}
	switch driver.Mode(req) {
	case agentcli.PermissionAsk, agentcli.PermissionDeny:
		return "default"
	case agentcli.PermissionBypass:
		if len(req.AllowedTools) > 0 {
			return "default"
		}
		return "yolo"
	case agentcli.PermissionPlan:
		return "plan"
	}
	return "yolo"
}

// guardPrompt keeps a prompt from being run as one of gemini's commands.
func guardPrompt(p string) string {
	t := strings.TrimSpace(p)
	if strings.HasPrefix(t, "/") || strings.HasPrefix(t, "$") {
		return "\u200b" + p
	}
	return p
}

// toolName returns the tool name gemini puts in front of a call id
// ("run_shell_command__run_shell_command_1795377215448_0").
func toolName(id, _ string) string {
	if name, _, ok := strings.Cut(id, "__"); ok {
		return name
	}
	return ""
}

// quotaUsage reads _meta.quota.token_count of a session/prompt answer.
func quotaUsage(raw json.RawMessage) (agentcli.Usage, bool) {
	var r struct {
		Meta struct {
			Quota struct {
				TokenCount *struct {
					InputTokens  int64 `json:"input_tokens"`
					OutputTokens int64 `json:"output_tokens"`
				} `json:"token_count"`
			} `json:"quota"`
		} `json:"_meta"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Meta.Quota.TokenCount == nil {
		return agentcli.Usage{}, false
	}
	tc := r.Meta.Quota.TokenCount
	return agentcli.Usage{InputTokens: tc.InputTokens, OutputTokens: tc.OutputTokens}, true
}

// startSession starts a gemini live session for the prepared run r.
func startSession(ctx context.Context, r *driver.Run) (agentcli.Session, error) {
	req := r.Req
	if req.NewSessionID != "" {
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "a caller-chosen session id in live sessions",
			Reason: "gemini's ACP mode makes up its own session ids"}
	}
	if req.ForkSession {
		// ACP has no session/fork: the session loaded is a copy.
		nid, err := forkChat(r, req.SessionID)
		if err != nil {
			return nil, err
		}
		c := *req
		c.SessionID, c.ForkSession = nid, false
		req = &c
		r.Req = req
	}
	ac := acp.Config{
		Dir:       r.Dir,
		SessionID: req.SessionID,
		Mode:      sessionMode(req),
		Guard:     guardPrompt,
		RawName:   toolName,
		Usage:     quotaUsage,
		Tools:     tools,
		Switch:    switching(req),
	}
	lists, _ := listsFor(req)
	var servers []agentcli.MCPServer
	for _, s := range req.MCPServers {
		if lists.keeps(s.Name) && !driver.IsHostServer(req, s.Name) { // the host's: liveEnv
			servers = append(servers, s)
		}
	}
	if len(servers) > 0 {
		ac.MCPServers = acp.MCPServers(servers, mcpValue)
	}
	if req.SystemPrompt != "" && req.SessionID == "" {
		ac.FirstPrefix = req.SystemPrompt + "\n\n"
	}
	if req.SessionID != "" {
		if err := waitLoadable(ctx, r.Env, req.SessionID, time.Now); err != nil {
			return nil, &agentcli.CanceledError{Backend: Name, Err: err}
		}
	}
	env, err := liveEnv(r)
	if err != nil {
		return nil, err
	}
	return acp.Start(ctx, r, Name, req, liveArgs(req), env, ac)
}

// replaySession replays a live session's wire log, with the protocol
// configured as the log recorded it and switching as the session did.
func replaySession(r *driver.Run, proto json.RawMessage, log *wirelog.Reader) iter.Seq2[agentcli.Event, error] {
	return acp.Replay(r, Name, proto, log, acp.Config{Guard: guardPrompt, RawName: toolName, Usage: quotaUsage, Tools: tools,
		Switch: switching(r.Req)}, nil)
}

// waitLoadable waits, when gemini's chat file of session id is stamped with
// the current UTC minute, until the next minute begins (see Resuming).
func waitLoadable(ctx context.Context, env []string, id string, now func() time.Time) error {
	for {
		d := untilLoadable(env, id, now())
		if d <= 0 {
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}

// untilLoadable returns how long to wait before session id can be loaded
// safely at time t, or 0.
func untilLoadable(env []string, id string, t time.Time) time.Duration {
	short := id
	if len(short) > 8 {
		short = short[:8]
	}
	if short == "" || strings.ContainsAny(short, `/\*?[]`) {
		return 0
	}
	home := lookup(env, "GEMINI_CLI_HOME")
	if home == "" {
		home = lookup(env, "HOME")
	}
	if home == "" {
		return 0
	}
	minute := t.UTC().Format("2006-01-02T15-04")
	matches, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-"+minute+"-"+short+".jsonl"))
	if len(matches) == 0 {
		return 0
	}
	next := t.UTC().Truncate(time.Minute).Add(time.Minute)
	return next.Sub(t.UTC()) + 100*time.Millisecond
}

// lookup returns the value of key in env; the last entry wins.
func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
