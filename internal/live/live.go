// Package live runs a coding-agent CLI as a live session: one process that
// takes prompt after prompt on its stdin, with permission requests answered
// by the host and turns that can be interrupted without ending the session.
//
// The machinery here is shared by every backend: the process (through
// internal/proc: its own process group, the kill ladder, the stderr tail,
// lines without a 64 KiB limit), the turn state machine (one turn at a
// time, interrupt, timeout and cancellation), permission requests (mode,
// callback, deadline, default decision), Close (which never hangs), a CLI
// that dies (a typed error, and a dead session) and, for a request with an
// output schema, each turn's Result.StructuredOutput. A backend contributes a
// Proto: the CLI's wire protocol, which turns stdout lines into events and
// turn ends, and prompts and interrupts into stdin lines.
package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/evstream"
	"github.com/agentcli/agentcli/internal/permit"
	"github.com/agentcli/agentcli/internal/proc"
	"github.com/agentcli/agentcli/internal/runner"
	"github.com/agentcli/agentcli/internal/toolname"
)

// Proto is one CLI's live protocol. Start, Prompt and Interrupt are called
// from the goroutines of the session's user, Line from the session's
// reader goroutine; an implementation guards its own state.
type Proto interface {
	// Start runs the handshake once the process is running. Answers
	// arrive through Line meanwhile. It returns once the CLI is ready for
	// a first prompt, and should give up when ctx or Host.Done ends.
	Start(ctx context.Context) error
	// Line handles one line of the CLI's stdout (never empty), in order.
	// It must not block for long: events go to Host.Emit, the end of a
	// turn to Host.EndTurn, permission requests to Host.Ask.
	Line(line []byte)
	// Prompt sends prompt as the next turn. The turn has begun on the
	// session's side when it is called.
	Prompt(ctx context.Context, prompt string) error
	// Interrupt asks the CLI to end the current turn early. It need not
	// wait for the turn to end.
	Interrupt(ctx context.Context) error
	// Exit returns the error for a CLI that ended by itself (not through
	// Close), from how it ended.
	Exit(e runner.Exit) error
}

// Config describes a live session to start.
type Config struct {
	// Backend is the backend's name.
	Backend string
	// Path is the resolved CLI binary.
	Path string
	// Options are the backend's options, defaults filled in (kill grace,
	// line limit, stderr tail).
	Options agentcli.Options
	// Logger receives the session's log records; nil means none.
	Logger *slog.Logger
	// Args are the CLI's arguments.
	Args []string
	// Env is the CLI's complete environment.
	Env []string
	// Dir is the CLI's working directory ("" for the current one).
	Dir string
	// Request is the session's request; Prompt is ignored. Timeout bounds
	// each turn, OnText gets each turn's text, Permission, OnPermission
	// and PermissionTimeout govern permission requests.
	Request *agentcli.Request
	// Proto makes the CLI's protocol, bound to the session's Host.
	Proto func(h *Host) Proto
	// EditInput reports that the protocol can run a tool call with edited
	// input. When false, an allow decision that carries Input refuses the
	// call instead.
	EditInput bool
	// InterruptGrace is how long a turn may take to end after an
	// interrupt before the session is killed as unresponsive. Zero means
	// the kill grace period (Options.KillGrace, default 3 s).
	InterruptGrace time.Duration
	// Cleanup, if set, runs once the process has been reaped, on every
	// path (temporary files of the session).
	Cleanup func()
}

// DeniedMessage is the refusal message sent with a default or
// mode-imposed decision (see permit.DeniedMessage).
const DeniedMessage = permit.DeniedMessage

// ToolListMessage is the refusal message of a tool call that the
// request's tool lists do not allow.
const ToolListMessage = "The host does not allow this tool (Request.AllowedTools, DisallowedTools)."

// closeWait is how long Close waits for the CLI to exit by itself once its
// stdin is closed, before the kill ladder starts.
const closeWait = 300 * time.Millisecond

// maxQueued bounds the events waiting for a slow consumer of a turn;
// beyond it the reader waits (and with it, the CLI's output).
const maxQueued = 1 << 16

