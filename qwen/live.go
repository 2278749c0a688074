package qwen

// Live sessions: one qwen process kept open on stream-json input, speaking
// qwen's control protocol (Claude Code's, as qwen 0.24.4 implements it).
// Runs in any mode but bypass are one turn of one (see LiveRun).
//
// Argv: that of a streaming run (buildArgs with deltas), so every
// setting a run carries, a session carries the same way, with the MCP
// configuration in a private file removed when the session closes.
// --approval-mode is, per Request.Permission:
//
//	bypass  yolo      (default when the allow list holds a pattern; see approvalMode)
//	ask     default   every call that needs approval is asked about (can_use_tool)
//	deny    default   asked about too, and refused by the session
//	plan    plan      qwen's read-only mode; whatever it still asks is refused
//
// The host sends {"type":"control_request","request_id":ID,"request":
// {"subtype":...}} and qwen answers {"type":"control_response","response":
// {"subtype":"success"|"error","request_id":ID,...}}, and the other way
// round for can_use_tool. The session sends initialize once (with the
// effort, and qwen's timeout for a permission answer raised to the
// session's PermissionTimeout plus a minute, at most qwen's limit of ten
// minutes; qwen's default is one minute), each prompt as one user message
// (userMessage), and interrupt. can_use_tool becomes a permission request
// with the options allow_once, allow_always and reject_once: allow answers
// {"behavior":"allow","updatedInput":...} with the original input (qwen
// 0.24.4 accepts an edited one and then runs the original command, so an
// allow with edited input is refused; EditInput is false); qwen takes
// every allow as once, so after an allow_always the
// session itself allows that tool's later calls without asking (as long as
// the tool lists do not refuse them); a refusal answers {"behavior":"deny","message":...}, which
// qwen gives the model as "[Operation Cancelled] Reason: ..." and the turn
// goes on. Each turn ends at its result line; an interrupt ends it with
// subtype error_during_execution and "Operation cancelled", and the
// interrupted prompt stays in the history.
//
// Qwen asks nothing else of the host that agentcli answers: any other
// control request is refused as unsupported.

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
	"github.com/agentcli/agentcli/driver/streamjson"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// startSession starts a qwen live session for the prepared run r.
func startSession(ctx context.Context, r *driver.Run) (agentcli.Session, error) {
	if err := checkNewID(r); err != nil {
		return nil, err // manage.go
	}
	mcpFile, err := writeMCPConfig(r)
	if err != nil {
		return nil, err
	}
	args := buildArgs(r.Req, true, mcpFile)
	req := sessionRequest(r.Req)
	henv, pre, err := hookEnv(r) // hooks.go
	if err != nil {
		return nil, err
	}
	hooks, host := r.Hooks(), r.HostTools()
	proto := func(h *live.Host) live.Proto {
		p := newLiveProto(h).(*liveProto)
		p.hooks, p.pre, p.host = hooks, pre, host
		return p
	}
	// Host tools, questions and hooks: hosttools.go.
	cfg := live.RunConfig(r, Name, req, args, henv, nil)
	cfg.Proto = proto
	return live.Start(ctx, cfg)
}

// sessionRequest returns the request the session answers permission
// requests by: req itself, except that a bypass session in qwen's default
// mode (an allow list with patterns, whose matching calls qwen approves
// itself) refuses whatever qwen asks about, which is outside the list.
func sessionRequest(req *agentcli.Request) *agentcli.Request {
	if driver.Mode(req) == agentcli.PermissionBypass && approvalMode(req) != "yolo" {
		c := *req
		c.Permission = agentcli.PermissionDeny
		return &c
	}
	return req
}

// replaySession replays a live session's wire log.
func replaySession(r *driver.Run, _ json.RawMessage, log *wirelog.Reader) iter.Seq2[agentcli.Event, error] {
	return live.Replay(live.ReplayConfig(r, Name, newLiveProto), log)
}

func newLiveProto(h *live.Host) live.Proto {
	p := &liveProto{h: h, always: map[string]bool{}, qsem: make(chan struct{}, 1)}
	p.ctl = streamjson.New(h, map[string]func(streamjson.Request){"can_use_tool": p.canUseTool})
	return p
}

