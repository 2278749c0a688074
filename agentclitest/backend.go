package agentclitest

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Call scripts one call (one Run or Stream) of a scripted Backend.
type Call struct {
	// Events are yielded in order. A final EventResult is added from Result
	// when Result is set and Events does not end with one. As with the real
	// backends, a text block (EventText) or thinking block (EventThinking
	// without Delta) that no delta preceded is preceded by a synthesized
	// delta holding the whole block, so that a caller printing deltas
	// prints everything once. Under Request.DropRaw, events, results and
	// the Result of an *agentcli.ResultError in Err lose their Raw as
	// with the real backends (EventUnknown events, and the notices of
	// lines that did not parse, keep theirs), and likewise a Raw longer
	// than Request.MaxRawBytes.
	Events []agentcli.Event
	// Result is the call's final result.
	Result *agentcli.Result
	// Err, if set, ends the call after Events; Result's event is then not
	// yielded (a failed run has no result event). Like the real backends,
	// Run returns the Result of an *agentcli.ResultError with it.
	Err error
	// Delay is waited before each event, and before Err (or the end of a
	// call with no events, which makes a stall). The wait honours
	// the context and Request.Timeout like a real CLI run.
	Delay time.Duration
	// Ask lists the permission requests the call makes before its
	// events, in order, as a CLI asks before it runs a tool. Each is
	// decided as a real backend would under Request.Permission (the
	// Request.OnPermission callback under PermissionAsk, with the request's
	// deadline and the default refusal) and recorded; see
	// Backend.Decisions. A request without Options offers all four kinds.
	Ask []agentcli.PermissionRequest

	// PreToolUse lists tool calls put to Request.Hooks.PreToolUse after
	// Ask, in order, as a CLI would before running them; each answer is
	// recorded (Backend.HookDecisions). The other hooks are called as a
	// real backend calls them: UserPromptSubmit with the prompt before
	// anything else (its context is not recorded), PostToolUse with each
	// EventToolResult of a call announced by an EventToolUse, Stop with
	// the final result's text.
	PreToolUse []agentcli.ToolUse
	// Questions are put to Request.OnQuestion next, in order, as a CLI
	// asks (no OnQuestion: agentcli.NotAvailableMessage; an error or no
	// answer in time: agentcli.NoAnswerMessage); each yields an
	// EventToolUse (agentcli.ToolNameAskUserQuestion) and an
	// EventToolResult with what the model would be told, and is recorded
	// (Backend.Answers).
	Questions []agentcli.Question
	// HostCalls are calls of the request's host tools (Request.Tools),
	// made next, in order, as a real backend makes them: PreToolUse,
	// then the permission mode (Tool.Approved, PermissionBypass,
	// OnPermission under PermissionAsk, a refusal otherwise), then the
	// tool's handler (an error or a panic is an error result). Each
	// yields an EventToolUse named after the tool and an EventToolResult
	// with what the model would receive, before Events, and is recorded
	// (Backend.HostResults).
	HostCalls []HostCall
}

// Reply returns a Call that streams text in a few deltas, then a complete
// text event and a successful result in session.
func Reply(text, session string) Call {
	var evs []agentcli.Event
	evs = append(evs, agentcli.Event{Kind: agentcli.EventInit, SessionID: session})
	r := []rune(text)
	for i := 0; i < 3; i++ {
		part := string(r[i*len(r)/3 : (i+1)*len(r)/3])
		if part != "" {
			evs = append(evs, agentcli.Event{Kind: agentcli.EventTextDelta, SessionID: session, Text: part})
		}
	}
	evs = append(evs, agentcli.Event{Kind: agentcli.EventText, SessionID: session, Text: text})
	return Call{Events: evs, Result: &agentcli.Result{Text: text, SessionID: session}}
}