// Session is a live session. It implements agentcli.Session.
type Session struct {
	backend string
	log     *slog.Logger
	req     agentcli.Request
	mode    agentcli.PermissionMode
	permTO  time.Duration
	grace   time.Duration
	igrace  time.Duration
	maxLine int
	edit    bool
	cleanup func()

	p     *proc.Process
	proto Proto
	host  *Host

	ctx    context.Context // lives until the process is gone
	cancel context.CancelFunc

	slot    chan struct{} // held by the running turn
	askSem  chan struct{} // one permission callback at a time
	writeMu sync.Mutex

	mu        sync.Mutex
	id        string
	turn      *turn
	err       error // why the session ended; nil while alive
	closing   bool
	closeOnce sync.Once
	dead      chan struct{} // closed once the process is reaped
	escaped   []escapee     // the CLI's descendants outside its group, noted before a stop
}

var _ agentcli.Session = (*Session)(nil)

// Start starts the CLI and runs the protocol's handshake. ctx bounds the
// start only. On failure the process is gone when Start returns.
func Start(ctx context.Context, cfg Config) (*Session, error) {
	req := agentcli.Request{}
	if cfg.Request != nil {
		req = *cfg.Request
	}
	backend := cfg.Backend
	if err := ctx.Err(); err != nil {
		return nil, &agentcli.CanceledError{Backend: backend, Err: context.Cause(ctx)}
	}
	if err := permit.CheckMode(backend, req.Permission, nil); err != nil {
		return nil, err
	}
	path := cfg.Path
	o := cfg.Options
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	grace := o.KillGrace
	if grace <= 0 {
		grace = proc.DefaultKillGrace
	}
	if req.Permission == agentcli.PermissionAsk && req.OnPermission == nil {
		return nil, errors.New(backend + ": Request.Permission is ask but Request.OnPermission is nil")
	}
	s := &Session{
		backend: backend,
		log:     logger,
		req:     req,
		mode:    req.Permission,
		permTO:  req.PermissionTimeout,
		grace:   grace,
		igrace:  cfg.InterruptGrace,
		maxLine: o.MaxLineBytes,
		edit:    cfg.EditInput,
		cleanup: cfg.Cleanup,
		slot:    make(chan struct{}, 1),
		askSem:  make(chan struct{}, 1),
		dead:    make(chan struct{}),
		id:      req.SessionID,
	}
	if s.mode == "" {
		s.mode = agentcli.PermissionDeny // the zero value's meaning
	}
	if s.permTO <= 0 {
		s.permTO = agentcli.DefaultPermissionTimeout
	}
	if s.igrace <= 0 {
		s.igrace = grace
	}
	if s.maxLine <= 0 {
		s.maxLine = proc.DefaultMaxLine
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.host = &Host{s: s}
	s.proto = cfg.Proto(s.host)

	// The process outlives ctx: it is stopped by Close, not by the end of
	// the start.
	p, err := proc.Start(context.Background(), proc.Spec{
		Path:       path,
		Args:       cfg.Args,
		Dir:        cfg.Dir,
		Env:        cfg.Env,
		KeepStdin:  true,
		KillGrace:  o.KillGrace,
		MaxLine:    o.MaxLineBytes,
		StderrTail: o.StderrTailBytes,
	})
	if err != nil {
		s.cancel()
		if s.cleanup != nil {
			s.cleanup()
		}
		return nil, startError(backend, path, err)
	}
	s.p = p
	go s.read()

	herr := s.proto.Start(ctx)
	if herr == nil {
		select {
		case <-s.dead:
			herr = s.Err()
		default:
			return s, nil
		}
	}
	// The handshake failed. A CLI that died explains it better than the
	// protocol does (an unknown session, bad flags, no credentials); give
	// a dying one a moment to be reaped.
	select {
	case <-s.dead:
		if e := s.Err(); e != nil {
			herr = e
		}
	case <-time.After(time.Second):
	}
	if ctx.Err() != nil && !errors.Is(herr, agentcli.ErrCanceled) {
		herr = &agentcli.CanceledError{Backend: backend, Err: context.Cause(ctx)}
	}
	s.Close()
	return nil, herr
}

// startError maps an exec start failure to a *agentcli.BinaryError.
func startError(backend, path string, err error) error {
	kind := agentcli.ErrNotExecutable
	if errors.Is(err, fs.ErrNotExist) {
		kind = agentcli.ErrNotFound
		var pe *fs.PathError
		if errors.As(err, &pe) && errors.Is(pe.Err, syscall.ENOENT) && pe.Path == path {
			if _, serr := os.Stat(path); serr == nil {
				kind = agentcli.ErrNotExecutable // the interpreter is missing
			}
		}
	}
	return &agentcli.BinaryError{Backend: backend, Path: path, Err: kind, Cause: err}
}

// read is the reader goroutine: every stdout line goes to the protocol;
// at EOF the process is reaped and the session dies.
func (s *Session) read() {
	for {
		l, err := s.p.ReadLine()
		if err != nil {
			break
		}
		if l.TooLong > 0 {
			lerr := &agentcli.LineTooLongError{Limit: s.maxLine, Len: l.TooLong}
			s.host.Emit(agentcli.Event{Kind: agentcli.EventNotice, Err: lerr, Text: lerr.Error()})
			continue
		}
		if len(bytes.TrimSpace(l.Data)) == 0 {
			continue
		}
		s.proto.Line(l.Data)
	}
	exit := s.p.Wait()
	s.mu.Lock()
	closing := s.closing
	escaped := s.escaped
	s.mu.Unlock()
	killEscapees(escaped)
	var err error
	if closing {
		err = agentcli.ErrSessionClosed
	} else {
		err = s.proto.Exit(runner.Exit{Code: exit.Code, Stderr: exit.Stderr})
		if err == nil {
			err = &agentcli.NoResultError{Backend: s.backend, Code: exit.Code, Stderr: runner.Tail(exit.Stderr, 500)}
		}
	}
	if s.cleanup != nil {
		s.cleanup()
	}
	s.die(err)
}

// die records why the session ended and ends the running turn with it.
func (s *Session) die(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	err = s.err
	t := s.turn
	s.mu.Unlock()
	s.cancel()
	close(s.dead)
	if t != nil {
		t.end(TurnEnd{Err: err, dead: true})
	}
}

// ID implements agentcli.Session.
func (s *Session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Err implements agentcli.Session.
func (s *Session) Err() error {
	select {
	case <-s.dead:
	default:
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close implements agentcli.Session: it closes the CLI's stdin, gives it a
// moment to exit, then stops its process group (SIGTERM, SIGKILL after the
// kill grace period). It returns once the process is reaped, or at the
// latest after 0.3 s plus the kill grace period plus half a second
// (by then the whole group has been sent SIGKILL; what may be left is the
// draining of output held open by a process that left the group).
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		t := s.turn
		s.mu.Unlock()
		if t != nil {
			t.abort(reasonClose)
		}
		s.noteEscapees()
		if w := s.p.Stdin(); w != nil {
			w.Close()
		}
		select {
		case <-s.dead:
			return
		case <-time.After(closeWait):
		}
		s.p.Stop()
		select {
		case <-s.dead:
		case <-time.After(s.grace + 500*time.Millisecond):
		}
	})
	return nil
}

// kill stops the process because the session can no longer be trusted
// (a turn that did not end after an interrupt); the session dies with err.
func (s *Session) kill(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.noteEscapees()
	s.p.Stop()
}

// noteEscapees records the CLI's descendants that left its process group,
// to be killed once the CLI is gone.
func (s *Session) noteEscapees() {
	select {
	case <-s.dead:
		return
	default:
	}
	es := escapees(s.p.Pid(), s.p.Pid())
	s.mu.Lock()
	s.escaped = append(s.escaped, es...)
	s.mu.Unlock()
}

// send writes one line to the CLI's stdin.
func (s *Session) send(line []byte) error {
	w := s.p.Stdin()
	select {
	case <-s.dead:
		return s.closedErr()
	default:
	}
	if len(line) == 0 || line[len(line)-1] != '\n' {
		line = append(line[:len(line):len(line)], '\n')
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, err := w.Write(line); err != nil {
		return fmt.Errorf("%s: writing to the CLI: %w", s.backend, s.closedErrWith(err))
	}
	return nil
}

// closedErr is the error of an operation on a dead session: it matches
// ErrSessionClosed and the reason the session ended.
func (s *Session) closedErr() error {
	return s.closedErrWith(nil)
}

func (s *Session) closedErrWith(cause error) error {
	s.mu.Lock()
	reason := s.err
	s.mu.Unlock()
	if reason == nil {
		reason = cause
	}
	if reason == nil || errors.Is(reason, agentcli.ErrSessionClosed) {
		return agentcli.ErrSessionClosed
	}
	return &closedError{backend: s.backend, reason: reason}
}

// closedError reports a turn on a session that has ended.
type closedError struct {
	backend string
	reason  error
}

func (e *closedError) Error() string {
	return e.backend + ": session closed: " + e.reason.Error()
}

func (e *closedError) Unwrap() []error { return []error{agentcli.ErrSessionClosed, e.reason} }

// interruptedError reports a turn that ended early because it was
// interrupted.
type interruptedError struct {
	backend string
	// cause, when set, is why the session was killed as well.
	cause error
}

func (e *interruptedError) Error() string {
	s := e.backend + ": turn interrupted"
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

func (e *interruptedError) Unwrap() []error {
	if e.cause != nil {
		return []error{agentcli.ErrInterrupted, e.cause}
	}
	return []error{agentcli.ErrInterrupted}
}

// Run implements agentcli.Session.
func (s *Session) Run(ctx context.Context, prompt string) (*agentcli.Result, error) {
	return evstream.Collect(s.backend, s.Stream(ctx, prompt))
}

// Interrupt implements agentcli.Session. It returns once the turn has
// ended, or ctx is done. Without a running turn it returns nil at once.
func (s *Session) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	s.interrupt(t, reasonUser)
	select {
	case <-t.ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// interrupt ends t early for reason: pending permission requests get their
// default decision, the CLI is asked to stop, and a watchdog kills the
// session if the turn has not ended within the interrupt grace period.
func (s *Session) interrupt(t *turn, r reason) {
	select {
	case <-t.ended:
		return // over already: nothing to interrupt
	default:
	}
	if !t.abort(r) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, s.igrace)
		defer cancel()
		// Interrupt only what has been sent: the prompt first, and
		// nothing once the turn is over.
		select {
		case <-t.sent:
		case <-s.dead:
			return
		}
		select {
		case <-t.ended:
			return
		default:
		}
		if err := s.proto.Interrupt(ctx); err != nil {
			s.log.Debug("agentcli: interrupt failed", "backend", s.backend, "err", err)
		}
		select {
		case <-t.ended:
		case <-s.dead:
		case <-ctx.Done():
			select {
			case <-t.ended:
				return
			case <-s.dead:
				return
			default:
			}
			err := fmt.Errorf("%s: the CLI did not end the turn within %v of an interrupt; session killed", s.backend, s.igrace)
			s.kill(err)
		}
	}()
}

// reason says why a turn is being ended early.
type reason int

const (
	reasonNone    reason = iota
	reasonUser           // Session.Interrupt
	reasonBreak          // the consumer stopped iterating
	reasonCancel         // the turn's context ended
	reasonTimeout        // Request.Timeout expired
	reasonClose          // Session.Close
)

// TurnEnd is how a turn ended, as the protocol reports it.
type TurnEnd struct {
	// Result is the turn's result, when the CLI reported one.
	Result *agentcli.Result
	// Err is the turn's error (a *agentcli.ResultError for a failed turn),
	// or nil.
	Err error
	// Interrupted reports that the CLI says the turn was interrupted or
	// cancelled.
	Interrupted bool

	dead bool // the session died
}

// turn is one prompt and its events.
type turn struct {
	ctx    context.Context // ends when the turn is ended early
	cancel context.CancelFunc

	mu      sync.Mutex
	items   []item
	wake    chan struct{} // signalled when items grow
	space   chan struct{} // signalled when items shrink
	reason  reason
	endOnce sync.Once
	ended   chan struct{} // closed by end
	gone    chan struct{} // closed when the consumer stopped reading
	sent    chan struct{} // closed once the prompt has been sent (or failed)
}

type item struct {
	ev  agentcli.Event
	end *TurnEnd
}

func newTurn(parent context.Context) *turn {
	t := &turn{
		wake:  make(chan struct{}, 1),
		space: make(chan struct{}, 1),
		ended: make(chan struct{}),
		gone:  make(chan struct{}),
		sent:  make(chan struct{}),
	}
	t.ctx, t.cancel = context.WithCancel(parent)
	return t
}

// abort records the first reason to end t early and cancels its context.
// It reports whether this call was the first.
func (t *turn) abort(r reason) bool {
	t.mu.Lock()
	first := t.reason == reasonNone
	if first {
		t.reason = r
	}
	t.mu.Unlock()
	t.cancel()
	return first
}

func (t *turn) why() reason {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reason
}

// push queues an item for the consumer. It waits while the queue is full,
// unless the consumer has gone or the session is dead.
func (t *turn) push(it item, dead <-chan struct{}) {
	for {
		t.mu.Lock()
		if len(t.items) < maxQueued || it.end != nil {
			t.items = append(t.items, it)
			t.mu.Unlock()
			select {
			case t.wake <- struct{}{}:
			default:
			}
			return
		}
		t.mu.Unlock()
		select {
		case <-t.space:
		case <-t.gone:
			return
		case <-dead:
			return
		}
	}
}

// pop takes all queued items.
func (t *turn) pop() []item {
	t.mu.Lock()
	its := t.items
	t.items = nil
	t.mu.Unlock()
	select {
	case t.space <- struct{}{}:
	default:
	}
	return its
}

// end queues the turn's end; only the first end counts.
func (t *turn) end(e TurnEnd) {
	t.endOnce.Do(func() {
		t.mu.Lock()
		t.items = append(t.items, item{end: &e})
		t.mu.Unlock()
		close(t.ended)
		select {
		case t.wake <- struct{}{}:
		default:
		}
	})
}

// Stream implements agentcli.Session.
func (s *Session) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		start := time.Now()
		select {
		case s.slot <- struct{}{}:
		case <-ctx.Done():
			yield(agentcli.Event{}, &agentcli.CanceledError{Backend: s.backend, Err: context.Cause(ctx)})
			return
		case <-s.dead:
			yield(agentcli.Event{}, s.closedErr())
			return
		}
		defer func() { <-s.slot }()
		if err := ctx.Err(); err != nil {
			yield(agentcli.Event{}, &agentcli.CanceledError{Backend: s.backend, Err: context.Cause(ctx)})
			return
		}

		s.mu.Lock()
		if s.err != nil || s.closing {
			s.mu.Unlock()
			yield(agentcli.Event{}, s.closedErr())
			return
		}
		t := newTurn(s.ctx)
		s.turn = t
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if s.turn == t {
				s.turn = nil
			}
			s.mu.Unlock()
			t.cancel()
		}()

		// Cancellation and the per-turn timeout interrupt the turn.
		var timeout <-chan time.Time
		if s.req.Timeout > 0 {
			tm := time.NewTimer(s.req.Timeout)
			defer tm.Stop()
			timeout = tm.C
		}
		go func() {
			select {
			case <-ctx.Done():
				s.interrupt(t, reasonCancel)
			case <-timeout:
				s.interrupt(t, reasonTimeout)
			case <-t.ended:
			case <-s.dead:
			}
		}()

		err := s.proto.Prompt(t.ctx, prompt)
		close(t.sent)
		if err != nil {
			select {
			case <-s.dead:
				// The CLI died: its error ends the turn (queued by die).
			default:
				t.end(TurnEnd{Err: err})
				s.kill(err)
			}
		}

		var synth evstream.Deltas
		var out []agentcli.Event
		for {
			its := t.pop()
			if len(its) == 0 {
				<-t.wake
				continue
			}
			for _, it := range its {
				if it.end != nil {
					res, err := s.finish(t, it.end, ctx)
					if err != nil {
						yield(agentcli.Event{}, err)
						return
					}
					res.Duration = time.Since(start)
					yield(agentcli.Event{Kind: agentcli.EventResult, SessionID: res.SessionID, Result: res, Raw: res.Raw}, nil)
					return
				}
				out = synth.Apply(out[:0], it.ev)
				broke := false
				for _, ev := range out {
					evstream.Relay(s.req.OnText, ev)
					if !yield(ev, nil) {
						broke = true
						break
					}
				}
				if broke {
					close(t.gone)
					s.interrupt(t, reasonBreak)
					select {
					case <-t.ended:
					case <-s.dead:
					}
					return
				}
			}
		}
	}
}

