package codex

// Live sessions: `codex app-server`, JSON-RPC over stdio (without the
// "jsonrpc" member), checked against 0.169.0 and its
// `codex app-server generate-json-schema` output.
//
// Argv: codex app-server [ExtraArgs...]. Everything else travels in the
// protocol: initialize ({clientInfo}), the initialized notification, then
// thread/start ({cwd, approvalPolicy, sandbox, model,
// developerInstructions, config}) or thread/resume ({threadId, ...the
// same}); the thread id is the session id. Each prompt is turn/start
// ({threadId, input:[{type:"text",text}], effort, outputSchema}), whose
// answer carries the turn id; turn/interrupt ({threadId, turnId})
// interrupts it; the notification turn/completed ends it, with status
// completed, interrupted or failed.
//
// Settings: Request.MCPServers are thread/start's (and thread/resume's)
// config overrides, one "mcp_servers.NAME" table each (liveConfig), so
// that Env and Headers travel on stdin, never in argv or a file.
// Request.Effort and Request.OutputSchema go with every turn/start
// (turnParams): reasoning.effort, and a strict json_schema text format
// whose answer, the turn's final agent message, is
// Result.StructuredOutput (a turn whose answer is not JSON fails with a
// *agentcli.ResultError, the session goes on).
//
// Permission modes map to approvalPolicy and sandbox:
//
//	bypass  never     + danger-full-access  (what `codex exec --dangerously-bypass-approvals-and-sandbox` does)
//	ask     untrusted + danger-full-access  (every command codex does not consider safe is asked for)
//	deny    untrusted + danger-full-access  (and every request is declined by the session)
//	plan    never     + read-only           (codex's read-only sandbox: commands run, writes fail)
//
// codex asks for approval only under "untrusted" (or a granular policy):
// with "on-request" and a sandbox, commands run in the sandbox without
// asking. Requests are item/commandExecution/requestApproval and
// item/fileChange/requestApproval (options accept → allow_once,
// acceptForSession → allow_always, decline → reject_once; the answer is
// {"decision":...}; "decline" lets the turn go on, the model is told the
// command was rejected) and item/permissions/requestApproval (extra
// sandbox permissions). codex cannot run a command other than the one it
// asked about, so edited input is refused, and it passes no message from
// the host to the model. The read-only sandbox needs bubblewrap (codex
// ships one); where the kernel does not let it build a sandbox, every
// command fails in plan mode.
//
// Events: item/agentMessage/delta is EventTextDelta and a completed
// agentMessage EventText; reasoning deltas and blocks EventThinking;
// commandExecution, fileChange, mcpToolCall and webSearch items become
// EventToolUse when they start and EventToolResult when they complete;
// thread/tokenUsage/updated gives EventUsage and the turn's usage (the
// difference of the thread's totals; for the first turn of a resumed
// thread the total, marked Cumulative); warnings are EventNotice, error
// notifications EventNotice or EventRetry; other notifications are
// dropped.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// liveArgs returns the arguments of a live session. It is pure.
func liveArgs(req *agentcli.Request) []string {
	return append([]string{"app-server"}, req.ExtraArgs...)
}

// liveConfig returns the config overrides of thread/start and
// thread/resume for req, or nil for none: one "mcp_servers.NAME" key per
// MCP server, whose value is the server's table, {command, args, env} or
// {url, http_headers} (the keys of codex's [mcp_servers.NAME] table in
// config.toml). codex applies each key as a -c override would
// (added to the servers of the user's config.toml), turning the JSON
// values into TOML as they are: nothing is expanded. It is pure.
func liveConfig(req *agentcli.Request) map[string]any { return liveConfigHost(req, nil) }

// mcpStartupTimeout is how long, in seconds, codex waits for each of the
// request's MCP servers to start and list its tools before the first turn
// (startup_timeout_sec; codex's own default is 10). codex 0.169.0 waits
// only for a server marked required: without it the first model request
// goes out while a server that takes a second or two to start (an npx
// package, say) is still starting, and the model is not offered its
// tools. A required server that fails to start, or to start in time,
// fails the run (thread/start, or exec, reports "required MCP servers
// failed to initialize"), where an unmarked one would be left out
// without a word.
const mcpStartupTimeout = 60