// Backend is an in-memory agentcli.Backend for testing code that uses
// agentcli, without any CLI or model. Each Run or Stream consumes the next
// scripted Call; every Request is recorded. It is safe for concurrent use.
//
// The zero value is ready to use: it has no script, so calls fail with
// ErrScriptExhausted unless Default is set.
type Backend struct {
	// BackendName is what Name reports; empty means "scripted".
	BackendName string
	// Caps is what Capabilities reports, and what requests are checked
	// against as a real backend checks them. With no PermissionModes the
	// scripted backend takes every mode, tool lists, host tools,
	// questions and hooks.
	Caps agentcli.Capabilities
	// Default, if set, answers calls once the script is exhausted.
	Default *Call
	// CheckErr is what Check returns.
	CheckErr error
	// ListedSessions are the sessions ListSessions reports (for any
	// directory), and those Request.Continue continues: the newest, or,
	// with none, the run fails with an error matching
	// agentcli.ErrNoSession, as on a real backend. Set it before the
	// backend is used.
	ListedSessions []agentcli.SessionInfo

	mu            sync.Mutex
	script        []Call
	requests      []agentcli.Request
	decisions     []Decision
	hostResults   []HostResult
	answers       []Answered
	hookDecisions []HookDecision
	switches      []Switch
}

// ErrScriptExhausted is returned by a scripted Backend with no Call left.
var ErrScriptExhausted = errors.New("agentclitest: no scripted call left")

// NewBackend returns a scripted Backend that answers calls in order.
func NewBackend(calls ...Call) *Backend {
	return &Backend{script: calls}
}

// Push appends calls to the script.
func (b *Backend) Push(calls ...Call) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.script = append(b.script, calls...)
}

// Requests returns a copy of every Request received so far, in order.
func (b *Backend) Requests() []agentcli.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.requests)
}

// Name implements agentcli.Backend.
func (b *Backend) Name() string {
	if b.BackendName == "" {
		return "scripted"
	}
	return b.BackendName
}

// Capabilities implements agentcli.Backend.
func (b *Backend) Capabilities() agentcli.Capabilities { return b.Caps }

// Check implements agentcli.Backend.
func (b *Backend) Check(ctx context.Context) error { return b.CheckErr }

// Run implements agentcli.Backend.
func (b *Backend) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	return driver.Collect(b.Name(), b.Stream(ctx, req))
}

// Stream implements agentcli.Backend. The request is recorded and the call
// consumed when iteration starts. The request is first checked exactly as
// a real backend checks it (the same code): an empty prompt, a Dir that
// does not exist, a NUL byte, a negative limit, an invalid MCP server or
// output schema, PermissionAsk without OnPermission, a permission mode not
// in Caps.PermissionModes fail as in production, with the
// *agentcli.RequestError or *agentcli.UnsupportedError a real backend
// returns, and consume no call. The rules particular to one CLI (the
// syntax of its session ids, of its tool rules) are not checked: the
// scripted backend has no CLI.
func (b *Backend) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	if req == nil {
		req = &agentcli.Request{}
	}
	return func(yield func(agentcli.Event, error) bool) {
		call, err := b.nextCall(req)
		if err != nil {
			yield(agentcli.Event{}, err)
			return
		}

		runCtx := ctx
		if req.Timeout > 0 {
			var cancel context.CancelFunc
			runCtx, cancel = context.WithTimeout(ctx, req.Timeout)
			defer cancel()
		}
		wait := func() error {
			if call.Delay <= 0 {
				return nil
			}
			t := time.NewTimer(call.Delay)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-runCtx.Done():
				if ctx.Err() != nil {
					return &agentcli.CanceledError{Backend: b.Name(), Err: context.Cause(ctx)}
				}
				return &agentcli.TimeoutError{Backend: b.Name(), Timeout: req.Timeout}
			}
		}
		hooks := driver.NewRunHooks(b.Name(), req)
		hooks.Prompt(runCtx, req.SessionID, req.Prompt)
		yield = hooks.Wrap(runCtx, yield)
		evs := withResult(slices.Clone(call.Events), call)
		if err := b.askAll(ctx, runCtx, nil, req, call.Ask); err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		evs = append(b.extras(runCtx, req, req.SessionID, call, hooks, driver.LocalHostTools(b.Name(), req, nil)), evs...)
		var synth driver.Deltas
		var out []agentcli.Event
		for _, ev := range evs {
			if err := wait(); err != nil {
				yield(agentcli.Event{}, err)
				return
			}
			out = synth.Apply(out[:0], ev)
			for _, ev := range out {
				ev = dropRaw(req, ev)
				driver.RelayText(req.OnText, ev)
				if !yield(ev, nil) {
					return
				}
			}
		}
		endCall(evs, call, wait, func(err error) error { return dropRawErr(req, err) }, yield)
	}
}

