// Package acp is the client side of the Agent Client Protocol for live
// sessions: gemini (`gemini --acp`) and opencode (`opencode acp`) speak it.
//
// The message types are those of github.com/coder/acp-go-sdk; the transport
// is package live's JSON-RPC peer rather than the SDK's Connection. The
// SDK's connection reads lines with a bufio.Scanner capped at 10 MiB (a
// longer line ends the connection), closes the connection when 1024
// notifications wait for a slow consumer, drops session updates of a kind it
// does not know, and cannot hand the raw line to the caller. driver/live
// reads lines of any length (up to Options.MaxLineBytes, then skipped with a
// notice), never blocks its reader on a slow consumer, keeps unknown updates
// as EventUnknown with their raw line, and runs the process with the
// guarantees of internal/proc.
//
// The flow: initialize (no file system or terminal capabilities offered, so
// the agent does its own I/O), session/new or session/load with the
// request's MCP servers (the agent replays the history as session/update
// notifications, which arrive between turns and are dropped), then per CLI
// a session mode or config options (some only when the agent's latest
// configOptions offer them), then per turn session/prompt, whose answer
// ends the turn;
// session/cancel interrupts it (the answer then has stopReason
// "cancelled"). session/request_permission requests go to the session's
// permission handling; the decision selects the offered option of its kind
// (by kind, never by id), or answers "cancelled" when none fits.
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
)

// Config is what differs between ACP agents.
type Config struct {
	// Dir is the session's absolute working directory (cwd of
	// session/new and session/load).
	Dir string
	// SessionID, when set, is loaded with session/load.
	SessionID string
	// Fork, with SessionID, forks that session with session/fork instead:
	// the session is a new one with its history.
	Fork bool
	// Mode, when set, is selected with session/set_mode once the session
	// exists.
	Mode string
	// Options are set with session/set_config_option once the session
	// exists, in order (opencode: "mode", "model", "effort").
	Options []Option
	// MCPServers are passed to session/new and session/load (see
	// MCPServers).
	MCPServers []sdk.McpServer
	// FirstPrefix is put before the first prompt of a new session (a
	// system prompt the agent has no other way to receive).
	FirstPrefix string
	// Empty reports that the session SessionID names is new and empty
	// (the backend made it under an id of its choice): FirstPrefix goes
	// before its first prompt too.
	Empty bool
	// Guard rewrites a prompt before it is sent, or is nil.
	Guard func(prompt string) string
	// RawName names the tool of a tool call from its id, title and kind,
	// or returns "" when it cannot tell.
	RawName func(id, title string) string
	// Usage reads the token usage from a session/prompt answer, or is nil.
	Usage func(resp json.RawMessage) (agentcli.Usage, bool)
	// Tools maps the agent's raw tool names to canonical ones.
	Tools driver.Tools
	// KindNames names a tool call that has no raw name (RawName gives
	// none) by the canonical tool of its ACP kind: read Read, edit Edit,
	// delete Delete, search Grep, fetch WebFetch (execute is Bash
	// either way). Without it such a call is named by its kind.
	KindNames bool
	// OnInitialize, if set, is called with the agent's answer to
	// initialize (its agentCapabilities, agentInfo, authMethods); an
	// error ends the start with it.
	OnInitialize func(result json.RawMessage) error
	// ModeOf, if set, chooses the session's mode once the session
	// exists, from the ids the agent offers (its modes' availableModes
	// and the values of a "mode" config option, in that order): an id
	// of the first is selected with session/set_mode, one of the second
	// with session/set_config_option "mode"; "" selects none, and an
	// error ends the start with it. It replaces Mode.
	ModeOf func(offered []string) (string, error)
	// Notice, if set, picks out the agent's own notes among its message
	// chunks (copilot sends its session notices, "Info: ...", as agent
	// text): a chunk that starts a message (the update before it was no
	// message chunk, or a note) and for which Notice returns true is an
	// EventNotice with the text, kept out of the turn's text.
	Notice func(text string) bool
	// Switch says what the agent can switch mid-session, and whether it
	// takes input into a running turn (switch.go).
	Switch Switching
}