// liveProto is qwen's stream-json control protocol.
type liveProto struct {
	h *live.Host

	mu     sync.Mutex
	parser *turnParser // the running turn's; nil between turns
	ctl    *streamjson.Conn
	// always holds the tools allowed for the rest of the session
	// (AllowAlways), by qwen's name.
	always map[string]bool
	qsem   chan struct{} // held while Request.OnQuestion runs
	// hooks are the session's (nil in a replay), pre the calls put to
	// PreToolUse before qwen's permission check (hooks.go).
	hooks *driver.RunHooks
	pre   *preChecked
	host  *driver.HostTools
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

// maxPermissionWait is qwen's limit on the initialize request's
// timeout.canUseTool (MAX_CAN_USE_TOOL_TIMEOUT_MS).
const maxPermissionWait = 10 * time.Minute

// Start sends initialize and waits for its answer.
func (p *liveProto) Start(ctx context.Context) error {
	req := p.h.Request()
	wait := req.PermissionTimeout
	if wait <= 0 {
		wait = agentcli.DefaultPermissionTimeout
	}
	wait = min(wait+time.Minute, maxPermissionWait)
	init := map[string]any{"subtype": "initialize", "hooks": nil, "timeout": map[string]any{"canUseTool": wait.Milliseconds()}}
	if req.Effort != "" {
		init["effort"] = string(req.Effort)
	}
	_, err := p.ctl.Call(ctx, "initialize", init)
	return err
}

// Prompt sends prompt as a user message.
func (p *liveProto) Prompt(ctx context.Context, prompt string) error {
	p.mu.Lock()
	st := &parser{mcp: &p.mcp}
	p.parser = &turnParser{Parser: driver.Lines(Name, st), st: st}
	p.mu.Unlock()
	return p.h.Send(ctx, userMessage(prompt))
}

// Interrupt sends an interrupt control request; the turn's result line is
// the acknowledgment.
func (p *liveProto) Interrupt(ctx context.Context) error {
	return p.ctl.Notify(ctx, "interrupt", map[string]any{"subtype": "interrupt"})
}

// Exit leaves the error of a CLI that ended by itself to the session (see
// live.Proto): the error of a one-shot run that ended without a result.
func (p *liveProto) Exit(driver.Exit) error { return nil }

// Line handles one stdout line.
func (p *liveProto) Line(line []byte) {
	if p.ctl.Line(line) {
		return
	}
	ps := streamjson.Feed(p.h, &p.mu, &p.parser, line)
	if ps != nil && ps.st.result != nil {
		p.mu.Lock()
		if p.parser == ps {
			p.parser = nil
		}
		p.mu.Unlock()
		res, err := p.h.Errors().Outcome(ps.End(driver.Exit{}), driver.Exit{})
		interrupted := ps.st.result.IsError && driver.Contains(ps.st.result.Error, "operation cancelled")
		p.h.EndTurn(live.TurnEnd{Result: res, Err: err, Interrupted: interrupted})
	}
}

// canUseTool answers a can_use_tool request from qwen through the
// session's permission handling (control requests of other subtypes are
// refused as unsupported).
func (p *liveProto) canUseTool(c streamjson.Request) {
	r := c.CanUseTool()
	input := r.Input
	if r.ToolName == askTool {
		// The answers go back as the input's "answers" by the
		// question's index (qwen drops an empty answer); see hosttools.go.
		p.ctl.AskUserQuestion(p.h, p.qsem, c.ID, r.ToolUseID, input, func(i int, _ string) string { return strconv.Itoa(i) })
		return
	}
	name, kind := tools.Canonical(r.ToolName)
	pr := &agentcli.PermissionRequest{
		Tool:  agentcli.ToolUse{ID: r.ToolUseID, Name: name, RawName: r.ToolName, Kind: kind, Input: input},
		Title: r.ToolName,
		Options: []agentcli.PermissionOption{
			{ID: "allow_once", Kind: agentcli.AllowOnce, Name: "Allow"},
			{ID: "allow_always", Kind: agentcli.AllowAlways, Name: "Allow for this session"},
			{ID: "reject_once", Kind: agentcli.RejectOnce, Name: "Deny"},
		},
	}
	id := c.ID
	if _, host := p.host.Match(r.ToolName); p.pre != nil && p.hooks.HasPreToolUse() && !host {
		p.preToolUse(id, r.ToolName, pr) // hooks.go
		return
	}
	p.permission(id, r.ToolName, pr)
}

// permission decides the can_use_tool request id about pr (of qwen's
// tool raw) by the session's permission handling.
func (p *liveProto) permission(id, raw string, pr *agentcli.PermissionRequest) {
	input := pr.Tool.Input
	p.mu.Lock()
	always := p.always[raw]
	p.mu.Unlock()
	if always && driver.Judge(p.h.Request().AllowedTools, p.h.Request().DisallowedTools, &pr.Tool) != driver.VerdictRefuse {
		// Allowed for the rest of the session (qwen has no such answer
		// of its own: it takes every allow as once).
		p.ctl.Allow(id, input)
		return
	}
	p.h.Ask(pr, func(d agentcli.PermissionDecision) {
		if !d.Allowed() {
			p.ctl.Deny(id, d.Message)
			return
		}
		if d.Input != nil {
			// Never the original call in place of an edited one
			// (driver.NormalizeDecision refuses it already).
			p.ctl.Deny(id, driver.UnusableInputMessage)
			return
		}
		if d.Kind == agentcli.AllowAlways {
			p.mu.Lock()
			p.always[raw] = true
			p.mu.Unlock()
		}
		p.ctl.Allow(id, input)
	})
}
