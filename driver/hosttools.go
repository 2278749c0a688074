package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/hostmcp"
)

// Host tools (agentcli.Request.Tools) and agentcli's question tool are
// served to the CLI by an MCP server of the run's own (package
// internal/hostmcp), named agentcli.HostServerName, on a loopback port
// behind a bearer secret of the run's own. The runner starts it when a
// run or live session is prepared (prepareRun), adds it to the request's
// MCP servers, which every backend already hands to its CLI, and stops it
// when the run ends or the session closes (Run.Defer). What a backend
// adds (see HostTools): its CLI must not ask about the server's tools
// (agentcli decides them itself, in the server, where the refusal's
// message reaches the model on every CLI), the tool lists must not take
// the server away, and a CLI that would start a turn without it must be
// told to wait for it.
//
// Each call is decided in the server: a tool approved in advance
// (Tool.Approved, or an earlier "allow always") runs; otherwise
// PermissionBypass runs it, PermissionAsk asks Request.OnPermission (one
// call at a time, shared with the CLI's own permission requests, bounded
// by Request.PermissionTimeout), and PermissionDeny and PermissionPlan
// refuse it. A refusal, the handler's error or its panic is the tool's
// error result, its message in the text ("error: ..."), since codex and
// opencode pass the model only the text.

// QuestionTool is the name of agentcli's own question tool, served when
// the request has OnQuestion and the CLI has no way of its own to ask
// (Spec.Questions).
const QuestionTool = "ask_question"

// maxToolName bounds a host tool's name: with the longest prefix a CLI
// puts before it ("mcp__agentcli__", 15 bytes) it stays within the
// 64 bytes model APIs allow for a tool name.
const maxToolName = 48

// HostTools is what a backend sees of the host tools of a run or live
// session (Run.HostTools): agentcli's MCP server, which is among
// Request.MCPServers under the name agentcli.HostServerName. A backend
// must
//
//   - let the CLI run the server's tools without asking: agentcli decides
//     each call itself (claude: --allowedTools=mcp__agentcli; codex: each
//     tool's approval_mode "approve"; gemini: the server's trust; opencode:
//     "agentcli_*": "allow"; copilot: --allow-tool=agentcli), and pass a live session's HostTools in
//     live.Config so that a request the CLI still sends is allowed;
//   - keep the server whatever Request.AllowedTools says (the tool lists
//     do not apply to it: the runner has taken the rules that name host
//     tools out of the lists it hands the backend);
//   - make the CLI wait for the server before the first model request,
//     where it would not (codex: required = true).
type HostTools struct {
	backend string
	srv     *hostmcp.Server
	entry   agentcli.MCPServer
	tools   map[string]agentcli.Tool // served, by name
	names   []string                 // served, in order
	mode    agentcli.PermissionMode
	logger  *slog.Logger

	onPerm     agentcli.PermissionFunc // the caller's, unwrapped
	permTO     time.Duration
	onQuestion agentcli.QuestionFunc
	askSem     chan struct{} // held while the caller's OnPermission runs
	qSem       chan struct{} // held while the caller's OnQuestion runs

	hooks *RunHooks // the run's hooks, or nil: PreToolUse sees each call

	mu      sync.Mutex
	always  map[string]bool     // tools allowed for the rest of the run
	turn    context.Context     // the running turn's, or nil
	pending map[string][]string // tool name → ids of its announced calls
}

// HostTools returns the run's host tools, or nil when it has none.
func (r *Run) HostTools() *HostTools { return r.host }

// Server returns agentcli's MCP server as it is among
// Request.MCPServers.
func (h *HostTools) Server() agentcli.MCPServer { return h.entry }

// Names returns the names of the tools the server serves (the host's
// tools that DisallowedTools left, and the question tool), in order.
func (h *HostTools) Names() []string { return slices.Clone(h.names) }

// IsServer reports whether name is agentcli's server.
func (h *HostTools) IsServer(name string) bool {
	return h != nil && name == agentcli.HostServerName
}