// endCall ends a call after its events were played: a call without events
// still waits out its Delay, and a scripted Err is yielded, through errf.
// It reports false when the wait failed (its error yielded instead).
func endCall(evs []agentcli.Event, call Call, wait func() error, errf func(error) error,
	yield func(agentcli.Event, error) bool) bool {
	if len(evs) == 0 || call.Err != nil {
		if err := wait(); err != nil {
			yield(agentcli.Event{}, err)
			return false
		}
	}
	if call.Err != nil {
		yield(agentcli.Event{}, errf(call.Err))
	}
	return true
}

// nextCall records req, checks it as a real backend does, and takes the
// script's next call (or Default) for it.
func (b *Backend) nextCall(req *agentcli.Request) (Call, error) {
	b.mu.Lock()
	b.requests = append(b.requests, *req)
	err := b.check(req, true)
	b.mu.Unlock()
	if err != nil {
		return Call{}, err
	}
	if _, err := b.continued(req); err != nil {
		return Call{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pop()
}

// pop takes the script's next call, or Default; b.mu is held.
func (b *Backend) pop() (Call, error) {
	switch {
	case len(b.script) > 0:
		call := b.script[0]
		b.script = b.script[1:]
		return call, nil
	case b.Default != nil:
		return *b.Default, nil
	}
	return Call{}, ErrScriptExhausted
}

// check validates req as a real backend does (driver.CheckRequest), with
// Caps as the backend's capabilities; no PermissionModes means every mode
// and tool lists.
func (b *Backend) check(req *agentcli.Request, oneShot bool) error {
	if err := driver.CheckRequest(b.Name(), b.caps(), req, oneShot); err != nil {
		return err
	}
	return b.loadAttachments(req, oneShot)
}

// caps returns Caps, or, when they are left unset (no PermissionModes),
// everything the scripted backend can do: every mode, tool lists (which
// decide answers), host tools, questions, hooks and session management.
func (b *Backend) caps() agentcli.Capabilities {
	caps := b.Caps
	if len(caps.PermissionModes) == 0 {
		// Capabilities left unset: everything the scripted backend can
		// do (every mode, tool lists, which decide answers from).
		caps.PermissionModes = driver.PermissionModes
		caps.ToolFilter = true
		caps.HostTools, caps.Questions = true, true
		caps.Attachments = allAttachments
		caps.Hooks = agentcli.HookSupport{PreToolUse: agentcli.HookAll, DenyReason: true, Rewrite: true, PostToolUse: true,
			PostOutput: true, UserPromptSubmit: true, Stop: true}
		all := agentcli.SessionModes{OneShot: true, Live: true}
		caps.ForkSession, caps.ContinueSession, caps.NewSessionID, caps.ListSessions = all, all, all, true
	}
	return caps
}

// dropRaw returns ev as a real backend yields it under req.DropRaw and
// req.MaxRawBytes: without a Raw (or its Result's Raw) longer than the
// run keeps, unless it is an EventUnknown or the notice of a line that did
// not parse. The script is left as it is.
func dropRaw(req *agentcli.Request, ev agentcli.Event) agentcli.Event {
	limit := driver.RawLimit(req)
	if len(ev.Raw) <= limit && (ev.Result == nil || len(ev.Result.Raw) <= limit) {
		return ev
	}
	if ev.Result != nil {
		r := *ev.Result
		ev.Result = &r
	}
	driver.CapRaw(&ev, limit)
	return ev
}

// dropRawErr returns err as a real backend returns it under req.DropRaw
// and req.MaxRawBytes: an *agentcli.ResultError's Result without a Raw
// longer than the run keeps. The script is left as it is.
func dropRawErr(req *agentcli.Request, err error) error {
	if rl, ok := err.(*agentcli.RateLimitError); ok {
		if inner := dropRawErr(req, rl.Err); inner != rl.Err {
			c := *rl
			c.Err = inner
			return &c
		}
		return err
	}
	re, ok := err.(*agentcli.ResultError)
	if !ok || re.Result == nil || len(re.Result.Raw) <= driver.RawLimit(req) {
		return err
	}
	c, r := *re, *re.Result
	r.Raw = nil
	c.Result = &r
	return &c
}
