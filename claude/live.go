package claude

// Live sessions: one `claude -p` process kept open on stream-json input.
//
// Argv: that of a streaming one-shot run (prepareArgs, buildArgsMCP), so
// every setting a run carries, a session carries the same way:
//
//	claude -p --input-format stream-json --output-format stream-json --verbose --include-partial-messages
//	       MODE [--append-system-prompt-file=F] [--resume=ID] [--allowedTools=RULE...] [--disallowedTools=RULE...]
//	       [--max-turns=N] [--model=M] [--fallback-model=M] [--effort=LEVEL] [--max-budget-usd=AMOUNT]
//	       [--json-schema=SCHEMA] [--mcp-config=FILE --strict-mcp-config] [ExtraArgs...]
//
// with the MCP configuration in a private file (and AGENTCLI_DOLLAR=$ in
// the environment when it needs it), removed when the session closes. The
// settings hold for the whole session: every turn may use the MCP servers;
// with an output schema every turn's answer is a StructuredOutput call,
// reported in that turn's result line as structured_output
// (Result.StructuredOutput); --max-budget-usd caps what the whole session
// spends (claude adds up the cost of its turns), so once a turn reached
// it, that turn and every later one fail with error_max_budget_usd.
//
// where MODE is, per Request.Permission:
//
//	bypass  --dangerously-skip-permissions
//	ask     --permission-mode=default --permission-prompt-tool=stdio
//	deny    --permission-mode=dontAsk
//	plan    --permission-mode=plan
//
// Without --permission-prompt-tool stdio claude never asks the host: a call
// that needs approval is refused silently. dontAsk refuses every call that
// is not pre-approved, with claude's own message to the model; plan mode
// (2.1.330) lets the model read and plan but refuses Bash and edits. The
// same flags work for a one-shot `claude -p` run.
//
// The control protocol shares stdin and stdout with the messages: the host
// sends {"type":"control_request","request_id":ID,"request":{"subtype":...}}
// and claude answers {"type":"control_response","response":{"subtype":
// "success"|"error","request_id":ID,...}}, and the other way round for
// can_use_tool. The session sends initialize once (its answer proves the
// CLI is up), each prompt as one not-typed user message (userMessage), and
// interrupt. can_use_tool requests become permission requests with the
// options allow_once, allow_always and reject_once: allow answers
// {"behavior":"allow","updatedInput":...} (the edited input, or the
// original one: claude requires the field), allow_always adds claude's own
// "addRules" suggestions (or a rule for the whole tool) with destination
// "session", so they last for this process only and nothing is written to
// settings files; a refusal answers {"behavior":"deny","message":...}.
// claude has no "reject always" (a deny with rules is not remembered), so
// that decision falls back to reject_once. Each turn is parsed by the
// one-shot parser and ends at its result line; an interrupted turn ends
// with terminal_reason "aborted_streaming" or "aborted_tools".

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
	"github.com/agentcli/agentcli/driver/streamjson"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// permissionArgs returns the flags of req's permission mode. The zero
// value is deny. Under bypass with an allow list, dontAsk takes the place
// of --dangerously-skip-permissions: the listed tools are approved in
// advance (toolArgs), and whatever the list does not approve is refused
// (a call outside a rule's pattern, an MCP tool not listed) instead of
// run.
func permissionArgs(req *agentcli.Request) []string {
	switch req.Permission {
	case agentcli.PermissionAsk:
		return []string{"--permission-mode=default", "--permission-prompt-tool=stdio"}
	case agentcli.PermissionPlan:
		return []string{"--permission-mode=plan"}
	case agentcli.PermissionBypass:
		if len(req.AllowedTools) == 0 {
			return []string{"--dangerously-skip-permissions"}
		}
	}
	return []string{"--permission-mode=dontAsk"}
}

// toolArgs returns the flags that hold claude to req's tool lists. It is
// pure; the rules are valid (driver.CheckToolRules).
//
// An allow list becomes --tools=NAMES, the built-in tools that exist at
// all (the names of its rules that are not MCP rules, canonical spelling;
// "" for none), and one --allowedTools=RULE per rule, which approves the
// rule's calls in advance. An MCP server of the request that no rule
// names is taken away whole (--disallowedTools=mcp__NAME): --tools
// governs built-in tools only. Each disallowed rule is
// --disallowedTools=RULE, which claude enforces in every mode
// (--dangerously-skip-permissions included; verified with 2.1.330).
func toolArgs(req *agentcli.Request) []string { return toolArgsHost(req, false) }