// Match reports whether raw, a tool name as a CLI reports it
// ("mcp__agentcli__now", "mcp_agentcli_now", "agentcli_now",
// copilot's "agentcli-now", droid's "agentcli___now"), is one of
// the served tools, and returns that tool's name.
func (h *HostTools) Match(raw string) (string, bool) {
	if h == nil {
		return "", false
	}
	for _, p := range []string{"mcp__" + agentcli.HostServerName + "__", "mcp_" + agentcli.HostServerName + "_", agentcli.HostServerName + "_", agentcli.HostServerName + "/",
		agentcli.HostServerName + "-", agentcli.HostServerName + "___"} {
		if rest, ok := strings.CutPrefix(raw, p); ok {
			if _, ok := h.tools[rest]; ok {
				return rest, true
			}
		}
	}
	return "", false
}

// IsHostServer reports whether name, among req's MCP servers, is
// agentcli's own (see HostTools): the request has host tools or
// OnQuestion, which no server of the caller's may then be named after
// (the request check refuses it). It is pure, for a backend's pure
// functions of a request.
func IsHostServer(req *agentcli.Request, name string) bool {
	return name == agentcli.HostServerName && (len(req.Tools) > 0 || req.OnQuestion != nil)
}

// HostToolNames returns the names of the tools agentcli's server may
// serve for req (see IsHostServer): its host tools and, with OnQuestion,
// the question tool. It is pure.
func HostToolNames(req *agentcli.Request) []string {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	if req.OnQuestion != nil && !slices.Contains(names, QuestionTool) {
		names = append(names, QuestionTool)
	}
	return names
}

// Listed reports whether the CLI has listed the server's tools.
func (h *HostTools) Listed() bool { return h.srv.Listed() }

// eventName is the name events report for a served tool.
func eventName(name string) string {
	if name == QuestionTool {
		return agentcli.ToolNameAskUserQuestion
	}
	return name
}

// Event renames a tool use of a served tool in ev: its Name becomes the
// tool's own (agentcli.ToolNameAskUserQuestion for the question tool)
// and its Kind agentcli.ToolOther. It also notes the call's id, which a
// permission request about the call then carries.
func (h *HostTools) Event(ev *agentcli.Event) {
	if h == nil || ev.Kind != agentcli.EventToolUse || ev.Tool == nil {
		return
	}
	name, ok := h.Match(ev.Tool.RawName)
	if !ok {
		name, ok = h.Match(ev.Tool.Name)
	}
	if !ok {
		return
	}
	t := *ev.Tool
	t.Name, t.Kind = eventName(name), agentcli.ToolOther
	ev.Tool = &t
	if t.ID != "" {
		h.mu.Lock()
		if ids := h.pending[name]; !slices.Contains(ids, t.ID) && len(ids) < 64 {
			h.pending[name] = append(ids, t.ID)
		}
		h.mu.Unlock()
	}
}

// callID returns the id of the call of tool name now running: the one
// the CLI gave in the call's _meta (claude), or the oldest announced one.
func (h *HostTools) callID(name string, meta map[string]any) string {
	id, _ := meta["claudecode/toolUseId"].(string)
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := h.pending[name]
	if id != "" {
		h.pending[name] = slices.DeleteFunc(ids, func(s string) bool { return s == id })
		return id
	}
	if len(ids) == 0 {
		return ""
	}
	h.pending[name] = ids[1:]
	return ids[0]
}

// BeginTurn makes ctx the running turn's: a call's context ends when it
// does, or when end is called.
func (h *HostTools) BeginTurn(ctx context.Context) (end func()) {
	if h == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	h.mu.Lock()
	h.turn = ctx
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		if h.turn == ctx {
			h.turn = nil
		}
		h.mu.Unlock()
		cancel()
	}
}

// callContext returns ctx, ended also when the running turn ends.
func (h *HostTools) callContext(ctx context.Context) (context.Context, func()) {
	h.mu.Lock()
	turn := h.turn
	h.mu.Unlock()
	if turn == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(turn, cancel)
	return ctx, func() { stop(); cancel() }
}

// errorText is the text of a tool error result.
func errorText(msg string) string { return "error: " + msg }