// liveConfigHost is liveConfig with agentcli's own server (host, nil for
// none). Every server's table says that codex must wait for it before the
// first turn starts (required, startup_timeout_sec: see
// mcpStartupTimeout); agentcli's own also says that its tools run without
// asking (approval_mode "approve": agentcli decides each call itself; see
// driver.HostTools) and how long codex waits for one call
// (tool_timeout_sec, driver.HostToolTimeout in whole seconds; codex
// 0.169.0's own default is 300 s, which would cut off a host tool that
// runs a long build: the call ends when its handler returns or the run
// ends). With the request's OnQuestion, codex's
// own question tool is enabled outside plan mode
// (features.default_mode_request_user_input, an experimental feature whose
// warning is silenced).
func liveConfigHost(req *agentcli.Request, host *driver.HostTools) map[string]any {
	var cfg map[string]any
	if req.OnQuestion != nil {
		cfg = map[string]any{"features.default_mode_request_user_input": true, "suppress_unstable_features_warning": true}
	}
	if len(req.MCPServers) == 0 {
		return cfg
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	for _, s := range req.MCPServers {
		sv := map[string]any{"required": true, "startup_timeout_sec": mcpStartupTimeout}
		if host.IsServer(s.Name) {
			approve := map[string]any{}
			for _, n := range host.Names() {
				approve[n] = map[string]string{"approval_mode": "approve"}
			}
			sv["tools"] = approve
			sv["tool_timeout_sec"] = int64(driver.HostToolTimeout / time.Second)
		}
		if s.URL != "" {
			sv["url"] = s.URL
			if len(s.Headers) > 0 {
				sv["http_headers"] = s.Headers
			}
		} else {
			sv["command"] = s.Command
			if len(s.Args) > 0 {
				sv["args"] = s.Args
			}
			if env := driver.MCPEnv(s); len(env) > 0 {
				sv["env"] = env
			}
		}
		cfg["mcp_servers."+s.Name] = sv
	}
	return cfg
}

// turnParams returns the params of turn/start: the prompt, and on every
// turn the session's effort (the Responses request's reasoning.effort)
// and output schema (a strict json_schema text format; the turn's final
// agent message is then the JSON value). It is pure.
func turnParams(req *agentcli.Request, thread, prompt string) map[string]any {
	params := map[string]any{
		"threadId": thread,
		"input":    []map[string]any{{"type": "text", "text": strings.ToValidUTF8(prompt, "\uFFFD")}},
	}
	if req.Effort != "" {
		params["effort"] = string(req.Effort)
	}
	if len(req.OutputSchema) > 0 {
		params["outputSchema"] = req.OutputSchema
	}
	return params
}

// approval returns codex's approvalPolicy and sandbox for a permission mode.
func approval(req *agentcli.Request) (policy, sandbox string) {
	if driver.AsksAll(req) {
		// PreToolUse sees what codex asks about (see hooks.go).
		if driver.Mode(req) == agentcli.PermissionPlan {
			return "untrusted", "read-only"
		}
		return "untrusted", "danger-full-access"
	}
	switch driver.Mode(req) {
	case agentcli.PermissionAsk, agentcli.PermissionDeny:
		return "untrusted", "danger-full-access"
	case agentcli.PermissionPlan:
		return "never", "read-only"
	}
	if len(req.AllowedTools) > 0 || len(req.DisallowedTools) > 0 {
		// codex asks, and the session answers from the lists (a listed
		// tool is allowed, any other refused; live.Host.Ask).
		return "untrusted", "danger-full-access"
	}
	return "never", "danger-full-access"
}

// startSession starts a codex live session for the prepared run r.
func startSession(ctx context.Context, r *driver.Run) (agentcli.Session, error) {
	host := r.HostTools()
	req := restrictHost(r.Req, host != nil)
	args := liveArgs(req)
	cfg := live.RunConfig(r, Name, req, args, nil, nil)
	cfg.Proto = newAppServerHost(req, r.Dir, host)
	s, err := live.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// replaySession replays a live session's wire log: the protocol needs
// the request's model and session id, which the log's start record holds.
func replaySession(r *driver.Run, _ json.RawMessage, log *wirelog.Reader) iter.Seq2[agentcli.Event, error] {
	return live.Replay(live.ReplayConfig(r, Name, newAppServer(r.Req, "")), log)
}

// newAppServer returns the maker of a session's protocol.
func newAppServer(req *agentcli.Request, dir string) func(h *live.Host) live.Proto {
	return newAppServerHost(req, dir, nil)
}

// newAppServerHost is newAppServer for a session with host tools.
func newAppServerHost(req *agentcli.Request, dir string, host *driver.HostTools) func(h *live.Host) live.Proto {
	return func(h *live.Host) live.Proto {
		p := &appServer{h: h, req: req, dir: dir, host: host, items: map[string]*agentcli.ToolUse{}, qsem: make(chan struct{}, 1)}
		p.rpc = &live.RPC{Host: h, Bare: true, OnNotify: p.notify, OnRequest: p.request, OnInvalid: p.invalid}
		return p
	}
}

// appServer is codex's app-server protocol.
type appServer struct {
	h    *live.Host
	rpc  *live.RPC
	req  *agentcli.Request
	dir  string
	host *driver.HostTools // the session's host tools, or nil
	qsem chan struct{}     // held while Request.OnQuestion runs

	mu     sync.Mutex
	thread string
	model  string
	// The running prompt: gen counts prompts; running is set from
	// Prompt until the turn completes; answered once turn/start is
	// answered, with the turn's id (turn, "" when the answer had none);
	// idKnown is closed then. early holds the turn/completed
	// notifications that arrived before the answer (an earlier turn's,
	// or this one's), past the ids of earlier turns: a turn ends on its
	// own completion only.
	gen      int
	running  bool
	answered bool
	turn     string
	idKnown  chan struct{}
	early    []earlyCompletion
	past     map[string]bool
	pastIDs  []string
	lastText string
	lastErr  string
	items    map[string]*agentcli.ToolUse // tool items that started
	atts     []agentcli.Attachment        // the next prompt's attachments (PromptWith)
	// total is the thread's last reported token total; known reports
	// whether it covers everything (false for a resumed thread until its
	// first report).
	total, turnStart *wireTokenUsage
	known            bool
	// rateLimit is the account's rate limit state as last reported
	// (account/rateLimits/updated), or nil.
	rateLimit *agentcli.RateLimit
	// sw holds the sticky per-turn overrides of SetModel and
	// SetPermission (switch.go).
	sw overrides
}

type wireTokenUsage struct {
	TotalTokens           int64 `json:"totalTokens"`
	CachedInputTokens     int64 `json:"cachedInputTokens"`
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"`
	InputTokens           int64 `json:"inputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	ReasoningOutputTokens int64 `json:"reasoningOutputTokens"`
}

func (u *wireTokenUsage) sub(v *wireTokenUsage) *wireTokenUsage {
	if v == nil {
		return u
	}
	return &wireTokenUsage{
		CachedInputTokens:     u.CachedInputTokens - v.CachedInputTokens,
		CacheWriteInputTokens: u.CacheWriteInputTokens - v.CacheWriteInputTokens,
		InputTokens:           u.InputTokens - v.InputTokens,
		OutputTokens:          u.OutputTokens - v.OutputTokens,
		ReasoningOutputTokens: u.ReasoningOutputTokens - v.ReasoningOutputTokens,
	}
}

// usage converts codex usage: its inputTokens include the cached and
// cache-write tokens, which agentcli counts apart.
func (u *wireTokenUsage) usage(cumulative bool) agentcli.Usage {
	return agentcli.Usage{
		InputTokens:      max(0, u.InputTokens-u.CachedInputTokens-u.CacheWriteInputTokens),
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CachedInputTokens,
		CacheWriteTokens: u.CacheWriteInputTokens,
		ReasoningTokens:  u.ReasoningOutputTokens,
		Cumulative:       cumulative,
	}
}

// Start runs initialize, initialized and thread/start or thread/resume.
func (p *appServer) Start(ctx context.Context) error {
	if _, err := p.rpc.Call(ctx, "initialize", map[string]any{
		"clientInfo": map[string]string{"name": "agentcli", "title": "agentcli", "version": "0"},
	}); err != nil {
		return p.callError("initialize", err)
	}
	if err := p.rpc.Notify(ctx, "initialized", nil); err != nil {
		return err
	}
	policy, sandbox := approval(p.req)
	params := map[string]any{"approvalPolicy": policy, "sandbox": sandbox}
	if p.dir != "" {
		params["cwd"] = p.dir
	}
	if p.req.Model != "" {
		params["model"] = p.req.Model
	}
	if p.req.SystemPrompt != "" {
		params["developerInstructions"] = strings.ToValidUTF8(p.req.SystemPrompt, "\uFFFD")
	}
	cfg := liveConfigHost(p.req, p.host)
	if pol, _ := policyForHost(p.req, p.host != nil); len(pol.overrides) > 0 || len(pol.servers) > 0 {
		if cfg == nil {
			cfg = map[string]any{}
		}
		maps.Copy(cfg, pol.config())
	}
	if len(cfg) > 0 {
		params["config"] = cfg
	}
	method := "thread/start"
	if p.req.SessionID != "" {
		method = "thread/resume"
		if p.req.ForkSession {
			method = "thread/fork" // a new thread with the history
		}
		params["threadId"] = p.req.SessionID
	}
	raw, err := p.rpc.Call(ctx, method, params)
	if err != nil {
		return p.callError(method, err)
	}
	var res struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
		Model string `json:"model"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Thread.ID == "" {
		return &agentcli.ProtocolError{Backend: Name, Method: method, Message: "no thread id in the answer"}
	}
	p.mu.Lock()
	p.thread = res.Thread.ID
	p.model = res.Model
	p.known = p.req.SessionID == ""
	p.mu.Unlock()
	p.h.SetSessionID(res.Thread.ID)
	return nil
}

// callError turns a JSON-RPC error answer into a *agentcli.ProtocolError.
func (p *appServer) callError(method string, err error) error {
	var re *live.RPCError
	if !errors.As(err, &re) {
		return err
	}
	var fallback error
	if (method == "thread/resume" || method == "thread/fork") && strings.Contains(re.Message, "invalid session id") {
		// codex reads the id as a UUID only: anything else names no thread.
		fallback = agentcli.ErrSessionNotFound
	}
	return p.h.Errors().Protocol(method, re.Code, re.Message, fallback)
}

// Prompt starts a turn: it sends turn/start and returns; the answer (the
// turn's id, or codex's refusal, which ends the turn) is handled when it
// comes, so that a turn whose turn/start is never answered still ends with
// its context (interrupted, and killed if need be, by the session).
func (p *appServer) Prompt(ctx context.Context, prompt string) error {
	p.mu.Lock()
	thread := p.thread
	p.gen++
	gen := p.gen
	p.running, p.answered, p.turn, p.early = true, false, "", nil
	p.idKnown = make(chan struct{})
	p.lastText, p.lastErr = "", ""
	p.turnStart = p.total
	clear(p.items)
	params := turnParams(p.req, thread, prompt)
	if p.atts != nil {
		params["input"], p.atts = turnInput(prompt, p.atts), nil
	}
	p.mu.Unlock()
	// withOverrides takes p.mu itself.
	return p.rpc.Go(ctx, "turn/start", p.withOverrides(params), func(raw json.RawMessage, err error) {
		p.startAnswered(gen, raw, err)
	})
}

// earlyCompletion is a turn/completed that came before turn/start's
// answer.
type earlyCompletion struct {
	n   wireNotify
	raw json.RawMessage
}

// maxEarly and maxPast bound what the session keeps of completions that
// arrive before their turn's id is known, and of earlier turns' ids.
const (
	maxEarly = 16
	maxPast  = 64
)

// startAnswered handles the answer to prompt gen's turn/start, on the
// reader goroutine (before the lines after it).
func (p *appServer) startAnswered(gen int, raw json.RawMessage, err error) {
	var res struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	if err == nil {
		json.Unmarshal(raw, &res) //nolint:errcheck // without an id, the first completion not of an earlier turn is this turn's
	}
	p.mu.Lock()
	if gen != p.gen || p.answered {
		p.mu.Unlock()
		return
	}
	if err != nil {
		// codex refused the turn; the session goes on.
		p.answered, p.running = true, false
		close(p.idKnown)
		p.mu.Unlock()
		p.h.EndTurn(live.TurnEnd{Err: p.callError("turn/start", err)})
		return
	}
	p.answered = true
	p.turn = res.Turn.ID
	close(p.idKnown)
	early := p.early
	p.early = nil
	p.mu.Unlock()
	for _, e := range early {
		if p.completed(e.n, e.raw) {
			return
		}
	}
}

// remember adds a finished turn's id to the past ones. p.mu is held.
func (p *appServer) remember(id string) {
	if id == "" || p.past[id] {
		return
	}
	if p.past == nil {
		p.past = map[string]bool{}
	}
	p.past[id] = true
	p.pastIDs = append(p.pastIDs, id)
	if len(p.pastIDs) > maxPast {
		delete(p.past, p.pastIDs[0])
		p.pastIDs = p.pastIDs[1:]
	}
}

// stale reports a notification of another turn than the running one (an
// earlier turn's, or one that is not this session's). p.mu is held.
func (p *appServer) stale(turnID string) bool {
	return turnID != "" && (p.past[turnID] || p.answered && p.turn != "" && turnID != p.turn)
}

// Interrupt sends turn/interrupt for the running turn, once its id is
// known (turn/start answered), or gives up when ctx ends.
func (p *appServer) Interrupt(ctx context.Context) error {
	p.mu.Lock()
	known := p.idKnown
	p.mu.Unlock()
	if known == nil {
		return errors.New("codex: no turn to interrupt")
	}
	if err := p.await(ctx, known); err != nil {
		return err
	}
	p.mu.Lock()
	thread, turn := p.thread, p.turn
	p.mu.Unlock()
	if turn == "" {
		return errors.New("codex: no turn id to interrupt")
	}
	_, err := p.rpc.Call(ctx, "turn/interrupt", map[string]any{"threadId": thread, "turnId": turn})
	return p.callError("turn/interrupt", err)
}

// await waits until known is closed (the running turn's id is known),
// ctx ends or the session dies.
func (p *appServer) await(ctx context.Context, known <-chan struct{}) error {
	select {
	case <-known:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.h.Done():
		return p.h.Err()
	}
}

// Exit leaves the error of a CLI that ended by itself to the session
// (see live.Proto).
func (p *appServer) Exit(driver.Exit) error { return nil }

func (p *appServer) Line(line []byte) { p.rpc.Line(line) }

func (p *appServer) invalid(line []byte, err error) {
	p.h.Emit(driver.Notice(Name, line, err))
}

// notification params the session reads.
type wireNotify struct {
	ThreadID string          `json:"threadId"`
	TurnID   string          `json:"turnId"`
	ItemID   string          `json:"itemId"`
	Delta    string          `json:"delta"`
	Item     json.RawMessage `json:"item"`
	Message  string          `json:"message"`
	Summary  string          `json:"summary"`
	Turn     *struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Error  *struct {
			Message        string          `json:"message"`
			CodexErrorInfo json.RawMessage `json:"codexErrorInfo"`
		} `json:"error"`
	} `json:"turn"`
	Error *struct {
		Message        string          `json:"message"`
		CodexErrorInfo json.RawMessage `json:"codexErrorInfo"`
	} `json:"error"`
	WillRetry  bool `json:"willRetry"`
	TokenUsage *struct {
		Total              *wireTokenUsage `json:"total"`
		Last               *wireTokenUsage `json:"last"`
		ModelContextWindow int64           `json:"modelContextWindow"`
	} `json:"tokenUsage"`
	RateLimits *wireRateLimits `json:"rateLimits"`
}

// appItem is a v2 ThreadItem, as far as the session reads it.
type appItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Text             string          `json:"text"`
	Summary          []string        `json:"summary"`
	Command          string          `json:"command"`
	Cwd              string          `json:"cwd"`
	AggregatedOutput *string         `json:"aggregatedOutput"`
	ExitCode         *int            `json:"exitCode"`
	Status           string          `json:"status"`
	Changes          []appChange     `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           json.RawMessage `json:"result"`
	Error            *struct {
		Message string `json:"message"`
	} `json:"error"`
	Query string `json:"query"`
}

type appChange struct {
	Path string `json:"path"`
	Kind struct {
		Type string `json:"type"`
	} `json:"kind"`
}

func (p *appServer) notify(method string, params json.RawMessage, line []byte) {
	var n wireNotify
	if len(params) > 0 {
		_ = json.Unmarshal(params, &n) // fields of an unexpected type are left zero
	}
	raw := json.RawMessage(line)
	if method == "turn/completed" {
		p.completed(n, raw)
		return
	}
	p.mu.Lock()
	stale := p.stale(n.TurnID)
	p.mu.Unlock()
	if stale {
		return // an earlier turn's late output
	}
	base := agentcli.Event{SessionID: n.ThreadID, Raw: raw}
	switch method {
	case "item/agentMessage/delta":
		ev := base
		ev.Kind, ev.Text = agentcli.EventTextDelta, n.Delta
		p.h.Emit(ev)
	case "item/reasoning/summaryTextDelta", "item/reasoning/textDelta":
		ev := base
		ev.Kind, ev.Text, ev.Delta = agentcli.EventThinking, n.Delta, true
		p.h.Emit(ev)
	case "item/started", "item/completed":
		p.item(method == "item/completed", n.Item, base)
	case "thread/tokenUsage/updated":
		if n.TokenUsage == nil || n.TokenUsage.Total == nil {
			return
		}
		p.mu.Lock()
		p.total = n.TokenUsage.Total
		u := p.total.sub(p.turnStart).usage(!p.known)
		p.mu.Unlock()
		ev := base
		ev.Kind, ev.Usage = agentcli.EventUsage, &u
		p.h.Emit(ev)
		p.contextUsage(n, base)
	case "account/rateLimits/updated":
		p.rateLimits(n.RateLimits, base)
	case "error":
		msg := ""
		if n.Error != nil {
			msg = n.Error.Message
		}
		ev := base
		if n.WillRetry {
			ev.Kind = agentcli.EventRetry
			ev.Retry = &agentcli.Retry{Message: msg, Status: apiStatusOf(msg)}
		} else {
			p.mu.Lock()
			p.lastErr = msg
			p.mu.Unlock()
			ev.Kind, ev.Text = agentcli.EventNotice, msg
		}
		p.h.Emit(ev)
	case "warning", "configWarning", "deprecationNotice", "guardianWarning":
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, firstNonEmpty(n.Message, n.Summary)
		p.h.Emit(ev)
	case "model/rerouted":
		ev := base
		ev.Kind = agentcli.EventNotice
		ev.Text = "codex: model rerouted"
		p.h.Emit(ev)
	}
}

// item normalizes one item notification.
func (p *appServer) item(done bool, raw json.RawMessage, base agentcli.Event) {
	var it appItem
	if len(raw) == 0 || decode(raw, &it) != nil {
		return
	}
	switch it.Type {
	case "userMessage", "hookPrompt":
		return
	case "contextCompaction":
		if done {
			ev := base
			ev.Kind, ev.Compaction = agentcli.EventCompaction, &agentcli.Compaction{}
			p.h.Emit(ev)
		}
		return
	case "agentMessage":
		if done {
			p.mu.Lock()
			p.lastText = it.Text
			p.mu.Unlock()
			ev := base
			ev.Kind, ev.Text = agentcli.EventText, it.Text
			p.h.Emit(ev)
		}
		return
	case "reasoning":
		if done && len(it.Summary) > 0 {
			ev := base
			ev.Kind, ev.Text = agentcli.EventThinking, strings.Join(it.Summary, "\n")
			p.h.Emit(ev)
		}
		return
	}
	use, res := toolItem(it)
	if use == nil {
		if done {
			ev := base
			ev.Kind = agentcli.EventUnknown
			p.h.Emit(ev)
		}
		return
	}
	p.mu.Lock()
	_, started := p.items[it.ID]
	if !started {
		p.items[it.ID] = use
	}
	p.mu.Unlock()
	if !started {
		ev := base
		ev.Kind, ev.Tool = agentcli.EventToolUse, use
		p.h.Emit(ev)
	}
	if done {
		ev := base
		ev.Kind, ev.ToolResult = agentcli.EventToolResult, res
		p.h.Emit(ev)
	}
}

// toolItem returns the tool use and result of a tool item, or nil.
func toolItem(it appItem) (*agentcli.ToolUse, *agentcli.ToolResult) {
	failed := it.Status == "failed" || it.Status == "declined"
	res := &agentcli.ToolResult{ID: it.ID, IsError: failed}
	mk := func(name, raw string, input any) *agentcli.ToolUse {
		return &agentcli.ToolUse{ID: it.ID, Name: name, RawName: raw, Kind: driver.KindOf(name), Input: marshal(input)}
	}
	switch it.Type {
	case "commandExecution":
		if it.AggregatedOutput != nil {
			res.Output = *it.AggregatedOutput
		}
		res.ExitCode = it.ExitCode
		res.IsError = failed || (it.ExitCode != nil && *it.ExitCode != 0)
		return mk(agentcli.ToolNameBash, it.Type, map[string]string{"command": it.Command}), res
	case "fileChange":
		cs := make([]wireChange, 0, len(it.Changes))
		var out []string
		for _, c := range it.Changes {
			cs = append(cs, wireChange{Path: c.Path, Kind: c.Kind.Type})
			out = append(out, c.Kind.Type+" "+c.Path)
		}
		input := map[string]any{"changes": cs}
		if len(cs) == 1 {
			input["file_path"] = cs[0].Path
		}
		res.Output = strings.Join(out, "\n")
		return mk(fileChangeTool(cs), it.Type, input), res
	case "mcpToolCall":
		rawName := "mcp__" + it.Server + "__" + it.Tool
		name, kind := tools.Canonical(rawName)
		args := it.Arguments
		if len(args) == 0 || !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		switch {
		case it.Error != nil:
			res.Output, res.IsError = it.Error.Message, true
		case len(it.Result) > 0 && string(it.Result) != "null":
			var r wireMCPResult
			if json.Unmarshal(it.Result, &r) == nil {
				res.Output = mcpText(&r)
			}
		}
		return &agentcli.ToolUse{ID: it.ID, Name: name, RawName: rawName, Kind: kind, Input: args}, res
	case "webSearch":
		return mk(agentcli.ToolNameWebSearch, it.Type, map[string]string{"query": it.Query}), res
	}
	return nil, nil
}

// completed ends the running turn when n is its completion, and reports
// whether it did. A completion of an earlier turn is dropped; one that
// comes before turn/start is answered waits for the answer.
func (p *appServer) completed(n wireNotify, raw json.RawMessage) bool {
	if n.Turn == nil {
		return false
	}
	p.mu.Lock()
	id := n.Turn.ID
	switch {
	case !p.running || p.stale(id):
		p.mu.Unlock()
		return false // between turns, or another turn's
	case !p.answered:
		if len(p.early) < maxEarly {
			p.early = append(p.early, earlyCompletion{n: n, raw: raw})
		}
		p.mu.Unlock()
		return false
	}
	p.running = false
	p.remember(id)
	p.remember(p.turn)
	res := &agentcli.Result{
		Text:      p.lastText,
		SessionID: p.thread,
		Model:     firstNonEmpty(p.sw.model, p.req.Model, p.model),
		Raw:       raw,
	}
	if p.total != nil {
		res.Usage = p.total.sub(p.turnStart).usage(!p.known)
		p.known = true
	}
	lastErr := p.lastErr
	limit := p.rateLimit
	p.mu.Unlock()
	switch n.Turn.Status {
	case "completed":
		p.h.EndTurn(live.TurnEnd{Result: res})
	case "interrupted":
		p.h.EndTurn(live.TurnEnd{Result: res, Interrupted: true})
	default:
		msg := lastErr
		if n.Turn.Error != nil && n.Turn.Error.Message != "" {
			msg = n.Turn.Error.Message
		}
		res.Text = ""
		o := driver.Outcome{Result: res, Failed: true, Subtype: n.Turn.Status,
			APIStatus: apiStatusOf(msg), Message: firstNonEmpty(msg, "turn "+n.Turn.Status)}
		if n.Turn.Error != nil {
			usageLimit(&o, n.Turn.Error.CodexErrorInfo, limit)
		}
		_, err := p.h.Errors().Outcome(o, driver.Exit{})
		p.h.EndTurn(live.TurnEnd{Result: res, Err: err})
	}
	return true
}

// request answers codex's requests: approvals go to the session's
// permission handling; anything else is refused.
func (p *appServer) request(id json.RawMessage, method string, params json.RawMessage, line []byte) {
	if method == "item/tool/requestUserInput" {
		p.userInput(id, params)
		return
	}
	var a struct {
		ItemID      string          `json:"itemId"`
		Command     string          `json:"command"`
		Cwd         string          `json:"cwd"`
		Reason      string          `json:"reason"`
		GrantRoot   string          `json:"grantRoot"`
		Permissions json.RawMessage `json:"permissions"`
	}
	_ = json.Unmarshal(params, &a) // fields of an unexpected type are left zero
	decisions := []agentcli.PermissionOption{
		{ID: "accept", Kind: agentcli.AllowOnce, Name: "Accept"},
		{ID: "acceptForSession", Kind: agentcli.AllowAlways, Name: "Accept for this session"},
		{ID: "decline", Kind: agentcli.RejectOnce, Name: "Decline"},
	}
	pr := &agentcli.PermissionRequest{Options: decisions}
	p.mu.Lock()
	pr.SessionID = p.thread
	known := p.items[a.ItemID]
	p.mu.Unlock()
	switch method {
	case "item/commandExecution/requestApproval":
		input := map[string]string{"command": a.Command}
		if a.Cwd != "" {
			input["cwd"] = a.Cwd
		}
		pr.Tool = agentcli.ToolUse{ID: a.ItemID, Name: agentcli.ToolNameBash, RawName: "commandExecution", Kind: agentcli.ToolExecute, Input: marshal(input)}
		pr.Title = a.Command
	case "item/fileChange/requestApproval":
		if known != nil {
			pr.Tool = *known
		} else {
			pr.Tool = agentcli.ToolUse{ID: a.ItemID, Name: agentcli.ToolNameEdit, RawName: "fileChange", Kind: agentcli.ToolEdit, Input: json.RawMessage("{}")}
		}
		pr.Title = firstNonEmpty(a.Reason, "apply a patch")
	case "item/permissions/requestApproval":
		perms := a.Permissions
		if len(perms) == 0 || !json.Valid(perms) {
			perms = json.RawMessage("{}")
		}
		pr.Tool = agentcli.ToolUse{ID: a.ItemID, Name: "RequestPermissions", RawName: "permissions", Kind: agentcli.ToolOther, Input: perms}
		pr.Title = firstNonEmpty(a.Reason, "grant extra sandbox permissions")
		p.h.Ask(pr, func(d agentcli.PermissionDecision) {
			if !d.Allowed() {
				p.rpc.Reply(id, map[string]any{"permissions": map[string]any{}})
				return
			}
			scope := "turn"
			if d.Kind == agentcli.AllowAlways {
				scope = "session"
			}
			p.rpc.Reply(id, map[string]any{"permissions": perms, "scope": scope})
		})
		return
	case "mcpServer/elicitation/request":
		p.elicitation(id, params)
		return
	default:
		p.rpc.ReplyError(id, -32601, "agentcli does not support "+method)
		return
	}
	p.h.Ask(pr, func(d agentcli.PermissionDecision) {
		decision := "decline"
		switch d.Kind {
		case agentcli.AllowOnce:
			decision = "accept"
		case agentcli.AllowAlways:
			decision = "acceptForSession"
		}
		p.rpc.Reply(id, map[string]string{"decision": decision})
	})
}

// elicitation answers an MCP elicitation. codex asks through one before
// it runs an MCP tool under an approval policy that asks
// (_meta.codex_approval_kind "mcp_tool_call", with the tool's name and
// parameters): that becomes a permission request for
// "mcp__SERVER__TOOL" with the options accept (allow_once),
// acceptForSession (allow_always, when codex offers to remember the
// approval for the session) and decline (reject_once). Allowing answers
// {"action":"accept"} (with _meta.persist "session" for allow_always),
// refusing {"action":"decline"}; codex then tells the model the user
// rejected the call. Any other elicitation (an MCP server asking the user
// to fill in a form) is declined: the session has no user to ask.
func (p *appServer) elicitation(id, params json.RawMessage) {
	var e struct {
		ServerName string `json:"serverName"`
		Message    string `json:"message"`
		Meta       struct {
			Kind       string          `json:"codex_approval_kind"`
			Persist    json.RawMessage `json:"persist"`
			ToolName   string          `json:"tool_name"`
			ToolParams json.RawMessage `json:"tool_params"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &e) // fields of an unexpected type are left zero
	if e.Meta.Kind != "mcp_tool_call" || e.Meta.ToolName == "" {
		p.rpc.Reply(id, map[string]any{"action": "decline"})
		return
	}
	rawName := "mcp__" + e.ServerName + "__" + e.Meta.ToolName
	name, kind := tools.Canonical(rawName)
	input := e.Meta.ToolParams
	if len(input) == 0 || input[0] != '{' || !json.Valid(input) {
		input = json.RawMessage("{}")
	}
	options := []agentcli.PermissionOption{{ID: "accept", Kind: agentcli.AllowOnce, Name: "Accept"}}
	if bytes.Contains(e.Meta.Persist, []byte(`"session"`)) {
		options = append(options, agentcli.PermissionOption{ID: "acceptForSession", Kind: agentcli.AllowAlways, Name: "Accept for this session"})
	}
	options = append(options, agentcli.PermissionOption{ID: "decline", Kind: agentcli.RejectOnce, Name: "Decline"})
	p.mu.Lock()
	pr := &agentcli.PermissionRequest{
		SessionID: p.thread,
		Tool:      agentcli.ToolUse{ID: p.startedCall(rawName), Name: name, RawName: rawName, Kind: kind, Input: input},
		Title:     e.Message,
		Options:   options,
	}
	p.mu.Unlock()
	p.h.Ask(pr, func(d agentcli.PermissionDecision) {
		switch d.Kind {
		case agentcli.AllowOnce:
			p.rpc.Reply(id, map[string]any{"action": "accept", "content": map[string]any{}})
		case agentcli.AllowAlways:
			p.rpc.Reply(id, map[string]any{"action": "accept", "content": map[string]any{}, "_meta": map[string]string{"persist": "session"}})
		default:
			p.rpc.Reply(id, map[string]any{"action": "decline"})
		}
	})
}