// Option is one session config option.
type Option struct {
	// ID is the option's id ("model"), Value the value to select.
	ID    string `json:"id"`
	Value string `json:"value"`
	// IfOffered sets the option only when the agent offers it with
	// Value among its values (in the configOptions of its latest
	// answer); otherwise it is skipped with a warning. The options an
	// agent offers may depend on others (opencode offers "effort" only
	// for a model with variants, and only those).
	IfOffered bool `json:"if_offered,omitempty"`
}

// Recorded is what a live session's wire log keeps of its Config (as the
// start record's "proto"): what decides which requests the session sends
// and how the agent's answers read. It holds no secret.
type Recorded struct {
	SessionID string   `json:"session_id,omitempty"`
	Fork      bool     `json:"fork,omitempty"`
	Mode      string   `json:"mode,omitempty"`
	Options   []Option `json:"options,omitempty"`
	// MCP names the request's MCP servers (their tools' names depend on
	// them).
	MCP []string `json:"mcp,omitempty"`
}

// Record returns what a wire log keeps of c, with the names of servers.
func (c Config) Record(servers []agentcli.MCPServer) Recorded {
	r := Recorded{SessionID: c.SessionID, Fork: c.Fork, Mode: c.Mode, Options: c.Options}
	for _, s := range servers {
		r.MCP = append(r.MCP, s.Name)
	}
	return r
}

// ReadRecorded reads a wire log's Recorded (raw may be empty) into c,
// and returns the MCP servers it names (names only).
func ReadRecorded(raw json.RawMessage, c *Config) ([]agentcli.MCPServer, error) {
	var r Recorded
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
	}
	c.SessionID, c.Fork, c.Mode, c.Options = r.SessionID, r.Fork, r.Mode, r.Options
	var servers []agentcli.MCPServer
	for _, n := range r.MCP {
		servers = append(servers, agentcli.MCPServer{Name: n})
	}
	return servers, nil
}

// MCPServers converts servers to ACP's form: stdio servers {name,
// command, args, env: [{name, value}]}, HTTP ones {type: "http", name,
// url, headers: [{name, value}]}, every list present (an agent may
// iterate it unchecked), entries in a stable order. value rewrites each
// env and header value (an agent that expands references in them needs
// an escape), or is nil.
func MCPServers(servers []agentcli.MCPServer, value func(string) string) []sdk.McpServer {
	if value == nil {
		value = func(s string) string { return s }
	}
	out := make([]sdk.McpServer, 0, len(servers))
	for _, s := range servers {
		if s.URL != "" {
			h := &sdk.McpServerHttpInline{Name: s.Name, Type: "http", Url: s.URL, Headers: []sdk.HttpHeader{}}
			for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
				h.Headers = append(h.Headers, sdk.HttpHeader{Name: k, Value: value(s.Headers[k])})
			}
			out = append(out, sdk.McpServer{Http: h})
			continue
		}
		st := &sdk.McpServerStdio{Name: s.Name, Command: s.Command, Args: append([]string{}, s.Args...), Env: []sdk.EnvVariable{}}
		env := driver.MCPEnv(s)
		for _, k := range slices.Sorted(maps.Keys(env)) {
			st.Env = append(st.Env, sdk.EnvVariable{Name: k, Value: value(env[k])})
		}
		out = append(out, sdk.McpServer{Stdio: st})
	}
	return out
}

// New returns the ACP protocol for a live session.
func New(h *live.Host, cfg Config) live.Proto {
	c := &client{h: h, cfg: cfg, calls: map[string]*toolCall{}}
	c.rpc = &live.RPC{Host: h, OnNotify: c.notify, OnRequest: c.request, OnInvalid: c.invalid}
	return c
}

type client struct {
	h   *live.Host
	rpc *live.RPC
	cfg Config

	mu      sync.Mutex
	session string
	first   bool // the next prompt is the session's first
	text    strings.Builder
	calls   map[string]*toolCall // tool calls of the running turn
	inText  bool                 // the last update was a message chunk
	atts    []sdk.ContentBlock   // the next prompt's attachments (PromptWith)
	// sw is the state of switching and steering (switch.go).
	sw switchState
}

// toolCall is what the session knows of one tool call.
type toolCall struct {
	use     agentcli.ToolUse
	title   string
	emitted bool // its EventToolUse was sent
	done    bool // its EventToolResult was sent
}