// call runs one call of a served tool (see the top of the file).
func (h *HostTools) call(ctx context.Context, name string, input json.RawMessage, meta map[string]any) (string, bool) {
	ctx, done := h.callContext(ctx)
	defer done()
	id := h.callID(name, meta)
	if name == QuestionTool {
		return h.question(ctx, id, input), false
	}
	t := h.tools[name]
	if !json.Valid(input) || !isObject(input) {
		return errorText("the input is not a JSON object"), true
	}
	if h.hooks.HasPreToolUse() {
		use := agentcli.ToolUse{ID: id, Name: t.Name, RawName: "mcp__" + agentcli.HostServerName + "__" + t.Name, Kind: agentcli.ToolOther, Input: input}
		out := h.hooks.PreToolUse(ctx, "", use, t.Name)
		if out.Deny {
			return errorText(out.Reason), true
		}
		if out.Input != nil {
			input = out.Input
		}
	}
	if d, ok := h.decide(ctx, id, t, input); !ok {
		return errorText(d.Message), true
	} else if d.Input != nil {
		input = d.Input
	}
	text, err := h.run(ctx, t, input)
	if err != nil {
		return errorText(err.Error()), true
	}
	return text, false
}

// run calls t's handler; a panic is an error.
func (h *HostTools) run(ctx context.Context, t agentcli.Tool, input json.RawMessage) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			h.logger.Warn("agentcli: a host tool panicked", "backend", h.backend, "tool", t.Name, "panic", fmt.Sprint(r))
			err = fmt.Errorf("the tool %s failed (it panicked)", t.Name)
		}
	}()
	return t.Handler(ctx, input)
}

// decide decides a call of t by the run's permission mode; ok reports
// that it may run (with d.Input, when set, as its input).
func (h *HostTools) decide(ctx context.Context, id string, t agentcli.Tool, input json.RawMessage) (d agentcli.PermissionDecision, ok bool) {
	h.mu.Lock()
	always, mode := h.always[t.Name], h.mode // mode: SetMode may switch it
	h.mu.Unlock()
	if t.Approved || always || mode == agentcli.PermissionBypass {
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}, true
	}
	refuse := agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: DeniedMessage}
	if mode != agentcli.PermissionAsk || h.onPerm == nil {
		return refuse, false
	}
	pr := &agentcli.PermissionRequest{
		Tool:  agentcli.ToolUse{ID: id, Name: t.Name, RawName: "mcp__" + agentcli.HostServerName + "__" + t.Name, Kind: agentcli.ToolOther, Input: input},
		Title: t.Name,
		Options: []agentcli.PermissionOption{
			{ID: "allow_once", Kind: agentcli.AllowOnce, Name: "Allow"},
			{ID: "allow_always", Kind: agentcli.AllowAlways, Name: "Allow for this session"},
			{ID: "reject_once", Kind: agentcli.RejectOnce, Name: "Deny"},
		},
	}
	ctx, cancel := context.WithTimeout(ctx, h.permTO)
	defer cancel()
	d = NormalizeDecision(pr.Options, callBounded(ctx, h.askSem, refuse, func(ctx context.Context) agentcli.PermissionDecision {
		return h.onPerm(ctx, pr)
	}), true)
	if !d.Allowed() {
		return d, false
	}
	if d.Kind == agentcli.AllowAlways {
		h.mu.Lock()
		h.always[t.Name] = true
		h.mu.Unlock()
	}
	return d, true
}

// callBounded calls f while holding sem (one call at a time), and returns
// def when ctx ends first, or when f panics; f keeps sem until it
// returns, even after its answer is given up.
func callBounded[T any](ctx context.Context, sem chan struct{}, def T, f func(ctx context.Context) T) T {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return def
	}
	ch := make(chan T, 1)
	go func() {
		defer func() { <-sem }()
		defer func() {
			if r := recover(); r != nil {
				ch <- def
			}
		}()
		ch <- f(ctx)
	}()
	select {
	case v := <-ch:
		if ctx.Err() != nil {
			return def
		}
		return v
	case <-ctx.Done():
		return def
	}
}

// serialPermission returns f wrapped so that it shares one-at-a-time with
// the host tools' own permission requests.
func (h *HostTools) serialPermission(f agentcli.PermissionFunc) agentcli.PermissionFunc {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, pr *agentcli.PermissionRequest) agentcli.PermissionDecision {
		select {
		case h.askSem <- struct{}{}:
		case <-ctx.Done():
			return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: DeniedMessage}
		}
		defer func() { <-h.askSem }()
		return f(ctx, pr)
	}
}

