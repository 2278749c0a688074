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

// Decision is a permission request a scripted call made (Call.Ask) and how
// it was answered.
type Decision struct {
	// Request is the request as the callback saw it.
	Request agentcli.PermissionRequest
	// Decision is the answer, normalized the way a real backend answers:
	// its Kind is one of the request's options.
	Decision agentcli.PermissionDecision
	// Default reports that the default decision (refuse) applied because
	// the callback did not answer before the request's deadline, or the
	// turn was interrupted or cancelled first.
	Default bool
}

// Decisions returns every permission request scripted calls made so far,
// with its answer, in order.
func (b *Backend) Decisions() []Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.decisions)
}

// allOptions are offered by a scripted request that lists none.
var allOptions = []agentcli.PermissionOption{
	{ID: "allow_once", Kind: agentcli.AllowOnce, Name: "Allow"},
	{ID: "allow_always", Kind: agentcli.AllowAlways, Name: "Always allow"},
	{ID: "reject_once", Kind: agentcli.RejectOnce, Name: "Reject"},
	{ID: "reject_always", Kind: agentcli.RejectAlways, Name: "Always reject"},
}

// askAll decides the scripted permission requests of a call, in order.
// ctx is the caller's context, runCtx the turn's (which may end earlier:
// timeout, interrupt); turnErr, when set, gives the error of a runCtx
// that ended for a reason of its own. It fails only when runCtx ends.
func (b *Backend) askAll(ctx, runCtx context.Context, turnErr func() error, req *agentcli.Request, asks []agentcli.PermissionRequest) error {
	for _, a := range asks {
		pr := a
		pr.Options = slices.Clone(pr.Options)
		if len(pr.Options) == 0 {
			pr.Options = slices.Clone(allOptions)
		}
		if pr.Tool.Name != "" && pr.Tool.Kind == "" {
			pr.Tool.Kind = driver.KindOf(pr.Tool.Name)
		}
		d, dflt := b.decide(runCtx, req, &pr)
		b.mu.Lock()
		b.decisions = append(b.decisions, Decision{Request: pr, Decision: d, Default: dflt})
		b.mu.Unlock()
		if runCtx.Err() != nil {
			if turnErr != nil {
				if err := turnErr(); err != nil {
					return err
				}
			}
			if ctx.Err() != nil {
				return &agentcli.CanceledError{Backend: b.Name(), Err: context.Cause(ctx)}
			}
			return &agentcli.TimeoutError{Backend: b.Name(), Timeout: req.Timeout}
		}
	}
	return nil
}

// decide answers one request as a real backend does under req's tool
// lists and permission mode (the zero value refuses).
func (b *Backend) decide(ctx context.Context, req *agentcli.Request, pr *agentcli.PermissionRequest) (agentcli.PermissionDecision, bool) {
	refuse := agentcli.PermissionDecision{Kind: agentcli.RejectOnce}
	norm := func(d agentcli.PermissionDecision) agentcli.PermissionDecision {
		return driver.NormalizeDecision(pr.Options, d, b.Caps.EditInput)
	}
	// The tool lists first, in every mode, as a real backend does.
	switch driver.Judge(req.AllowedTools, req.DisallowedTools, &pr.Tool) {
	case driver.VerdictAllow:
		return norm(agentcli.PermissionDecision{Kind: agentcli.AllowOnce}), false
	case driver.VerdictRefuse:
		return norm(refuse), false
	}
	switch req.Permission {
	case agentcli.PermissionBypass:
		return norm(agentcli.PermissionDecision{Kind: agentcli.AllowOnce}), false
	case agentcli.PermissionAsk:
		if req.OnPermission == nil {
			return norm(refuse), true
		}
	default:
		return norm(refuse), false
	}
	timeout := req.PermissionTimeout
	if timeout <= 0 {
		timeout = agentcli.DefaultPermissionTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ch := make(chan agentcli.PermissionDecision, 1)
	cp := *pr
	cp.Options = slices.Clone(pr.Options)
	go func() {
		defer func() {
			if recover() != nil {
				ch <- refuse
			}
		}()
		ch <- req.OnPermission(ctx, &cp)
	}()
	select {
	case d := <-ch:
		if ctx.Err() != nil {
			return norm(refuse), true
		}
		return norm(d), false
	case <-ctx.Done():
		return norm(refuse), true
	}
}

// StartSession implements driver.SessionStarter: a scripted live
// session. Each turn consumes the next scripted Call, like Run, and is
// recorded in Requests as req with the turn's prompt. A turn can be
// interrupted (it ends with an error matching agentcli.ErrInterrupted, and
// its pending permission requests get the default decision); a Call whose
// Err is an *agentcli.ExitError ends the session as a crashed CLI would
// (Err reports it, later turns fail with agentcli.ErrSessionClosed).
// The request is checked as a real backend checks it (see Stream), its
// prompt aside: as the real backends do, StartSession runs no turn, so a
// non-empty req.Prompt is an *agentcli.RequestError; each turn's prompt
// is checked too (an empty one is an *agentcli.RequestError). StartSession
// fails with an *agentcli.UnsupportedError when Caps lists permission
// modes and req.Permission is not among them.
func (b *Backend) StartSession(ctx context.Context, req *agentcli.Request) (agentcli.Session, error) {
	if req == nil {
		req = &agentcli.Request{}
	}
	if err := ctx.Err(); err != nil {
		return nil, &agentcli.CanceledError{Backend: b.Name(), Err: context.Cause(ctx)}
	}
	// In the real backends' order: the prompt, then the rest.
	if err := driver.CheckSessionPrompt(b.Name(), req); err != nil {
		return nil, err
	}
	if err := b.check(req, false); err != nil {
		return nil, err
	}
	id := req.SessionID
	if cont, err := b.continued(req); err != nil {
		return nil, err
	} else if cont != "" {
		id = cont
	}
	switch {
	case req.NewSessionID != "":
		id = req.NewSessionID
	case req.ForkSession:
		id = "" // the fork's is new: until a turn reports it
	}
	s := &scriptedSession{b: b, req: *req, id: id, slot: make(chan struct{}, 1), closed: make(chan struct{})}
	// Like a real session's, the hooks and the host tools' state (an
	// "allow always") last for the whole session.
	s.hooks = driver.NewRunHooks(b.Name(), req)
	s.host = driver.LocalHostTools(b.Name(), req, nil) // extras calls PreToolUse
	return s, nil
}

// scriptedSession is the agentcli.Session of a scripted Backend.
type scriptedSession struct {
	b     *Backend
	req   agentcli.Request
	slot  chan struct{}
	hooks *driver.RunHooks
	host  *driver.HostTools

	mu        sync.Mutex
	id        string
	err       error
	turn      *scriptedTurn
	closeOnce sync.Once
	closed    chan struct{}
	steer     *steerQueue // the running Stream's steered input (switch.go)
}

type scriptedTurn struct {
	cancel context.CancelFunc

	mu     sync.Mutex
	reason error // why the turn was ended early
}

func (t *scriptedTurn) stop(reason error) {
	t.mu.Lock()
	if t.reason == nil {
		t.reason = reason
	}
	t.mu.Unlock()
	t.cancel()
}

func (t *scriptedTurn) why() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reason
}