// Initialize sends ACP's initialize request on rpc as agentcli's client
// (which offers the agent no file system and no terminal) and returns the
// agent's answer. It blocks until the answer or ctx's end; a refusal is
// a *live.RPCError.
func Initialize(ctx context.Context, rpc *live.RPC) (json.RawMessage, error) {
	title := "agentcli"
	return rpc.Call(ctx, sdk.AgentMethodInitialize, sdk.InitializeRequest{
		ProtocolVersion:    sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{}, Terminal: false},
		ClientInfo:         &sdk.Implementation{Name: "agentcli", Title: &title, Version: "0"},
	})
}

func (c *client) backend() string { return c.h.Backend() }

// Start initializes and creates or loads the session.
func (c *client) Start(ctx context.Context) error {
	init, err := Initialize(ctx, c.rpc)
	if err != nil {
		return c.callError(sdk.AgentMethodInitialize, err)
	}
	if c.cfg.OnInitialize != nil {
		if err := c.cfg.OnInitialize(init); err != nil {
			return err
		}
	}
	sid, offered, modes, err := c.open(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.session = sid
	c.first = c.cfg.SessionID == "" || c.cfg.Empty
	c.mu.Unlock()
	c.h.SetSessionID(sid)
	if offered, err = c.startMode(ctx, sid, modes, offered); err != nil {
		return err
	}
	if offered, err = c.startOptions(ctx, sid, offered); err != nil {
		return err
	}
	c.mu.Lock()
	c.sw.offered = offered
	c.mu.Unlock()
	return nil
}

// open forks, loads or creates the session: its id, the config options it
// offers (id → values) and its availableModes.
func (c *client) open(ctx context.Context) (sid string, offered map[string][]string, modes []string, err error) {
	servers := c.cfg.MCPServers
	if servers == nil {
		servers = []sdk.McpServer{}
	}
	var method string
	var raw json.RawMessage
	switch {
	case c.cfg.SessionID != "" && c.cfg.Fork:
		method = methodSessionFork
		raw, err = c.rpc.Call(ctx, method, map[string]any{
			"sessionId": c.cfg.SessionID, "cwd": c.cfg.Dir, "mcpServers": servers,
		})
	case c.cfg.SessionID != "":
		method, sid = sdk.AgentMethodSessionLoad, c.cfg.SessionID
		raw, err = c.rpc.Call(ctx, method, sdk.LoadSessionRequest{
			SessionId: sdk.SessionId(c.cfg.SessionID), Cwd: c.cfg.Dir, McpServers: servers,
		})
	default:
		method = sdk.AgentMethodSessionNew
		raw, err = c.rpc.Call(ctx, method, sdk.NewSessionRequest{Cwd: c.cfg.Dir, McpServers: servers})
	}
	if err != nil {
		return "", nil, nil, c.callError(method, err)
	}
	if sid == "" { // fork and new answer with the session's id
		var res struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(raw, &res) != nil || res.SessionID == "" {
			return "", nil, nil, &agentcli.ProtocolError{Backend: c.backend(), Method: method, Message: "no session id in the answer"}
		}
		sid = res.SessionID
	}
	return sid, configOptions(raw, nil), modeIDs(raw), nil
}

// startMode sets the session's mode as configured (ModeOf, or Mode) and
// returns the config options offered after.
func (c *client) startMode(ctx context.Context, sid string, modes []string, offered map[string][]string) (map[string][]string, error) {
	mode := c.cfg.Mode
	if c.cfg.ModeOf != nil {
		var err error
		if mode, err = c.cfg.ModeOf(append(slices.Clone(modes), offered["mode"]...)); err != nil {
			return nil, err
		}
		if mode != "" && !slices.Contains(modes, mode) {
			raw, err := c.rpc.Call(ctx, sdk.AgentMethodSessionSetConfigOption, map[string]string{
				"sessionId": sid, "configId": "mode", "value": mode,
			})
			if err != nil {
				return nil, c.callError(sdk.AgentMethodSessionSetConfigOption+" mode", err)
			}
			return configOptions(raw, offered), nil
		}
	}
	if mode != "" {
		if _, err := c.rpc.Call(ctx, sdk.AgentMethodSessionSetMode, sdk.SetSessionModeRequest{
			SessionId: sdk.SessionId(sid), ModeId: sdk.SessionModeId(mode),
		}); err != nil {
			return nil, c.callError(sdk.AgentMethodSessionSetMode, err)
		}
	}
	return offered, nil
}

// startOptions sets the configured session options (those IfOffered only
// where the session offers the value) and returns the config options
// offered after.
func (c *client) startOptions(ctx context.Context, sid string, offered map[string][]string) (map[string][]string, error) {
	for _, o := range c.cfg.Options {
		if o.IfOffered && !slices.Contains(offered[o.ID], o.Value) {
			c.h.Logger().Warn(fmt.Sprintf("agentcli: %s does not offer %s %q for this session; not set", c.backend(), o.ID, o.Value),
				"backend", c.backend(), "option", o.ID, "value", o.Value, "offered", offered[o.ID])
			continue
		}
		raw, err := c.rpc.Call(ctx, sdk.AgentMethodSessionSetConfigOption, map[string]string{
			"sessionId": sid, "configId": o.ID, "value": o.Value,
		})
		if err != nil {
			return nil, c.callError(sdk.AgentMethodSessionSetConfigOption+" "+o.ID, err)
		}
		offered = configOptions(raw, offered)
	}
	return offered, nil
}

// methodSessionFork is ACP's (unstable) session/fork: {sessionId, cwd,
// mcpServers} → {sessionId, configOptions, modes} of a new session with the
// history of the one forked.
const methodSessionFork = "session/fork"

// modeIDs returns the ids of the modes an answer of session/new or
// session/load offers (modes.availableModes).
func modeIDs(raw json.RawMessage) []string {
	var r struct {
		Modes *struct {
			AvailableModes []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Modes == nil {
		return nil
	}
	var out []string
	for _, m := range r.Modes.AvailableModes {
		out = append(out, m.ID)
	}
	return out
}

// configOptions returns the values of each select config option an answer
// (of session/new, session/load or session/set_config_option) offers, or
// prev when the answer lists none.
func configOptions(raw json.RawMessage, prev map[string][]string) map[string][]string {
	var r struct {
		ConfigOptions []struct {
			ID      string          `json:"id"`
			Options json.RawMessage `json:"options"`
		} `json:"configOptions"`
	}
	if json.Unmarshal(raw, &r) != nil || r.ConfigOptions == nil {
		return prev
	}
	out := map[string][]string{}
	for _, o := range r.ConfigOptions {
		// A flat list of {value, name}, or groups of them.
		var vals []struct {
			Value   *string `json:"value"`
			Options []struct {
				Value string `json:"value"`
			} `json:"options"`
		}
		_ = json.Unmarshal(o.Options, &vals) // a boolean option has none
		list := []string{}
		for _, v := range vals {
			if v.Value != nil {
				list = append(list, *v.Value)
			}
			for _, g := range v.Options {
				list = append(list, g.Value)
			}
		}
		out[o.ID] = list
	}
	return out
}

// authRequired is ACP's error code for an agent that needs the client to
// authenticate first (auth_required).
const authRequired = -32000

// callError turns a JSON-RPC error answer into a *agentcli.ProtocolError;
// ACP's auth_required is agentcli.ErrAuth.
func (c *client) callError(method string, err error) error {
	var re *live.RPCError
	if !errors.As(err, &re) {
		return err
	}
	msg := re.Message
	if len(re.Data) > 0 && string(re.Data) != "null" {
		msg += ": " + string(re.Data)
	}
	var fallback error
	switch {
	case re.Code == authRequired:
		fallback = agentcli.ErrAuth
	case method == sdk.AgentMethodSessionLoad:
		// Neither agent says "not found" in a way ClassifyMessage knows
		// for every id; a failed load is a session that cannot be
		// resumed.
		fallback = agentcli.ErrSessionNotFound
	}
	return c.h.Errors().Protocol(method, re.Code, msg, fallback)
}

// Prompt sends session/prompt and ends the turn when it is answered.
func (c *client) Prompt(ctx context.Context, prompt string) error {
	c.mu.Lock()
	sid := c.session
	if c.first && c.cfg.FirstPrefix != "" {
		prompt = c.cfg.FirstPrefix + prompt
	}
	c.first = false
	c.inText = false
	c.sw.pending, c.sw.held = 1, nil
	c.text.Reset()
	clear(c.calls)
	atts := c.atts
	c.atts = nil
	c.mu.Unlock()
	if c.cfg.Guard != nil {
		prompt = c.cfg.Guard(prompt)
	}
	prompt = strings.ToValidUTF8(prompt, "\uFFFD")
	req := sdk.PromptRequest{SessionId: sdk.SessionId(sid), Prompt: append([]sdk.ContentBlock{sdk.TextBlock(prompt)}, atts...)}
	// The answer comes when the turn is over: the request is sent now
	// (an interrupt must follow it), the answer handled when its line
	// comes.
	return c.rpc.Go(ctx, sdk.AgentMethodSessionPrompt, req, c.answered)
}

// answered ends the turn with session/prompt's answer, on the reader
// goroutine.
func (c *client) answered(raw json.RawMessage, err error) {
	if c.heldBack(raw, err) {
		return // a steered prompt's answer is still due (switch.go)
	}
	c.mu.Lock()
	text := c.text.String()
	sid := c.session
	c.mu.Unlock()
	if err != nil {
		var re *live.RPCError
		if !errors.As(err, &re) {
			return // the CLI is gone; the session ends the turn with why
		}
		msg := re.Message
		if len(re.Data) > 0 && string(re.Data) != "null" {
			msg += ": " + string(re.Data)
		}
		o := driver.Outcome{Result: &agentcli.Result{SessionID: sid}, Failed: true, APIStatus: statusOf(msg), Message: msg}
		if o.APIStatus == 0 && re.Code == 429 {
			o.APIStatus = 429 // gemini answers a 429 with its HTTP status as the code
		}
		res, e := c.h.Errors().Outcome(o, driver.Exit{})
		c.h.EndTurn(live.TurnEnd{Result: res, Err: e})
		return
	}
	var pr struct {
		StopReason string `json:"stopReason"`
		Usage      *struct {
			InputTokens       int64  `json:"inputTokens"`
			OutputTokens      int64  `json:"outputTokens"`
			CachedReadTokens  *int64 `json:"cachedReadTokens"`
			CachedWriteTokens *int64 `json:"cachedWriteTokens"`
			ThoughtTokens     *int64 `json:"thoughtTokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(raw, &pr) // a field of an unexpected type is left zero
	res := &agentcli.Result{Text: text, SessionID: sid, StopReason: pr.StopReason, Raw: raw}
	if u, ok := c.usage(raw); ok {
		res.Usage = u
	} else if pr.Usage != nil {
		u := agentcli.Usage{OutputTokens: pr.Usage.OutputTokens}
		cached := int64(0)
		if pr.Usage.CachedReadTokens != nil {
			u.CacheReadTokens = *pr.Usage.CachedReadTokens
			cached += *pr.Usage.CachedReadTokens
		}
		if pr.Usage.CachedWriteTokens != nil {
			u.CacheWriteTokens = *pr.Usage.CachedWriteTokens
			cached += *pr.Usage.CachedWriteTokens
		}
		u.InputTokens = max(0, pr.Usage.InputTokens-cached)
		if pr.Usage.ThoughtTokens != nil {
			u.ReasoningTokens = *pr.Usage.ThoughtTokens
		}
		res.Usage = u
	}
	if !res.Usage.IsZero() {
		u := res.Usage
		c.h.Emit(agentcli.Event{Kind: agentcli.EventUsage, SessionID: sid, Usage: &u, Raw: raw})
	}
	switch sdk.StopReason(pr.StopReason) {
	case sdk.StopReasonCancelled:
		c.h.EndTurn(live.TurnEnd{Result: res, Interrupted: true})
	case sdk.StopReasonRefusal, sdk.StopReasonMaxTurnRequests:
		res.Subtype = pr.StopReason
		_, err := c.h.Errors().Outcome(driver.Outcome{Result: res, Failed: true, Subtype: pr.StopReason,
			Message: "the agent stopped: " + pr.StopReason}, driver.Exit{})
		c.h.EndTurn(live.TurnEnd{Result: res, Err: err})
	default:
		c.h.EndTurn(live.TurnEnd{Result: res})
	}
}

func (c *client) usage(raw json.RawMessage) (agentcli.Usage, bool) {
	if c.cfg.Usage == nil {
		return agentcli.Usage{}, false
	}
	return c.cfg.Usage(raw)
}

// Interrupt sends session/cancel. ACP has no answer to it: the answer to
// session/prompt (stopReason "cancelled") is the acknowledgment.
func (c *client) Interrupt(ctx context.Context) error {
	c.mu.Lock()
	sid := c.session
	c.mu.Unlock()
	return c.rpc.Notify(ctx, sdk.AgentMethodSessionCancel, sdk.CancelNotification{SessionId: sdk.SessionId(sid)})
}

// Exit leaves the error of an agent that ended by itself to the session
// (see live.Proto).
func (c *client) Exit(driver.Exit) error { return nil }

func (c *client) Line(line []byte) { c.rpc.Line(line) }

func (c *client) invalid(line []byte, err error) {
	c.h.Emit(driver.Notice(c.backend(), line, err))
}

// knownUpdates are the session/update kinds decoded with the SDK's types.
var knownUpdates = map[string]bool{
	"user_message_chunk": true, "agent_message_chunk": true, "agent_thought_chunk": true,
	"tool_call": true, "tool_call_update": true, "plan": true,
	"available_commands_update": true, "current_mode_update": true, "config_option_update": true,
	"session_info_update": true, "usage_update": true,
}

func (c *client) notify(method string, params json.RawMessage, line []byte) {
	if method != sdk.ClientMethodSessionUpdate {
		return
	}
	var n struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	if json.Unmarshal(params, &n) != nil {
		c.invalid(line, errors.New("session/update without an update"))
		return
	}
	var kind struct {
		SessionUpdate string `json:"sessionUpdate"`
	}
	_ = json.Unmarshal(n.Update, &kind)
	raw := json.RawMessage(line)
	base := agentcli.Event{SessionID: n.SessionID, Raw: raw}
	if !knownUpdates[kind.SessionUpdate] {
		ev := base
		ev.Kind = agentcli.EventUnknown
		c.h.Emit(ev)
		return
	}
	var u sdk.SessionUpdate
	if err := json.Unmarshal(n.Update, &u); err != nil {
		c.invalid(line, err)
		return
	}
	c.mu.Lock()
	inText := c.inText
	c.inText = u.AgentMessageChunk != nil
	c.mu.Unlock()
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil {
			c.agentText(base, t.Text, inText)
		}
	case u.AgentThoughtChunk != nil:
		if t := u.AgentThoughtChunk.Content.Text; t != nil {
			ev := base
			ev.Kind, ev.Text, ev.Delta = agentcli.EventThinking, t.Text, true
			c.h.Emit(ev)
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		c.toolUpdate(base, string(tc.ToolCallId), &tc.Title, string(tc.Kind), tc.RawInput, string(tc.Status), tc.Content, tc.RawOutput)
	case u.ToolCallUpdate != nil:
		tc := u.ToolCallUpdate
		kind, status := "", ""
		if tc.Kind != nil {
			kind = string(*tc.Kind)
		}
		if tc.Status != nil {
			status = string(*tc.Status)
		}
		c.toolUpdate(base, string(tc.ToolCallId), tc.Title, kind, tc.RawInput, status, tc.Content, tc.RawOutput)
	case u.Plan != nil:
		ev := base
		ev.Kind = agentcli.EventUnknown
		c.h.Emit(ev)
	case u.UsageUpdate != nil && u.UsageUpdate.Size > 0:
		ev := base
		ev.Kind = agentcli.EventContextUsage
		ev.ContextUsage = &agentcli.ContextUsage{UsedTokens: int64(max(0, u.UsageUpdate.Used)), WindowTokens: int64(u.UsageUpdate.Size)}
		c.h.Emit(ev)
	}
	// user_message_chunk (history replays), commands, modes, config
	// options and session info have no event.
}

// agentText emits a chunk of the agent's message, text: a text delta
// (kept for the turn's result), or a notice where it begins a message
// (inText false) that Config.Notice says is the agent's own.
func (c *client) agentText(base agentcli.Event, text string, inText bool) {
	ev := base
	if !inText && c.cfg.Notice != nil && c.cfg.Notice(text) {
		ev.Kind, ev.Text = agentcli.EventNotice, text
		c.h.Emit(ev)
		c.mu.Lock()
		c.inText = false // the model's text may follow at once
		c.mu.Unlock()
		return
	}
	c.mu.Lock()
	c.text.WriteString(text)
	c.mu.Unlock()
	ev.Kind, ev.Text = agentcli.EventTextDelta, text
	c.h.Emit(ev)
}

// toolUpdate folds a tool_call or tool_call_update into the call's state.
// The tool use is announced once the call runs or finishes (a pending call
// may not have its input yet), the result once it finishes.
func (c *client) toolUpdate(base agentcli.Event, id string, title *string, kind string, rawInput any, status string, content []sdk.ToolCallContent, rawOutput any) {
	c.mu.Lock()
	tc := c.calls[id]
	if tc == nil {
		tc = &toolCall{use: agentcli.ToolUse{ID: id}}
		c.calls[id] = tc
	}
	c.fold(tc, title, kind, rawInput)
	var evs []agentcli.Event
	if status != "" && status != string(sdk.ToolCallStatusPending) && !tc.emitted {
		tc.emitted = true
		ev := base
		use := tc.use
		ev.Kind, ev.Tool = agentcli.EventToolUse, &use
		evs = append(evs, ev)
	}
	if (status == string(sdk.ToolCallStatusCompleted) || status == string(sdk.ToolCallStatusFailed)) && !tc.done {
		tc.done = true
		ev := base
		ev.Kind = agentcli.EventToolResult
		ev.ToolResult = &agentcli.ToolResult{ID: id, Output: toolOutput(content, rawOutput), IsError: status == string(sdk.ToolCallStatusFailed)}
		evs = append(evs, ev)
	}
	c.mu.Unlock()
	for _, ev := range evs {
		c.h.Emit(ev)
	}
}

// fold updates a call's tool use with what an update says. c.mu is held.
func (c *client) fold(tc *toolCall, title *string, kind string, rawInput any) {
	if title != nil && *title != "" {
		if tc.title == "" && c.cfg.RawName != nil && tc.use.RawName == "" {
			tc.use.RawName = c.cfg.RawName(tc.use.ID, *title)
		}
		tc.title = *title
	}
	if tc.use.RawName == "" && c.cfg.RawName != nil {
		tc.use.RawName = c.cfg.RawName(tc.use.ID, "")
	}
	if rawInput != nil {
		if b, err := json.Marshal(rawInput); err == nil && len(b) > 2 {
			tc.use.Input = b
		}
	}
	tc.use.Name, tc.use.Kind = canonical(c.cfg.Tools, tc.use.RawName, kind, tc.use.Name, tc.use.Kind)
	if c.cfg.KindNames && tc.use.RawName == "" {
		if n, ok := kindNames[tc.use.Kind]; ok {
			tc.use.Name = n
		}
	}
	if len(tc.use.Input) == 0 {
		tc.use.Input = json.RawMessage("{}")
	}
}

// kindNames are the canonical tools of ACP's kinds (see Config.KindNames).
var kindNames = map[agentcli.ToolKind]string{
	agentcli.ToolExecute: agentcli.ToolNameBash, agentcli.ToolRead: agentcli.ToolNameRead,
	agentcli.ToolEdit: agentcli.ToolNameEdit, agentcli.ToolDelete: agentcli.ToolNameDelete,
	agentcli.ToolSearch: agentcli.ToolNameGrep, agentcli.ToolFetch: agentcli.ToolNameWebFetch,
}

// canonical names a tool from its raw name, else from its ACP kind.
func canonical(tools driver.Tools, raw, kind, name string, k agentcli.ToolKind) (string, agentcli.ToolKind) {
	if raw != "" {
		if n, kk := tools.Canonical(raw); kk != agentcli.ToolOther || n != raw {
			return n, kk
		}
	}
	if kind == "" {
		if name == "" {
			return raw, agentcli.ToolOther
		}
		return name, k
	}
	kk := agentcli.ToolKind(kind)
	switch kk {
	case agentcli.ToolExecute:
		return agentcli.ToolNameBash, kk
	case agentcli.ToolRead, agentcli.ToolEdit, agentcli.ToolDelete, agentcli.ToolMove, agentcli.ToolSearch,
		agentcli.ToolThink, agentcli.ToolFetch:
	default:
		kk = agentcli.ToolOther
	}
	if raw != "" {
		return raw, kk
	}
	return string(kk), kk
}

// toolOutput is a tool call's text content, or its raw output.
func toolOutput(content []sdk.ToolCallContent, rawOutput any) string {
	var parts []string
	for _, tc := range content {
		if tc.Content != nil && tc.Content.Content.Text != nil {
			parts = append(parts, tc.Content.Content.Text.Text)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "\n")
	}
	if rawOutput != nil {
		if m, ok := rawOutput.(map[string]any); ok {
			if s, ok := m["output"].(string); ok {
				return s
			}
		}
		if b, err := json.Marshal(rawOutput); err == nil {
			return string(b)
		}
	}
	return ""
}

// request answers the agent's requests: session/request_permission goes to
// the session's permission handling; anything else is refused (the session
// offered no file system or terminal).
func (c *client) request(id json.RawMessage, method string, params json.RawMessage, line []byte) {
	if method != sdk.ClientMethodSessionRequestPermission {
		c.rpc.ReplyError(id, -32601, "agentcli does not support "+method)
		return
	}
	var r sdk.RequestPermissionRequest
	if err := json.Unmarshal(params, &r); err != nil {
		c.rpc.ReplyError(id, -32602, "invalid params: "+err.Error())
		return
	}
	tcID := string(r.ToolCall.ToolCallId)
	kind := ""
	if r.ToolCall.Kind != nil {
		kind = string(*r.ToolCall.Kind)
	}
	c.mu.Lock()
	tc := c.calls[tcID]
	if tc == nil {
		tc = &toolCall{use: agentcli.ToolUse{ID: tcID}}
		c.calls[tcID] = tc
	}
	c.fold(tc, r.ToolCall.Title, kind, r.ToolCall.RawInput)
	use := tc.use
	title := tc.title
	announce := !tc.emitted
	tc.emitted = true
	sid := c.session
	c.mu.Unlock()
	if announce {
		u := use
		c.h.Emit(agentcli.Event{Kind: agentcli.EventToolUse, SessionID: string(r.SessionId), Tool: &u, Raw: json.RawMessage(line)})
	}
	pr := &agentcli.PermissionRequest{SessionID: firstNonEmpty(string(r.SessionId), sid), Tool: use, Title: title}
	for _, o := range r.Options {
		pr.Options = append(pr.Options, agentcli.PermissionOption{ID: string(o.OptionId), Kind: agentcli.PermissionOptionKind(o.Kind), Name: o.Name})
	}
	c.h.Ask(pr, func(d agentcli.PermissionDecision) {
		var out sdk.RequestPermissionOutcome
		if c.h.Aborted() {
			// ACP: a cancelled turn answers its pending requests
			// "cancelled".
			out.Cancelled = &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}
		} else if o, ok := driver.OptionOf(pr.Options, d.Kind); ok {
			out.Selected = &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(o.ID), Outcome: "selected"}
		} else {
			out.Cancelled = &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}
		}
		c.rpc.Reply(id, sdk.RequestPermissionResponse{Outcome: out})
	})
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// statusOf finds an HTTP status in an agent's error message ("status
// 429", "[429 Too Many Requests]", "statusCode":400), or returns 0.
func statusOf(msg string) int {
	for _, key := range []string{"statusCode\":", "status\":", "status ", "status: ", "code\":", "["} {
		i := strings.Index(msg, key)
		for i >= 0 {
			rest := strings.TrimLeft(msg[i+len(key):], " ")
			n := 0
			j := 0
			for j < len(rest) && j < 3 && rest[j] >= '0' && rest[j] <= '9' {
				n = n*10 + int(rest[j]-'0')
				j++
			}
			if j == 3 && (j == len(rest) || rest[j] < '0' || rest[j] > '9') && n >= 400 && n < 600 {
				return n
			}
			k := strings.Index(msg[i+len(key):], key)
			if k < 0 {
				break
			}
			i += len(key) + k
		}
	}
	return 0
}