// finish turns a turn's end into its outcome.
func (s *Session) finish(t *turn, e *TurnEnd, ctx context.Context) (*agentcli.Result, error) {
	r := t.why()
	if e.dead {
		if r == reasonClose || errors.Is(e.Err, agentcli.ErrSessionClosed) {
			return nil, agentcli.ErrSessionClosed
		}
		s.mu.Lock()
		killed := s.err
		s.mu.Unlock()
		if r != reasonNone && killed != nil {
			// Killed by the interrupt watchdog.
			return nil, s.earlyError(r, ctx, killed)
		}
		return nil, e.Err
	}
	if e.Interrupted || r != reasonNone {
		// Once a turn is being ended early, it ends as such, whatever
		// the CLI made of it (an agent may end a turn normally when its
		// pending permission request is cancelled).
		return nil, s.earlyError(r, ctx, nil)
	}
	if e.Err != nil {
		return e.Result, e.Err
	}
	if e.Result == nil {
		return nil, &agentcli.NoResultError{Backend: s.backend}
	}
	if e.Result.SessionID == "" {
		e.Result.SessionID = s.ID()
	}
	if len(s.req.OutputSchema) > 0 {
		// The turn's answer must be the JSON value the schema asks for,
		// as a one-shot run's must.
		if err := runner.Structured(e.Result); err != nil {
			var re *agentcli.ResultError
			if errors.As(err, &re) {
				re.Backend = s.backend
				e.Result.IsError = true
			}
			return e.Result, err
		}
	}
	return e.Result, nil
}