// errInterrupted is the error of an interrupted scripted turn.
type errInterrupted struct{ backend string }

func (e *errInterrupted) Error() string { return e.backend + ": turn interrupted" }
func (e *errInterrupted) Unwrap() error { return agentcli.ErrInterrupted }

// errClosed is the error of a turn on a session that has ended.
type errClosed struct{ reason error }

func (e *errClosed) Error() string   { return "session closed: " + e.reason.Error() }
func (e *errClosed) Unwrap() []error { return []error{agentcli.ErrSessionClosed, e.reason} }

func (s *scriptedSession) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

func (s *scriptedSession) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *scriptedSession) closedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil || errors.Is(s.err, agentcli.ErrSessionClosed) {
		return agentcli.ErrSessionClosed
	}
	return &errClosed{reason: s.err}
}

func (s *scriptedSession) Run(ctx context.Context, prompt string) (*agentcli.Result, error) {
	return driver.Collect(s.b.Name(), s.Stream(ctx, prompt))
}

func (s *scriptedSession) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	// The scripted CLI acknowledges at once; the turn's Stream ends
	// with the interrupted error as soon as its consumer reads on.
	t.stop(&errInterrupted{backend: s.b.Name()})
	return nil
}

func (s *scriptedSession) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		if s.err == nil {
			s.err = agentcli.ErrSessionClosed
		}
		t := s.turn
		s.mu.Unlock()
		close(s.closed)
		if t != nil {
			t.stop(agentcli.ErrSessionClosed)
		}
	})
	return nil
}

// take consumes the next scripted call.
func (b *Backend) take(req agentcli.Request) (Call, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests = append(b.requests, req)
	return b.pop()
}

func (s *scriptedSession) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	return s.stream(ctx, prompt, nil)
}

// stream is Stream with a turn's attachments, loaded (see StreamTurn).
func (s *scriptedSession) stream(ctx context.Context, prompt string, atts []agentcli.Attachment) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		name := s.b.Name()
		if err := driver.CheckPrompt(name, prompt); err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		if err := s.acquire(ctx); err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		defer func() { <-s.slot }()
		if err := driver.CheckPrompt(name, prompt); err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		start := time.Now()
		t, runCtx, endTurn := s.beginTurn(ctx)
		defer endTurn()
		req := s.turnRequest(prompt, atts)
		// ended returns the error of a turn ended early, or nil.
		ended := func() error {
			if r := t.why(); r != nil {
				return r
			}
			if ctx.Err() != nil {
				return &agentcli.CanceledError{Backend: name, Err: context.Cause(ctx)}
			}
			return nil
		}
		sq := s.startSteer()
		defer s.endSteer(sq)
		var prev *agentcli.Result
		for first := true; ; first = false {
			call, err := s.b.take(req)
			if err != nil {
				yield(agentcli.Event{}, err)
				return
			}
			if first {
				s.hooks.Prompt(runCtx, req.SessionID, prompt)
				yield = s.hooks.Wrap(runCtx, yield)
			}
			wait := func() error {
				if call.Delay > 0 {
					tm := time.NewTimer(call.Delay)
					defer tm.Stop()
					select {
					case <-tm.C:
					case <-runCtx.Done():
					}
				}
				return ended()
			}
			if err := s.b.askAll(ctx, runCtx, ended, &req, call.Ask); err != nil {
				yield(agentcli.Event{}, err)
				return
			}
			evs := s.b.extras(runCtx, &req, req.SessionID, call, s.hooks, s.host)
			evs = withResult(append(evs, call.Events...), call)
			next, ok := s.play(evs, wait, sq, &prev, start, yield)
			if !ok {
				return
			}
			if next != "" {
				s.mu.Lock()
				model, mode := s.req.Model, s.req.Permission
				s.mu.Unlock()
				req.Prompt, req.Model, req.Permission = next, model, mode
				continue
			}
			if endCall(evs, call, wait, s.callErr, yield) {
				s.dropSteer(sq)
			}
			return
		}
	}
}