// questionSchema is the question tool's input schema.
const questionSchema = `{"type":"object","properties":{"questions":{"type":"array","minItems":1,"maxItems":4,` +
	`"description":"The questions to ask, at most four at once.","items":{"type":"object","properties":{` +
	`"header":{"type":"string","description":"A short label for the question, at most 12 characters."},` +
	`"question":{"type":"string","description":"The question, ending with a question mark."},` +
	`"options":{"type":"array","maxItems":4,"description":"Two to four answers to choose from; the user may also answer in words of their own.",` +
	`"items":{"type":"object","properties":{"label":{"type":"string","description":"The answer, in a few words."},` +
	`"description":{"type":"string","description":"What choosing it means."}},"required":["label"]}},` +
	`"multiSelect":{"type":"boolean","description":"Whether several options may be chosen."}},"required":["question"]}}},"required":["questions"]}`

// questionDescription is the question tool's description.
const questionDescription = "Ask the user one or more questions and wait for the answers: to clarify what they want, " +
	"to let them choose between approaches, or to get a decision you cannot make yourself. " +
	"Offer options where you can."

// question runs a call of the question tool: the question goes to
// Request.OnQuestion, and the text returned tells the model the answers.
func (h *HostTools) question(ctx context.Context, id string, input json.RawMessage) string {
	items, err := QuestionItems(input)
	if err != nil || len(items) == 0 {
		return errorText("the input must be {\"questions\": [{\"question\": ..., \"options\": [{\"label\": ...}]}]}")
	}
	q := &agentcli.Question{ID: id, Items: items}
	a, msg := AskQuestion(ctx, h.onQuestion, h.qSem, h.permTO, q)
	if a == nil {
		return msg
	}
	return AnswerText(q, a)
}