// startedCall returns the id of the one started tool item whose raw name
// is rawName, or "" when there is none or more than one. p.mu is held.
func (p *appServer) startedCall(rawName string) string {
	id := ""
	for k, u := range p.items {
		if u.RawName == rawName {
			if id != "" {
				return ""
			}
			id = k
		}
	}
	return id
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// userInput answers codex's request_user_input tool
// (item/tool/requestUserInput, offered outside plan mode only with
// features.default_mode_request_user_input, which liveConfigHost sets for
// a request with OnQuestion): the questions go to Request.OnQuestion (one
// at a time), and the answer is {"answers": {ID: {"answers": [...]}}},
// which codex gives the model as it is. Without an answer each question
// is answered with the message that says so: codex turns an error reply
// into empty answers, which the model would read as answers.
func (p *appServer) userInput(id, params json.RawMessage) {
	var r struct {
		ItemID    string `json:"itemId"`
		Questions []struct {
			ID       string `json:"id"`
			Header   string `json:"header"`
			Question string `json:"question"`
			Options  []struct {
				Label       string `json:"label"`
				Description string `json:"description"`
			} `json:"options"`
		} `json:"questions"`
	}
	_ = json.Unmarshal(params, &r) // fields of an unexpected type are left zero
	p.mu.Lock()
	q := &agentcli.Question{SessionID: p.thread, ID: r.ItemID}
	p.mu.Unlock()
	// codex reports no item for the call: the session reports it, as the
	// other CLIs' questions are (AskUserQuestion).
	var input struct {
		Questions json.RawMessage `json:"questions"`
	}
	_ = json.Unmarshal(params, &input)
	in := marshal(map[string]any{"questions": input.Questions})
	if len(input.Questions) == 0 || !json.Valid(input.Questions) {
		in = json.RawMessage("{}")
	}
	p.h.Emit(agentcli.Event{Kind: agentcli.EventToolUse, SessionID: q.SessionID, Tool: &agentcli.ToolUse{ID: r.ItemID,
		Name: agentcli.ToolNameAskUserQuestion, RawName: "request_user_input", Kind: agentcli.ToolOther, Input: in}})
	for _, it := range r.Questions {
		item := agentcli.QuestionItem{ID: it.ID, Header: it.Header, Text: it.Question}
		for _, o := range it.Options {
			item.Options = append(item.Options, agentcli.QuestionOption{Label: o.Label, Description: o.Description})
		}
		q.Items = append(q.Items, item)
	}
	go func() {
		ctx, cancel := p.h.TurnContext()
		defer cancel()
		a, msg := driver.AskQuestion(ctx, p.req.OnQuestion, p.qsem, p.req.PermissionTimeout, q)
		answers := map[string]any{}
		for i, it := range q.Items {
			var ans []string
			if a != nil && i < len(a.Answers) {
				ans = a.Answers[i]
			}
			if len(ans) == 0 {
				ans = []string{firstNonEmpty(msg, agentcli.NoAnswerMessage)}
			}
			answers[it.ID] = map[string]any{"answers": ans}
		}
		out := map[string]any{"answers": answers}
		p.rpc.Reply(id, out)
		p.h.Emit(agentcli.Event{Kind: agentcli.EventToolResult, SessionID: q.SessionID,
			ToolResult: &agentcli.ToolResult{ID: r.ItemID, Output: string(marshal(out)), IsError: a == nil}})
	}()
}