// earlyError is the error of a turn ended early for reason r.
func (s *Session) earlyError(r reason, ctx context.Context, cause error) error {
	switch r {
	case reasonCancel:
		return &agentcli.CanceledError{Backend: s.backend, Err: context.Cause(ctx)}
	case reasonTimeout:
		return &agentcli.TimeoutError{Backend: s.backend, Timeout: s.req.Timeout}
	case reasonClose:
		return agentcli.ErrSessionClosed
	}
	return &interruptedError{backend: s.backend, cause: cause}
}

// Host is what a Proto may do with its session. Its methods are safe for
// concurrent use.
type Host struct {
	s *Session
}

// Backend returns the backend's name.
func (h *Host) Backend() string { return h.s.backend }

// Request returns the session's request (a copy; do not modify).
func (h *Host) Request() *agentcli.Request { return &h.s.req }

// Logger returns the backend's logger.
func (h *Host) Logger() *slog.Logger { return h.s.log }

// Send writes one line (a newline is added when missing) to the CLI's
// stdin. It fails once the session is dead.
func (h *Host) Send(line []byte) error { return h.s.send(line) }

// Done is closed when the process has been reaped.
func (h *Host) Done() <-chan struct{} { return h.s.dead }

// Err returns why the session ended, or nil.
func (h *Host) Err() error { return h.s.Err() }