// AskQuestion puts q to ask (Request.OnQuestion), one question at a
// time (sem, cap 1, shared by the run's questions; nil for none), within
// timeout (zero: agentcli.DefaultPermissionTimeout). It returns the
// answer, or nil and the message to tell the model: NotAvailableMessage
// without ask, NoAnswerMessage when ask fails, panics, returns nil or
// does not answer in time.
func AskQuestion(ctx context.Context, ask agentcli.QuestionFunc, sem chan struct{}, timeout time.Duration, q *agentcli.Question) (*agentcli.Answer, string) {
	if ask == nil {
		return nil, agentcli.NotAvailableMessage
	}
	if sem == nil {
		sem = make(chan struct{}, 1)
	}
	if timeout <= 0 {
		timeout = agentcli.DefaultPermissionTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cp := *q
	cp.Items = slices.Clone(q.Items)
	a := callBounded(ctx, sem, (*agentcli.Answer)(nil), func(ctx context.Context) *agentcli.Answer {
		a, err := ask(ctx, &cp)
		if err != nil {
			return nil
		}
		return a
	})
	if a == nil {
		return nil, agentcli.NoAnswerMessage
	}
	return a, ""
}

// AnswerText is the text that tells a model the answers a to q.
func AnswerText(q *agentcli.Question, a *agentcli.Answer) string {
	var b strings.Builder
	b.WriteString("The user answered:")
	for i, it := range q.Items {
		b.WriteString("\n")
		label := it.Text
		if label == "" {
			label = it.Header
		}
		fmt.Fprintf(&b, "%q: ", label)
		var ans []string
		if i < len(a.Answers) {
			ans = a.Answers[i]
		}
		if len(ans) == 0 {
			b.WriteString("(no answer)")
			continue
		}
		quoted := make([]string, len(ans))
		for j, s := range ans {
			quoted[j] = fmt.Sprintf("%q", s)
		}
		b.WriteString(strings.Join(quoted, ", "))
	}
	return b.String()
}

// hostToolRules reports whether rule names a host tool of names (by its
// own name, or as an MCP rule for agentcli's server), and which: "" for
// every one.
func hostToolRule(rule string, names map[string]bool) (tool string, ok bool) {
	if names[rule] {
		return rule, true
	}
	r, err := ParseRule(rule)
	if err != nil || !r.IsMCP() || !strings.EqualFold(r.MCPServer, agentcli.HostServerName) {
		return "", false
	}
	return r.MCPTool, true
}

// isToolName reports whether name is a valid host tool name.
func isToolName(name string) bool {
	if name == "" || len(name) > maxToolName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case ('0' <= c && c <= '9' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// checkHost validates Request.Tools and what agentcli's server needs of
// the rest of the request.
func checkHost(backend string, caps agentcli.Capabilities, req *agentcli.Request) error {
	bad := func(field, format string, args ...any) error {
		return &agentcli.RequestError{Backend: backend, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if len(req.Tools) > 0 && !caps.HostTools {
		return &agentcli.UnsupportedError{Backend: backend, Feature: "host tools (Request.Tools)"}
	}
	if req.OnQuestion != nil && !caps.Questions {
		// The callback would never be called: the CLI's own question
		// tool would answer (or wait) instead.
		return &agentcli.UnsupportedError{Backend: backend, Feature: "questions (Request.OnQuestion)"}
	}
	names := map[string]bool{}
	seen := map[string]bool{}
	for i, t := range req.Tools {
		f := fmt.Sprintf("Tools[%d]", i)
		switch {
		case !isToolName(t.Name):
			return bad(f+".Name", "%q is not 1 to %d ASCII letters, digits, '_' and '-' starting with a letter", t.Name, maxToolName)
		case seen[strings.ToLower(t.Name)]:
			return bad(f+".Name", "%q is used by another tool", t.Name)
		case t.Err() != nil:
			return bad(f, "%v", t.Err())
		case t.Handler == nil:
			return bad(f+".Handler", "not set")
		}
		seen[strings.ToLower(t.Name)] = true
		names[t.Name] = true
		if len(t.InputSchema) > 0 {
			var m map[string]any
			if err := json.Unmarshal(t.InputSchema, &m); err != nil || m == nil {
				return bad(f+".InputSchema", "not a JSON object")
			}
			if m["type"] != "object" {
				return bad(f+".InputSchema", "not an object schema (its \"type\" must be \"object\")")
			}
		}
	}
	if len(req.Tools) == 0 && req.OnQuestion == nil {
		return nil
	}
	for i, s := range req.MCPServers {
		if n := strings.ToLower(s.Name); n == agentcli.HostServerName || strings.HasPrefix(n, agentcli.HostServerName+"_") {
			return bad(fmt.Sprintf("MCPServers[%d].Name", i), "%q is reserved for agentcli's own server, which serves the host tools and questions", s.Name)
		}
	}
	for i, rule := range req.AllowedTools {
		if _, ok := hostToolRule(rule, names); ok {
			return bad(fmt.Sprintf("AllowedTools[%d]", i), "%q names a host tool: host tools are always offered (Tool.Approved approves one in advance)", rule)
		}
	}
	return nil
}

// attachHost starts agentcli's MCP server for r when its request has host
// tools, or OnQuestion and a CLI with no way of its own to ask: the
// server joins r.Req.MCPServers, the rules that name host tools leave
// the tool lists, and the server stops when r is cleaned up.
func (b *Backend) attachHost(r *Run) error {
	req := r.Req
	question := req.OnQuestion != nil && (b.spec.Questions == nil || !b.spec.Questions(req))
	if len(req.Tools) == 0 && !question {
		return nil
	}
	names := map[string]bool{}
	for _, t := range req.Tools {
		names[t.Name] = true
	}
	// DisallowedTools: the rules that name host tools take them out,
	// and leave the list (the CLI knows no such tool).
	drop := map[string]bool{}
	var disallowed []string
	for _, rule := range req.DisallowedTools {
		tool, ok := hostToolRule(rule, names)
		if !ok {
			disallowed = append(disallowed, rule)
			continue
		}
		if tool == "" {
			maps.Copy(drop, names)
		}
		for n := range names {
			if strings.EqualFold(n, tool) {
				drop[n] = true
			}
		}
	}
	h := newHostTools(b.spec.Name, req, r.Logger)
	var served []hostmcp.Tool
	// claude 2.1.330 defers MCP tools behind its ToolSearch tool unless
	// they ask to be loaded: the model then calls a tool whose schema it
	// has not seen.
	meta := map[string]any{"anthropic/alwaysLoad": true}
	for _, t := range req.Tools {
		if drop[t.Name] {
			continue
		}
		h.tools[t.Name] = t
		h.names = append(h.names, t.Name)
		served = append(served, hostmcp.Tool{Name: t.Name, Description: t.Description, Schema: t.InputSchema, Meta: meta})
	}
	if question && !names[QuestionTool] {
		h.tools[QuestionTool] = agentcli.Tool{Name: QuestionTool, Approved: true}
		h.names = append(h.names, QuestionTool)
		served = append(served, hostmcp.Tool{Name: QuestionTool, Description: questionDescription, Schema: json.RawMessage(questionSchema), Meta: meta})
	}
	c := *req
	c.DisallowedTools = disallowed
	if len(served) == 0 {
		r.Req = &c
		return nil
	}
	srv, err := hostmcp.Start(hostmcp.Config{Name: agentcli.HostServerName, Tools: served, Call: h.call})
	if err != nil {
		return fmt.Errorf("%s: starting the host tools' MCP server: %w", b.spec.Name, err)
	}
	h.srv = srv
	h.entry = agentcli.MCPServer{Name: agentcli.HostServerName, URL: srv.URL(), Headers: map[string]string{"Authorization": srv.Header()}}
	c.MCPServers = append(slices.Clip(req.MCPServers), h.entry)
	c.OnPermission = h.serialPermission(req.OnPermission)
	r.Req = &c
	r.host = h
	r.Defer(srv.Close)
	return nil
}

// newHostTools returns the host tools of req, serving none yet.
func newHostTools(backend string, req *agentcli.Request, logger *slog.Logger) *HostTools {
	h := &HostTools{
		backend:    backend,
		tools:      map[string]agentcli.Tool{},
		mode:       Mode(req),
		logger:     logger,
		onPerm:     req.OnPermission,
		permTO:     req.PermissionTimeout,
		onQuestion: req.OnQuestion,
		askSem:     make(chan struct{}, 1),
		qSem:       make(chan struct{}, 1),
		always:     map[string]bool{},
		pending:    map[string][]string{},
	}
	if h.permTO <= 0 {
		h.permTO = agentcli.DefaultPermissionTimeout
	}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	return h
}

// LocalHostTools returns req's host tools without a server, for a
// backend with no CLI (package agentclitest): Call runs them as
// agentcli's server does, with hooks' PreToolUse (nil for none).
func LocalHostTools(backend string, req *agentcli.Request, hooks *RunHooks) *HostTools {
	h := newHostTools(backend, req, nil)
	for _, t := range req.Tools {
		h.tools[t.Name] = t
		h.names = append(h.names, t.Name)
	}
	h.hooks = hooks
	return h
}

// Call runs a call of the host tool name with input as agentcli's server
// runs it: PreToolUse, the permission mode (Tool.Approved, bypass,
// Request.OnPermission, refusal), the handler (an error or a panic is an
// error result). It returns the text the model would receive and whether
// it is an error. A name the request has no tool of is an error result.
func (h *HostTools) Call(ctx context.Context, name string, input json.RawMessage) (string, bool) {
	if _, ok := h.tools[name]; !ok || name == QuestionTool && h.tools[name].Handler == nil {
		return errorText("no such tool: " + name), true
	}
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return h.call(ctx, name, input, nil)
}

// NewRunHooks returns the hooks of req as the runner calls them, with
// none called natively, for a backend with no CLI (package
// agentclitest); nil when req has none.
func NewRunHooks(backend string, req *agentcli.Request) *RunHooks {
	return newRunHooks(backend, req, NativeHooks{}, nil)
}

// notListed is the error of a run whose CLI never listed the host tools.
func (h *HostTools) notListed() error {
	msg := "the CLI never listed the host tools of agentcli's MCP server " + agentcli.HostServerName
	if n := h.srv.Rejected(); n > 0 {
		msg += fmt.Sprintf(" (%d requests without its secret were refused)", n)
	}
	return &agentcli.ProtocolError{Backend: h.backend, Method: "host tools", Message: msg}
}

// Wrap returns yield with the host tools' part of a run's events: tool
// uses of served tools renamed (Event), and a result that comes while
// the CLI has not listed the served tools turned into a
// *agentcli.ProtocolError (a CLI that cannot reach the server drops it
// and tells the model the tools do not exist: the run must not look
// fine).
func (h *HostTools) Wrap(yield func(agentcli.Event, error) bool) func(agentcli.Event, error) bool {
	if h == nil {
		return yield
	}
	return func(ev agentcli.Event, err error) bool {
		if err == nil {
			h.Event(&ev)
			if ev.Kind == agentcli.EventResult && !h.Listed() {
				return yield(agentcli.Event{}, h.notListed())
			}
		}
		return yield(ev, err)
	}
}
