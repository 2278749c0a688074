package copilot

// Live sessions: `copilot --acp`, the Agent Client Protocol (driver/acp),
// checked against copilot 1.0.102.
//
// Argv: copilot --acp --no-auto-update [--model=M]
// [--reasoning-effort=LEVEL] [--additional-mcp-config=@FILE]
// [--plugin-dir=DIR] [TOOL FLAGS] [--no-ask-user] [ExtraArgs...]: the
// one-shot run's flags, which copilot applies in ACP mode too (the tool
// lists restrict what the session offers), but --allow-all: bypass is
// the session's "allow_all" config option, which SetPermission can
// switch (switch.go). The session is created with session/new
// (or loaded with session/load for Request.SessionID) in Request.Dir; its
// MCP servers come from the same private configuration file as a run's
// (not session/new's mcpServers), so that an allow list can filter their
// tools. The permission modes:
//
//	bypass  session/set_config_option "allow_all" "on": copilot asks nothing
//	ask     copilot asks for shell commands, writes, MCP tools and URLs; the callback decides
//	deny    the same requests, each refused by the session
//	plan    session/set_config_option "mode" to ACP's plan mode
//	        (https://agentclientprotocol.com/protocol/session-modes#plan),
//	        and every request refused
//
// Permission requests offer allow_once, allow_always and reject_once. A
// refusal ends the turn at once (stopReason end_turn, no further model
// call, and the text "Info: Operation cancelled by user"); the next
// turn's history carries the refused call. ACP cannot carry edited input
// or a message for the model. session/cancel ends a turn within
// milliseconds, a running shell command killed.
//
// Tool calls are named by their ACP kind (copilot sends no tool name; the
// title is the model's description of the call): execute is Bash, read
// Read, edit Edit, and so on. session/prompt's answer carries the
// session's token usage so far; each turn's Usage is the difference from
// the turn before (the first turn of a loaded session counts the whole
// session and is marked Cumulative). Request.SystemPrompt travels as in a
// run (COPILOT_CUSTOM_INSTRUCTIONS_DIRS).
//
// Prompts: in ACP mode copilot runs a prompt that starts with one of its
// slash commands as that command, without a model call: "/allow-all on"
// approves every later tool call of the session (checked: the next turn's
// shell command ran without a permission request). Every prompt whose
// text, trimmed, starts with "/" therefore gets a zero-width space
// (U+200B) in front, which copilot does not trim; the model receives
// "\u200b/help". (A one-shot run's prompt, on stdin, is never a command.)

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// planMode is copilot's value of its "mode" config option for plan mode.
const planMode = "https://agentclientprotocol.com/protocol/session-modes#plan"

// liveArgs returns the arguments of a live session. It is pure.
func liveArgs(req *agentcli.Request, p toolPolicy, f files) []string {
	// Bypass is the "allow_all" option, not --allow-all, which no
	// option could take back (switch.go).
	p.allowAll = false
	args := append([]string{"--acp", "--no-auto-update"}, commonArgs(req, p, f)...)
	args = append(args, questionArgs(req)...)
	return append(args, req.ExtraArgs...)
}

// guardPrompt keeps a prompt from being run as one of copilot's slash
// commands (see Prompts): a prompt whose text starts with "/" gets a
// zero-width space (U+200B) in front.
func guardPrompt(p string) string {
	if strings.HasPrefix(strings.TrimSpace(p), "/") {
		return "\u200b" + p
	}
	return p
}