// SetSessionID records the CLI's session id.
func (h *Host) SetSessionID(id string) {
	if id == "" {
		return
	}
	h.s.mu.Lock()
	h.s.id = id
	h.s.mu.Unlock()
}

// InTurn reports whether a turn is running.
func (h *Host) InTurn() bool {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.turn != nil
}

// Aborted reports whether the running turn is being ended early
// (interrupted, cancelled, timed out or closed).
func (h *Host) Aborted() bool {
	h.s.mu.Lock()
	t := h.s.turn
	h.s.mu.Unlock()
	return t != nil && t.why() != reasonNone
}

// Emit delivers ev to the running turn; without one it is dropped.
func (h *Host) Emit(ev agentcli.Event) {
	h.s.mu.Lock()
	t := h.s.turn
	h.s.mu.Unlock()
	if t == nil {
		return
	}
	t.push(item{ev: ev}, h.s.dead)
}

// EndTurn ends the running turn; without one it does nothing.
func (h *Host) EndTurn(e TurnEnd) {
	h.s.mu.Lock()
	t := h.s.turn
	h.s.mu.Unlock()
	if t != nil {
		e.dead = false
		t.end(e)
	}
}

// Ask decides a permission request according to the session's permission
// mode and callback, and calls answer exactly once with the decision, from
// another goroutine or before Ask returns. The decision's Kind is one of
// the request's Options when it has any (see Normalize).
func (h *Host) Ask(pr *agentcli.PermissionRequest, answer func(agentcli.PermissionDecision)) {
	s := h.s
	if pr.SessionID == "" {
		pr.SessionID = s.ID()
	}
	// The tool lists come first, in every mode: a listed tool is approved
	// in advance, any other refused (the CLI's own configuration holds
	// the lists too, where it can; see each backend).
	switch toolname.Judge(s.req.AllowedTools, s.req.DisallowedTools, &pr.Tool) {
	case toolname.Allow:
		answer(permit.Normalize(pr.Options, agentcli.PermissionDecision{Kind: agentcli.AllowOnce}, true))
		return
	case toolname.Refuse:
		answer(permit.Normalize(pr.Options, agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: ToolListMessage}, false))
		return
	}
	switch s.mode {
	case agentcli.PermissionBypass:
		answer(permit.Normalize(pr.Options, agentcli.PermissionDecision{Kind: agentcli.AllowOnce}, true))
		return
	case agentcli.PermissionAsk:
		if s.req.OnPermission != nil {
			break
		}
		fallthrough
	default: // deny, plan: whatever would ask is refused
		answer(permit.Normalize(pr.Options, agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: DeniedMessage}, false))
		return
	}
	parent := s.ctx
	s.mu.Lock()
	if s.turn != nil {
		parent = s.turn.ctx
	}
	s.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(parent, s.permTO)
		defer cancel()
		d := agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: DeniedMessage}
		select {
		case s.askSem <- struct{}{}:
			d = s.callback(ctx, pr)
			<-s.askSem
		case <-ctx.Done():
		}
		answer(permit.Normalize(pr.Options, d, s.edit))
	}()
}