// acquire waits for the session's turn slot; the caller releases it
// (<-s.slot) when the error is nil.
func (s *scriptedSession) acquire(ctx context.Context) error {
	select {
	case s.slot <- struct{}{}:
	case <-ctx.Done():
		return &agentcli.CanceledError{Backend: s.b.Name(), Err: context.Cause(ctx)}
	case <-s.closed:
		return s.closedErr()
	}
	if s.Err() != nil {
		<-s.slot
		return s.closedErr()
	}
	return nil
}

// withResult appends call's Result as the last event when the call has
// one and its events do not end with one.
func withResult(evs []agentcli.Event, call Call) []agentcli.Event {
	if call.Result != nil && call.Err == nil && (len(evs) == 0 || evs[len(evs)-1].Kind != agentcli.EventResult) {
		r := *call.Result
		evs = append(evs, agentcli.Event{Kind: agentcli.EventResult, SessionID: r.SessionID, Result: &r})
	}
	return evs
}

// play yields one call's events, each after wait: a result that steered
// input follows is kept in prev (one result for both) and the steered
// prompt returned as next. ok is false when the turn ended (an error
// yielded, or the consumer stopped).
func (s *scriptedSession) play(evs []agentcli.Event, wait func() error, sq *steerQueue, prev **agentcli.Result,
	start time.Time, yield func(agentcli.Event, error) bool) (next string, ok bool) {
	var synth driver.Deltas
	var out []agentcli.Event
	for _, ev := range evs {
		if err := wait(); err != nil {
			yield(agentcli.Event{}, err)
			return "", false
		}
		if ev.Kind == agentcli.EventResult && ev.Result != nil {
			r := *ev.Result
			if p, ok := s.nextSteer(sq); ok {
				// Steered input follows: one result for both.
				*prev = driver.MergeSteered(*prev, &r)
				return p, true
			}
			ev.Result = driver.MergeSteered(*prev, &r)
			if ev.Result.Duration == 0 {
				ev.Result.Duration = time.Since(start)
			}
		}
		if ev.SessionID != "" {
			s.mu.Lock()
			s.id = ev.SessionID
			s.mu.Unlock()
		}
		out = synth.Apply(out[:0], ev)
		for _, ev := range out {
			ev = dropRaw(&s.req, ev)
			driver.RelayText(s.req.OnText, ev)
			if !yield(ev, nil) {
				return "", false // breaking out ends the turn, as an interrupt does
			}
		}
	}
	return "", true
}

// turnRequest is the request of a turn: the session's, with what SetModel
// and SetPermission switched, and the turn's prompt and attachments.
func (s *scriptedSession) turnRequest(prompt string, atts []agentcli.Attachment) agentcli.Request {
	s.mu.Lock()
	req := s.req
	s.mu.Unlock()
	req.Prompt = prompt
	req.Attachments = atts
	req.SessionID = s.ID()
	return req
}

// callErr is the error a scripted call ends its turn with; a CLI's exit
// (an *agentcli.ExitError) also ends the session.
func (s *scriptedSession) callErr(err error) error {
	var ee *agentcli.ExitError
	if errors.As(err, &ee) {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	return dropRawErr(&s.req, err)
}

// beginTurn makes the session's running turn, which the request's
// Timeout stops; endTurn ends it.
func (s *scriptedSession) beginTurn(ctx context.Context) (t *scriptedTurn, runCtx context.Context, endTurn func()) {
	runCtx, cancel := context.WithCancel(ctx)
	t = &scriptedTurn{cancel: cancel}
	s.mu.Lock()
	s.turn = t // before the request is recorded: a test may interrupt on seeing it
	s.mu.Unlock()
	stopTimer := func() bool { return false }
	if d := s.req.Timeout; d > 0 {
		tm := time.AfterFunc(d, func() {
			t.stop(&agentcli.TimeoutError{Backend: s.b.Name(), Timeout: d})
		})
		stopTimer = tm.Stop
	}
	return t, runCtx, func() {
		stopTimer()
		s.mu.Lock()
		s.turn = nil
		s.mu.Unlock()
		cancel()
	}
}