// isNotice reports whether a message chunk is one of copilot's session
// notices, which its ACP agent sends as agent text: "Info: Disabled
// tools: ..." when a tool list takes tools away, "Info: Operation
// cancelled by user" after a refused call, "Warning: ...".
func isNotice(text string) bool {
	for _, p := range []string{"Info: ", "Warning: "} {
		if len(text) > len(p) && strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// mcpToolName returns the RawName hook of a session with servers: the
// title of a call of one of their tools is its name, SERVER-TOOL (copilot
// sends no tool name; other titles are the model's description of the
// call).
func mcpToolName(servers []agentcli.MCPServer) func(id, title string) string {
	return func(_, title string) string {
		for _, s := range servers {
			if strings.HasPrefix(title, s.Name+"-") && len(title) > len(s.Name)+1 && !strings.ContainsAny(title, " \t\n") {
				return title
			}
		}
		return ""
	}
}

// sessionUsage returns the Usage hook of one session: the turn's usage is
// the difference between the session's usage so far and the previous
// turn's. loaded marks a session/load: its first count covers the whole
// session.
func sessionUsage(loaded bool) func(json.RawMessage) (agentcli.Usage, bool) {
	var mu sync.Mutex
	var prev agentcli.Usage
	first := true
	return func(raw json.RawMessage) (agentcli.Usage, bool) {
		var r struct {
			Usage *struct {
				InputTokens       int64 `json:"inputTokens"`
				OutputTokens      int64 `json:"outputTokens"`
				ThoughtTokens     int64 `json:"thoughtTokens"`
				CachedReadTokens  int64 `json:"cachedReadTokens"`
				CachedWriteTokens int64 `json:"cachedWriteTokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(raw, &r) != nil || r.Usage == nil {
			return agentcli.Usage{}, false
		}
		x := r.Usage
		cur := agentcli.Usage{
			InputTokens:      driver.SubCount(driver.SubCount(driver.Count(x.InputTokens), driver.Count(x.CachedReadTokens)), driver.Count(x.CachedWriteTokens)),
			OutputTokens:     driver.Count(x.OutputTokens),
			CacheReadTokens:  driver.Count(x.CachedReadTokens),
			CacheWriteTokens: driver.Count(x.CachedWriteTokens),
			ReasoningTokens:  driver.Count(x.ThoughtTokens),
		}
		mu.Lock()
		defer mu.Unlock()
		u := agentcli.Usage{
			InputTokens:      driver.SubCount(cur.InputTokens, prev.InputTokens),
			OutputTokens:     driver.SubCount(cur.OutputTokens, prev.OutputTokens),
			CacheReadTokens:  driver.SubCount(cur.CacheReadTokens, prev.CacheReadTokens),
			CacheWriteTokens: driver.SubCount(cur.CacheWriteTokens, prev.CacheWriteTokens),
			ReasoningTokens:  driver.SubCount(cur.ReasoningTokens, prev.ReasoningTokens),
			Cumulative:       first && loaded,
		}
		first = false
		prev = cur
		return u, true
	}
}

// acpConfig returns the ACP configuration of a session of req in dir.
func acpConfig(req *agentcli.Request, dir string) acp.Config {
	ac := acp.Config{
		Dir:       dir,
		SessionID: req.SessionID,
		Guard:     guardPrompt,
		RawName:   mcpToolName(req.MCPServers),
		Usage:     sessionUsage(req.SessionID != ""),
		Tools:     tools,
		KindNames: true,
		Notice:    isNotice,
	}
	if driver.Mode(req) == agentcli.PermissionPlan {
		ac.Options = append(ac.Options, acp.Option{ID: "mode", Value: planMode})
	}
	if aa, err := allowAllOption(req); err == nil && aa.Value == "on" {
		ac.Options = append(ac.Options, aa)
	}
	ac.Switch = switching(req)
	return ac
}

// startSession starts a copilot live session for the prepared run r.
func startSession(ctx context.Context, r *driver.Run) (agentcli.Session, error) {
	req, err := forked(ctx, r, r.Req) // manage.go
	if err != nil {
		return nil, err
	}
	s, err := setUp(r, req, true) // args.go
	if err != nil {
		return nil, err
	}
	return acp.Start(ctx, r, Name, req, liveArgs(req, s.p, s.f), s.env, acpConfig(req, r.Dir))
}

// replaySession replays a live session's wire log, with the protocol
// configured as the log recorded it.
func replaySession(r *driver.Run, proto json.RawMessage, log *wirelog.Reader) iter.Seq2[agentcli.Event, error] {
	return acp.Replay(r, Name, proto, log, acpConfig(r.Req, ""), func(ac *acp.Config, servers []agentcli.MCPServer) {
		ac.Usage = sessionUsage(ac.SessionID != "")
		ac.RawName = mcpToolName(servers)
	})
}