// callback runs the user's permission function; when ctx ends first, the
// default decision (refuse) applies. A panic in the callback refuses too.
func (s *Session) callback(ctx context.Context, pr *agentcli.PermissionRequest) agentcli.PermissionDecision {
	def := agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: DeniedMessage}
	ch := make(chan agentcli.PermissionDecision, 1)
	cp := *pr
	cp.Options = append([]agentcli.PermissionOption(nil), pr.Options...)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				s.log.Warn("agentcli: permission callback panicked; refusing the tool call", "backend", s.backend, "panic", fmt.Sprint(r))
				ch <- def
			}
		}()
		ch <- s.req.OnPermission(ctx, &cp)
	}()
	select {
	case d := <-ch:
		if ctx.Err() != nil {
			return def // decided too late
		}
		return d
	case <-ctx.Done():
		return def
	}
}

// ErrorResult returns the outcome of a failed turn that has no typed error
// of its own: a *agentcli.ResultError with msg (secrets redacted, bounded)
// and its classification.
func ErrorResult(backend string, res *agentcli.Result, subtype, msg string) error {
	if res == nil {
		res = &agentcli.Result{}
	}
	res.IsError = true
	msg = runner.Tail(msg, 500)
	return &agentcli.ResultError{
		Backend: backend,
		Subtype: subtype,
		Message: msg,
		Kind:    runner.Classify(backend, msg),
		Result:  res,
	}
}

// ProtocolError reports a request the CLI answered with an error during
// the session's handshake or a turn. It matches Kind (for example
// agentcli.ErrSessionNotFound) when the message says so.
type ProtocolError struct {
	Backend string
	// Method is the request that failed.
	Method string
	// Code is the JSON-RPC error code, when there is one.
	Code int
	// Message is the CLI's error message (secrets redacted).
	Message string
	// Kind is agentcli.ErrSessionNotFound, ErrAuth, ErrRateLimited or nil.
	Kind error
}

func (e *ProtocolError) Error() string {
	s := fmt.Sprintf("%s: %s failed", e.Backend, e.Method)
	if e.Kind != nil {
		s += " (" + e.Kind.Error() + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *ProtocolError) Unwrap() error { return e.Kind }

// NewProtocolError builds a *ProtocolError, classifying msg.
func NewProtocolError(backend, method string, code int, msg string) *ProtocolError {
	msg = runner.Tail(msg, 500)
	return &ProtocolError{Backend: backend, Method: method, Code: code, Message: msg, Kind: runner.Classify(backend, msg)}
}