// toolArgsHost is toolArgs for a request whose servers include
// agentcli's own (host), which an allow list does not take away.
func toolArgsHost(req *agentcli.Request, host bool) []string {
	var args []string
	if len(req.AllowedTools) > 0 {
		var names []string
		servers := map[string]bool{}
		for _, t := range req.AllowedTools {
			r, err := driver.ParseRule(t)
			if err == nil && r.IsMCP() {
				servers[strings.ToLower(r.MCPServer)] = true
				continue
			}
			name, _, _ := strings.Cut(claudeRule(t), "(")
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		args = append(args, "--tools="+strings.Join(names, ","))
		for _, t := range req.AllowedTools {
			args = append(args, "--allowedTools="+claudeRule(t))
		}
		for _, s := range req.MCPServers {
			if host && s.Name == agentcli.HostServerName {
				continue
			}
			if !servers[strings.ToLower(s.Name)] {
				args = append(args, "--disallowedTools=mcp__"+s.Name)
			}
		}
	}
	for _, t := range req.DisallowedTools {
		args = append(args, "--disallowedTools="+claudeRule(t))
	}
	return args
}

// claudeRule returns rule as claude takes it: a canonical tool name in
// any case spelt as claude spells it ("bash" is Bash; Task is claude's
// Agent), anything else as it is.
func claudeRule(rule string) string {
	r, err := driver.ParseRule(rule)
	if err != nil {
		return rule // validate refuses it
	}
	name := driver.CanonicalName(r.Name)
	switch name {
	case "":
		return rule
	case agentcli.ToolNameTask:
		name = "Agent"
	}
	if r.HasPattern {
		return name + "(" + r.Pattern + ")"
	}
	return name
}

// startSession starts a claude live session for the prepared run r: the
// argv and files of a streaming one-shot run (prepareArgs), every setting
// included.
func startSession(ctx context.Context, r *driver.Run) (agentcli.Session, error) {
	job, err := prepareArgs(r, true)
	if err != nil {
		return nil, err
	}
	// Every mode reachable by SetPermission (switch.go).
	args, noBypass := liveSwitchArgs(job.Args, r.Lookup("IS_SANDBOX"))
	mk := newLiveProtoHooks(r.Hooks(), r.HostTools())
	cfg := live.RunConfig(r, Name, r.Req, args, job.Env, nil)
	cfg.Proto = func(h *live.Host) live.Proto {
		p := mk(h)
		p.(*liveProto).sw.noBypass = noBypass
		return p
	}
	cfg.EditInput = true
	return live.Start(ctx, cfg)
}

// replaySession replays a live session's wire log: the protocol needs
// nothing but the log's lines.
func replaySession(r *driver.Run, _ json.RawMessage, log *wirelog.Reader) iter.Seq2[agentcli.Event, error] {
	cfg := live.ReplayConfig(r, Name, newReplayProto)
	cfg.EditInput = true
	return live.Replay(cfg, log)
}

// newLiveProtoHooks returns the maker of a session's protocol with the
// run's hooks and host tools.
func newLiveProtoHooks(hooks *driver.RunHooks, host *driver.HostTools) func(h *live.Host) live.Proto {
	return func(h *live.Host) live.Proto {
		p := &liveProto{h: h, qsem: make(chan struct{}, 1), hooks: hooks, host: host}
		p.ctl = streamjson.New(h, map[string]func(streamjson.Request){
			"can_use_tool":  p.canUseTool,
			"hook_callback": func(r streamjson.Request) { p.hookCallback(r.ID, r.Body) },
		})
		return p
	}
}

// liveProto is claude's stream-json control protocol.
type liveProto struct {
	h *live.Host

	mu     sync.Mutex
	parser *turnParser // the running turn's; nil between turns
	ctl    *streamjson.Conn
	qsem   chan struct{} // held while Request.OnQuestion runs
	hooks  *driver.RunHooks
	host   *driver.HostTools
	// sw is the state of switching and steering (switch.go).
	sw switchState
	// mcp reports the MCP servers that did not start once per session
	// (mcpnotice.go); the reading goroutine's.
	mcp driver.MCPStartNotices
}

// turnParser parses one turn's lines: st is the state of the Parser.
type turnParser struct {
	driver.Parser
	st *parser
}

// SessionID implements streamjson.TurnParser.
func (t *turnParser) SessionID() string { return t.st.sessionID }

// Start sends initialize and waits for its answer.
func (p *liveProto) Start(ctx context.Context) error {
	_, err := p.control(ctx, "initialize", map[string]any{"subtype": "initialize", "hooks": hookConfig(p.hooks)}, true)
	return err
}

// control sends a control request (giving up when ctx ends); with wait it
// waits for the answer too (see streamjson.Conn.Call).
func (p *liveProto) control(ctx context.Context, subtype string, request any, wait bool) (json.RawMessage, error) {
	if !wait {
		return nil, p.ctl.Notify(ctx, subtype, request)
	}
	return p.ctl.Call(ctx, subtype, request)
}

// Prompt sends prompt as a not-typed user message.
func (p *liveProto) Prompt(ctx context.Context, prompt string) error {
	st := &parser{mcp: &p.mcp}
	p.mu.Lock()
	p.parser = &turnParser{Parser: driver.Lines(Name, st), st: st}
	id := p.sw.begin()
	p.mu.Unlock()
	return p.h.Send(ctx, withUUID(userMessage(prompt), id))
}

// Interrupt sends an interrupt control request; the turn's result line
// (terminal_reason aborted_*) is the acknowledgment.
func (p *liveProto) Interrupt(ctx context.Context) error {
	_, err := p.control(ctx, "interrupt", map[string]any{"subtype": "interrupt"}, false)
	return err
}

// Exit leaves the error of a CLI that ended by itself to the session (see
// live.Proto): the error of a one-shot run that ended without a result.
func (p *liveProto) Exit(driver.Exit) error { return nil }

// Line handles one stdout line.
func (p *liveProto) Line(line []byte) {
	if p.ctl.Line(line) {
		return
	}
	if bookkeeping(line) {
		return
	}
	ps := streamjson.Feed(p.h, &p.mu, &p.parser, line)
	if ps != nil && ps.st.result != nil {
		res, err := p.h.Errors().Outcome(ps.End(driver.Exit{}), driver.Exit{})
		tr := ps.st.result.TerminalReason
		aborted := strings.HasPrefix(tr, "aborted")
		p.mu.Lock()
		if err == nil && !aborted && p.sw.consumed(line) {
			// Steered input is still to be answered, after this result
			// (switch.go): the turn goes on.
			p.sw.held = driver.MergeSteered(p.sw.held, res)
			if p.parser == ps {
				st := &parser{mcp: &p.mcp}
				p.parser = &turnParser{Parser: driver.Lines(Name, st), st: st}
			}
			p.mu.Unlock()
			return
		}
		if p.parser == ps {
			p.parser = nil
		}
		res = p.sw.end(res)
		p.mu.Unlock()
		p.h.EndTurn(live.TurnEnd{Result: res, Err: err, Interrupted: aborted})
	}
}

// canUseTool answers a can_use_tool request from claude through the
// session's permission handling (control requests of other subtypes than
// it and hook_callback are refused as unsupported).
func (p *liveProto) canUseTool(c streamjson.Request) {
	r := c.CanUseTool()
	input := r.Input
	if r.ToolName == agentcli.ToolNameAskUserQuestion {
		// The answers go back as the input's "answers": each question's
		// text to the labels chosen.
		p.ctl.AskUserQuestion(p.h, p.qsem, c.ID, r.ToolUseID, input, func(_ int, q string) string { return q })
		return
	}
	name, kind := tools.Canonical(r.ToolName)
	pr := &agentcli.PermissionRequest{
		Tool:  agentcli.ToolUse{ID: r.ToolUseID, Name: name, RawName: r.ToolName, Kind: kind, Input: input},
		Title: firstNonEmpty(r.Title, r.Description, r.DisplayName, r.ToolName),
		Options: []agentcli.PermissionOption{
			{ID: "allow_once", Kind: agentcli.AllowOnce, Name: "Allow"},
			{ID: "allow_always", Kind: agentcli.AllowAlways, Name: "Allow for this session"},
			{ID: "reject_once", Kind: agentcli.RejectOnce, Name: "Deny"},
		},
	}
	id := c.ID
	p.h.Ask(pr, func(d agentcli.PermissionDecision) {
		if !d.Allowed() {
			p.ctl.Deny(id, d.Message)
			return
		}
		ans := map[string]any{"behavior": "allow", "updatedInput": input}
		if d.Input != nil {
			// An edit claude cannot apply is a refusal, never the
			// original call (driver.NormalizeDecision refuses it already).
			var obj map[string]json.RawMessage
			if json.Unmarshal(d.Input, &obj) != nil || obj == nil {
				p.ctl.Deny(id, driver.UnusableInputMessage)
				return
			}
			ans["updatedInput"] = d.Input
		}
		if d.Kind == agentcli.AllowAlways {
			ans["updatedPermissions"] = sessionRules(r.ToolName, r.Suggestions)
		}
		p.reply(id, ans, "")
	})
}

// sessionRules returns the permission updates of an "allow always": the
// addRules suggestions claude made for the call (for Bash, the command),
// kept for this session only; or, without any, a rule for the whole tool.
func sessionRules(tool string, suggestions []json.RawMessage) []map[string]any {
	var out []map[string]any
	for _, raw := range suggestions {
		var s map[string]any
		if json.Unmarshal(raw, &s) != nil || s["type"] != "addRules" || s["behavior"] != "allow" {
			continue
		}
		s["destination"] = "session"
		out = append(out, s)
	}
	if len(out) == 0 {
		out = append(out, map[string]any{
			"type":        "addRules",
			"rules":       []map[string]any{{"toolName": tool}},
			"behavior":    "allow",
			"destination": "session",
		})
	}
	return out
}

// reply answers a control request from claude with a success response, or
// an error when errMsg is set.
func (p *liveProto) reply(id string, response any, errMsg string) {
	if errMsg != "" {
		p.ctl.Refuse(id, errMsg)
		return
	}
	p.ctl.Reply(id, response)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
