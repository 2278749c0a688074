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
	"iter"
	"log/slog"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/wirelog"
	"github.com/agentcli/agentcli/internal/proc"
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
	// turn to Host.EndTurn, permission requests to Host.Ask, answers to
	// the CLI's requests to Host.Post.
	Line(line []byte)
	// Prompt sends prompt as the next turn and returns once it is sent
	// (not when the CLI has answered it: the turn's end comes through
	// Line). The turn has begun on the session's side when it is called;
	// ctx ends when the turn is ended early. An error ends the turn.
	Prompt(ctx context.Context, prompt string) error
	// Interrupt asks the CLI to end the current turn early. It need not
	// wait for the turn to end; it should give up when ctx ends.
	Interrupt(ctx context.Context) error
	// Exit returns the error for a CLI that ended by itself (not through
	// Close), from how it ended, or nil for the session's own: an
	// *agentcli.ExitError, or an *agentcli.NoResultError after exit
	// status 0 (Host.Errors().Exited).
	Exit(e driver.Exit) error
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
	// Logger receives the session's log records; nil means none. Pass a
	// redacting logger: records carry what the CLI said.
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
	// Options.InterruptGrace, and DefaultInterruptGrace when that is zero
	// too. It is not the kill grace period (Options.KillGrace): a CLI
	// that is alive and well can take seconds to end a turn on a busy
	// machine (opencode took 2.3 s under load), and killing the session
	// then loses it where an interrupted turn was asked for.
	InterruptGrace time.Duration
	// Cleanup, if set, runs once the process has been reaped, on every
	// path (temporary files of the session).
	Cleanup func()
	// Wire, if set, records the session (see driver/wirelog); its start
	// record is written already.
	Wire *wirelog.Writer
	// Redactor, if set, removes secrets from the stderr tail Wire records
	// and from the error the session keeps (Session.Err), before other
	// goroutines can see it.
	Redactor Redactor
	// HostTools, if set, are the run's host tools (driver.Run.HostTools):
	// a permission request about one of them is allowed at once, in
	// every mode and whatever the tool lists say, since agentcli decides
	// each call of its own server itself.
	HostTools *driver.HostTools
	// Hooks, if set, are the run's hooks (driver.Run.Hooks). When
	// PreToolUse goes through the permission path (RunHooks.AskAll), each
	// permission request is first put to PreToolUse: a refusal refuses
	// it with the hook's reason (and tells the Proto, when it implements
	// HookDenier), a changed input is an edit (refused where the
	// protocol cannot apply one, EditInput false); then the tool lists
	// and the permission mode decide as usual.
	Hooks *driver.RunHooks
	// Errors builds the session's typed errors (the run's, Run.Errors):
	// a turn's failure, a CLI that died, an answer that is not the JSON
	// its output schema asks for. Nil means errors of a backend named
	// Backend that know no wording of its own, redacted as this
	// process's environment says.
	Errors *driver.Errors
}

// HookDenier is implemented by a Proto that can tell the model why
// PreToolUse refused a call, where the answer to the permission request
// cannot carry a message (codex: a steer of the running turn).
type HookDenier interface {
	// HookDenied is called after the refusal of pr was answered.
	HookDenied(pr *agentcli.PermissionRequest, reason string)
}

// Redactor removes secrets from text and, in place, from errors (see
// driver.Redactor).
type Redactor interface {
	Redact(s string) string
	Error(err error) error
}

// DeniedMessage is the refusal message sent with a default or
// mode-imposed decision (see driver.DeniedMessage).
const DeniedMessage = driver.DeniedMessage

// ToolListMessage is the refusal message of a tool call that the
// request's tool lists do not allow.
const ToolListMessage = "The host does not allow this tool (Request.AllowedTools, DisallowedTools)."

// DefaultInterruptGrace is how long a turn may take to end after an
// interrupt, when neither Config.InterruptGrace nor
// Options.InterruptGrace says: long enough for a CLI on a loaded machine
// to end its turn, short enough that an unresponsive one is killed.
const DefaultInterruptGrace = 10 * time.Second

// closeWait is how long Close waits for the CLI to exit by itself once its
// stdin is closed, before the kill ladder starts.
const closeWait = 300 * time.Millisecond

// maxQueued bounds the events waiting for a slow consumer of a turn;
// beyond it the reader waits (and with it, the CLI's output).
const maxQueued = 1 << 16

// maxPosted bounds the messages (answers to the CLI's requests) waiting
// to be written to a CLI that does not read its stdin; beyond it the
// session is killed.
const maxPosted = 1 << 16

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
	wire    *wirelog.Writer
	red     Redactor
	htools  *driver.HostTools
	hooks   *driver.RunHooks
	errs    *driver.Errors

	p     *proc.Process // nil when replaying
	proto Proto
	host  *Host

	ctx    context.Context // lives until the process is gone
	cancel context.CancelFunc

	slot   chan struct{} // held by the running turn
	askSem chan struct{} // held while the user's permission callback runs
	// lineMu is held by the reader while it handles a line, and while a
	// turn begins: a line belongs to the turn that was running when it
	// was read, in the wire log as in the events.
	lineMu sync.Mutex

	// The stdin writer (see write.go).
	wmu    sync.Mutex
	wq     []*outMsg
	wwake  chan struct{}
	posted int    // messages in wq that nobody waits for
	sink   func() // replaying: called for each message sent instead of writing it

	mu        sync.Mutex
	id        string
	turn      *turn
	err       error // why the session ended; nil while alive
	closing   bool
	closeOnce sync.Once
	dead      chan struct{} // closed once the process is reaped
	escaped   []escapee     // the CLI's descendants outside its group, noted before a stop

	steer    *steering  // the running Stream's steered input (see switch.go)
	switchMu sync.Mutex // held by SetModel and SetPermission
}

var _ agentcli.Session = (*Session)(nil)

// newSession builds a session from cfg without starting anything.
func newSession(cfg Config) (*Session, error) {
	req := agentcli.Request{}
	if cfg.Request != nil {
		req = *cfg.Request
	}
	req.Prompt = ""
	backend := cfg.Backend
	if backend == "" && cfg.Errors != nil {
		backend = cfg.Errors.Backend()
	}
	if err := driver.CheckPermissionMode(backend, req.Permission, nil); err != nil {
		return nil, err
	}
	if req.Permission == agentcli.PermissionAsk && req.OnPermission == nil {
		return nil, &agentcli.RequestError{Backend: backend, Field: "OnPermission", Reason: "required with PermissionAsk"}
	}
	o := cfg.Options
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	grace := o.KillGrace
	if grace <= 0 {
		grace = proc.DefaultKillGrace
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
		wire:    cfg.Wire,
		red:     cfg.Redactor,
		htools:  cfg.HostTools,
		hooks:   cfg.Hooks,
		errs:    cfg.Errors,
		slot:    make(chan struct{}, 1),
		askSem:  make(chan struct{}, 1),
		wwake:   make(chan struct{}, 1),
		dead:    make(chan struct{}),
		id:      req.SessionID,
	}
	if s.permTO <= 0 {
		s.permTO = agentcli.DefaultPermissionTimeout
	}
	if s.igrace <= 0 {
		s.igrace = o.InterruptGrace
	}
	if s.igrace <= 0 {
		s.igrace = DefaultInterruptGrace
	}
	if s.maxLine <= 0 {
		s.maxLine = proc.DefaultMaxLine
	}
	if s.red == nil {
		s.red = noRedactor{}
	}
	if s.errs == nil {
		s.errs = driver.NewErrors(&driver.Spec{Name: backend}, nil, &req)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.host = &Host{s: s}
	s.proto = cfg.Proto(s.host)
	return s, nil
}

// Start starts the CLI and runs the protocol's handshake. ctx bounds the
// start only. On failure the process is gone when Start returns.
func Start(ctx context.Context, cfg Config) (*Session, error) {
	backend := cfg.Backend
	if err := ctx.Err(); err != nil {
		return nil, &agentcli.CanceledError{Backend: backend, Err: context.Cause(ctx)}
	}
	s, err := newSession(cfg)
	if err != nil {
		return nil, err
	}
	path := cfg.Path
	o := cfg.Options

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
		return nil, driver.StartError(backend, path, err)
	}
	s.p = p
	go s.read()
	go s.write()

	herr := s.proto.Start(ctx)
	if herr == nil {
		select {
		case <-s.dead:
			herr = s.Err()
		default:
			if s.wire != nil {
				s.wire.Ready()
			}
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
	if ctx.Err() != nil {
		if s.wire != nil {
			why, deadline, timeout := causeRecord(context.Cause(ctx))
			s.wire.Abort(why, deadline, timeout)
		}
		if !errors.Is(herr, agentcli.ErrCanceled) {
			herr = canceled(backend, context.Cause(ctx))
		}
	}
	s.Close()
	return nil, herr
}

// canceled is the error of a context that ended with cause: the
// *agentcli.TimeoutError the cause is (a one-shot run's timeout), or a
// *agentcli.CanceledError.
func canceled(backend string, cause error) error {
	var te *agentcli.TimeoutError
	if errors.As(cause, &te) {
		return &agentcli.TimeoutError{Backend: backend, Timeout: te.Timeout}
	}
	return &agentcli.CanceledError{Backend: backend, Err: cause}
}

// causeRecord returns what the wire log's abort record says of a context
// that ended with cause.
func causeRecord(cause error) (why string, deadline bool, timeout time.Duration) {
	var te *agentcli.TimeoutError
	if errors.As(cause, &te) {
		return "timeout", false, te.Timeout
	}
	return "canceled", errors.Is(cause, context.DeadlineExceeded), 0
}

// noRedactor redacts nothing.
type noRedactor struct{}

func (noRedactor) Redact(s string) string { return s }
func (noRedactor) Error(err error) error  { return err }

// read is the reader goroutine: every stdout line goes to the protocol;
// at EOF the process is reaped and the session dies.
func (s *Session) read() {
	for {
		l, err := s.p.ReadLine()
		if err != nil {
			break
		}
		s.lineMu.Lock()
		if l.TooLong > 0 {
			if s.wire != nil {
				s.wire.TooLong(l.TooLong)
			}
			s.tooLong(l.TooLong)
		} else {
			if s.wire != nil {
				s.wire.Out(l.Data)
			}
			s.line(l.Data)
		}
		s.lineMu.Unlock()
	}
	exit := s.p.Wait()
	s.mu.Lock()
	closing := s.closing
	escaped := s.escaped
	s.mu.Unlock()
	killEscapees(escaped)
	if s.wire != nil {
		rec := exit.Exit
		rec.Stderr = s.red.Redact(rec.Stderr)
		s.wire.Exit(rec)
	}
	s.exited(closing, exit.Exit)
}

// tooLong reports a stdout line over the limit to the running turn.
func (s *Session) tooLong(n int) {
	lerr := &agentcli.LineTooLongError{Limit: s.maxLine, Len: n}
	s.host.Emit(agentcli.Event{Kind: agentcli.EventNotice, Err: lerr, Text: lerr.Error()})
}

// line hands a stdout line to the protocol.
func (s *Session) line(data []byte) {
	if len(bytes.TrimSpace(data)) == 0 {
		return
	}
	s.proto.Line(data)
}

// exited ends the session once its CLI is gone.
func (s *Session) exited(closing bool, e driver.Exit) {
	var err error
	if closing {
		err = agentcli.ErrSessionClosed
	} else {
		err = s.proto.Exit(e)
		if err == nil {
			err = s.errs.Exited(e)
		}
	}
	if s.cleanup != nil {
		s.cleanup()
	}
	s.die(err)
}

// die records why the session ended and ends the running turn with it.
func (s *Session) die(err error) {
	err = s.red.Error(err)
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
		if s.wire != nil {
			s.wire.Close()
			// Nothing is written to the caller's log once Close returns,
			// even by a CLI that outlives the wait below.
			defer s.wire.Seal()
		}
		s.mu.Lock()
		s.closing = true
		t := s.turn
		s.mu.Unlock()
		if t != nil {
			s.abortTurn(t, reasonClose, nil)
		}
		if s.p == nil {
			return // replaying
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
// (a turn that did not end after an interrupt, a CLI that stopped reading
// its stdin); the session dies with err.
func (s *Session) kill(err error) {
	err = s.red.Error(err)
	s.mu.Lock()
	first := s.err == nil
	if first {
		s.err = err
	}
	s.mu.Unlock()
	if first && s.wire != nil {
		s.wire.Kill(err.Error())
	}
	if first {
		s.log.Debug("agentcli: live session killed", "backend", s.backend, "err", err)
	}
	if s.p == nil {
		return // replaying: the exit record follows
	}
	s.noteEscapees()
	s.p.Stop()
}

// protocolError is the error of a CLI that broke the session's protocol.
func (s *Session) protocolError(format string, args ...any) *agentcli.ProtocolError {
	return &agentcli.ProtocolError{Backend: s.backend, Message: fmt.Sprintf(format, args...)}
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
	return driver.Collect(s.backend, s.Stream(ctx, prompt))
}

// Interrupt implements agentcli.Session. It returns once the turn has
// ended, or ctx is done (a *agentcli.CanceledError). Without a running
// turn it returns nil at once.
func (s *Session) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	s.interrupt(t, reasonUser, nil)
	select {
	case <-t.ended:
		return nil
	case <-ctx.Done():
		return &agentcli.CanceledError{Backend: s.backend, Err: context.Cause(ctx)}
	}
}

// interrupt ends t early for reason r (cause: the context's cause, for
// reasonCancel): pending permission requests get their default decision,
// the CLI is asked to stop, and a watchdog kills the session if the turn
// has not ended within the interrupt grace period.
func (s *Session) interrupt(t *turn, r reason, cause error) {
	if !s.abortTurn(t, r, cause) {
		return // over already, or being ended
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
		case <-ctx.Done():
		}
		select {
		case <-t.ended:
			return
		default:
		}
		if s.wire != nil {
			s.wire.Interrupt()
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
			s.kill(s.protocolError("the CLI did not end the turn within %v of an interrupt; session killed", s.igrace))
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
	reasonTimeout        // Request.Timeout expired (or a one-shot run's)
	reasonClose          // Session.Close
)

// reasonNames are the wire log's names of the reasons.
var reasonNames = map[reason]string{
	reasonUser: "interrupt", reasonBreak: "break", reasonCancel: "canceled",
	reasonTimeout: "timeout", reasonClose: "close",
}

// abortTurn ends t early for reason r, unless its end has come already or
// it is being ended early already; cause is the context's cause of a
// reasonCancel (or reasonTimeout: a *agentcli.TimeoutError). It cancels
// t's context and reports whether this call decided the reason.
func (s *Session) abortTurn(t *turn, r reason, cause error) bool {
	t.mu.Lock()
	first := t.reason == reasonNone && !t.over
	if first {
		t.reason = r
		t.cause = cause
		switch r {
		case reasonTimeout:
			t.timeout = s.req.Timeout
			var te *agentcli.TimeoutError
			if errors.As(cause, &te) {
				t.timeout = te.Timeout
			}
		}
		if s.wire != nil {
			// Under t.mu: the record's place among the others is
			// where the decision was made.
			deadline := r == reasonCancel && errors.Is(cause, context.DeadlineExceeded)
			timeout := time.Duration(0)
			if r == reasonTimeout {
				timeout = t.timeout
			}
			s.wire.Abort(reasonNames[r], deadline, timeout)
		}
	}
	t.mu.Unlock()
	if first {
		t.cancel()
	}
	return first
}

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

	dead   bool   // the session died
	reason reason // why the turn was being ended early when it ended
}

// turn is one prompt and its events.
type turn struct {
	ctx    context.Context // ends when the turn is ended early
	cancel context.CancelFunc

	mu       sync.Mutex
	items    []item
	wake     chan struct{} // signalled when items grow
	space    chan struct{} // signalled when items shrink
	reason   reason
	cause    error         // the context's cause, for reasonCancel
	timeout  time.Duration // for reasonTimeout
	over     bool          // end was called
	ended    chan struct{} // closed by end
	gone     chan struct{} // closed when the consumer stopped reading
	goneOnce sync.Once
	sent     chan struct{} // closed once the prompt has been sent (or failed)
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

// leave records that the consumer stopped reading: nothing waits for it
// any more.
func (t *turn) leave() { t.goneOnce.Do(func() { close(t.gone) }) }

// push queues an item for the consumer. It waits while the queue is full,
// unless the consumer has gone or the session is dead.
func (t *turn) push(it item, dead <-chan struct{}) {
	for {
		t.mu.Lock()
		if t.over {
			t.mu.Unlock()
			return // after the end: nobody reads it
		}
		if len(t.items) < maxQueued {
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

// end queues the turn's end, with the reason the turn was being ended
// early at that moment; only the first end counts, and no abort counts
// after it.
func (t *turn) end(e TurnEnd) {
	t.mu.Lock()
	if t.over {
		t.mu.Unlock()
		return
	}
	t.over = true
	e.reason = t.reason
	t.items = append(t.items, item{end: &e})
	t.mu.Unlock()
	close(t.ended)
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Stream implements agentcli.Session. An empty prompt (or one of white
// space only) is a *agentcli.RequestError; nothing is sent.
func (s *Session) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	return s.stream(ctx, prompt, nil)
}

// stream is Stream with attachments (see StreamTurn).
func (s *Session) stream(ctx context.Context, prompt string, atts []agentcli.Attachment) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		start := time.Now()
		if err := driver.CheckPrompt(s.backend, prompt); err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		select {
		case s.slot <- struct{}{}:
		case <-ctx.Done():
			yield(agentcli.Event{}, canceled(s.backend, context.Cause(ctx)))
			return
		case <-s.dead:
			yield(agentcli.Event{}, s.closedErr())
			return
		}
		defer func() { <-s.slot }()
		if err := ctx.Err(); err != nil {
			yield(agentcli.Event{}, canceled(s.backend, context.Cause(ctx)))
			return
		}

		st := s.startSteering()
		defer s.endSteering(st)

		// Cancellation and the timeout interrupt the turn (and the
		// follow-ups of its steered input: one timeout for the whole
		// Stream).
		var timeout <-chan struct{}
		if s.req.Timeout > 0 {
			expired := make(chan struct{})
			tm := time.AfterFunc(s.req.Timeout, func() { close(expired) })
			defer tm.Stop()
			timeout = expired
		}
		d := delivery{steer: st}
		for {
			if !s.runTurn(ctx, prompt, atts, timeout, &d, start, yield) || d.next == "" {
				return
			}
			// Steered input follows as a turn of its own, without the
			// attachments of the Stream's prompt (they went with it).
			prompt, atts, d.next = d.next, nil, ""
			d.synth = driver.Deltas{}
		}
	}
}

// runTurn sends prompt as a turn and yields its events, and its result
// or error unless steered input follows it (d.next is set then). It
// reports whether the Stream may go on.
func (s *Session) runTurn(ctx context.Context, prompt string, atts []agentcli.Attachment, timeout <-chan struct{}, d *delivery, start time.Time, yield func(agentcli.Event, error) bool) bool {
	t, err := s.begin(d.prev != nil)
	if err != nil {
		yield(agentcli.Event{}, err)
		return false
	}
	defer func() {
		s.mu.Lock()
		if s.turn == t {
			s.turn = nil
		}
		s.mu.Unlock()
		t.leave()
		t.cancel()
	}()

	go func() {
		select {
		case <-ctx.Done():
			cause := context.Cause(ctx)
			r := reasonCancel
			var te *agentcli.TimeoutError
			if errors.As(cause, &te) {
				r = reasonTimeout
			}
			s.interrupt(t, r, cause)
		case <-timeout:
			s.interrupt(t, reasonTimeout, nil)
		case <-t.ended:
		case <-s.dead:
		}
	}()

	err = s.prompt(t.ctx, prompt, atts)
	close(t.sent)
	if err != nil {
		s.promptFailed(t, err)
	}

	for {
		its := t.pop()
		if len(its) == 0 {
			<-t.wake
			continue
		}
		done, broke := s.deliver(t, its, d, start, yield)
		if broke {
			t.leave()
			s.interrupt(t, reasonBreak, nil)
			select {
			case <-t.ended:
			case <-s.dead:
			}
			return false
		}
		if done {
			return true
		}
	}
}

// begin makes a new turn the running one; steered: it is the follow-up
// turn of input steered into the Stream's turn before.
func (s *Session) begin(steered bool) (*turn, error) {
	s.lineMu.Lock()
	defer s.lineMu.Unlock()
	s.mu.Lock()
	if s.err != nil || s.closing {
		s.mu.Unlock()
		return nil, s.closedErr()
	}
	t := newTurn(s.ctx)
	s.turn = t
	s.mu.Unlock()
	switch {
	case s.wire == nil:
	case steered:
		s.wire.SteeredTurn()
	default:
		s.wire.Turn()
	}
	return t, nil
}

// promptFailed ends a turn whose prompt could not be sent. When nothing
// of it reached the CLI (the turn was ended early while the prompt waited
// behind other messages) the session goes on; otherwise it cannot be
// trusted any more (the CLI may run a turn the session no longer follows)
// and is killed.
func (s *Session) promptFailed(t *turn, err error) {
	select {
	case <-s.dead:
		return // the CLI died: its error ends the turn (queued by die)
	default:
	}
	perr := s.protocolError("the prompt could not be sent: %v", err)
	if s.wire != nil {
		s.wire.End(perr.Message)
	}
	t.end(TurnEnd{Err: perr})
	if !errors.Is(err, errUnsent) {
		s.kill(perr)
	}
}

// delivery is the state of a consumer reading a turn.
type delivery struct {
	synth driver.Deltas
	out   []agentcli.Event
	// steer is the Stream's steered input (nil when replaying); prev
	// the result of the turns before the running one, next the input
	// to send as a follow-up turn once the running one has ended.
	steer *steering
	prev  *agentcli.Result
	next  string
}

// deliver yields the events of its and, at the turn's end, its result or
// error. It reports whether the turn is over (done) or the consumer
// stopped reading (broke).
func (s *Session) deliver(t *turn, its []item, d *delivery, start time.Time, yield func(agentcli.Event, error) bool) (done, broke bool) {
	for _, it := range its {
		if it.end != nil {
			res, err := s.finish(t, it.end)
			if err != nil {
				s.dropSteered(d.steer)
				yield(agentcli.Event{}, err)
				return true, false
			}
			if next, ok := s.nextSteered(d.steer); ok {
				d.prev = driver.MergeSteered(d.prev, res)
				d.next = next
				return true, false
			}
			res = driver.MergeSteered(d.prev, res)
			if !start.IsZero() {
				res.Duration = time.Since(start)
			}
			yield(agentcli.Event{Kind: agentcli.EventResult, SessionID: res.SessionID, Result: res, Raw: res.Raw}, nil)
			return true, false
		}
		d.out = d.synth.Apply(d.out[:0], it.ev)
		for _, ev := range d.out {
			driver.RelayText(s.req.OnText, ev)
			if !yield(ev, nil) {
				return false, true
			}
		}
	}
	return false, false
}

// finish turns a turn's end into its outcome.
func (s *Session) finish(t *turn, e *TurnEnd) (*agentcli.Result, error) {
	r := e.reason
	if e.dead {
		if r == reasonClose || errors.Is(e.Err, agentcli.ErrSessionClosed) {
			return nil, agentcli.ErrSessionClosed
		}
		s.mu.Lock()
		killed := s.err
		s.mu.Unlock()
		if r != reasonNone && killed != nil {
			// Killed by the interrupt watchdog.
			return nil, s.earlyError(t, r, killed)
		}
		return nil, e.Err
	}
	if e.Interrupted || r != reasonNone {
		// Once a turn is being ended early, it ends as such, whatever
		// the CLI made of it (an agent may end a turn normally when its
		// pending permission request is cancelled).
		return nil, s.earlyError(t, r, nil)
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
		if err := s.errs.Structured(e.Result); err != nil {
			return e.Result, err
		}
	}
	return e.Result, nil
}

// earlyError is the error of a turn ended early for reason r.
func (s *Session) earlyError(t *turn, r reason, cause error) error {
	t.mu.Lock()
	ctxCause, timeout := t.cause, t.timeout
	t.mu.Unlock()
	switch r {
	case reasonCancel:
		if ctxCause == nil {
			ctxCause = context.Canceled
		}
		return &agentcli.CanceledError{Backend: s.backend, Err: ctxCause}
	case reasonTimeout:
		return &agentcli.TimeoutError{Backend: s.backend, Timeout: timeout}
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

// Errors returns what builds the session's typed errors (see
// Config.Errors).
func (h *Host) Errors() *driver.Errors { return h.s.errs }

// Request returns the session's request (a copy; do not modify).
func (h *Host) Request() *agentcli.Request { return &h.s.req }

// Logger returns the backend's logger.
func (h *Host) Logger() *slog.Logger { return h.s.log }

// Send writes one line (a newline is added when missing) to the CLI's
// stdin, after the lines sent before it, and returns once it is written.
// It gives up when ctx ends (a line that has not begun to be written is
// then never written; one being written is finished, so that the CLI
// never reads half a message) or the session ends.
func (h *Host) Send(ctx context.Context, line []byte) error { return h.s.send(ctx, line, true) }

// Post queues one line for the CLI's stdin, after the lines sent before
// it, and returns at once: for answers to the CLI's requests, which must
// never wait for the CLI to read (it may be busy writing requests). A CLI
// that leaves too many of them unread is killed.
func (h *Host) Post(line []byte) error { return h.s.send(context.Background(), line, false) }

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

// SessionID returns the CLI's session id as recorded so far, or "".
func (h *Host) SessionID() string { return h.s.ID() }

// TurnContext returns a context that ends when the running turn is
// ended early (interrupted, cancelled, timed out) or the session ends;
// between turns, when the session ends. Call cancel when done with it.
func (h *Host) TurnContext() (ctx context.Context, cancel context.CancelFunc) {
	parent := h.s.ctx
	h.s.mu.Lock()
	if h.s.turn != nil {
		parent = h.s.turn.ctx
	}
	h.s.mu.Unlock()
	return context.WithCancel(parent)
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
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reason != reasonNone
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
// the request's Options when it has any (see Normalize). answer should
// send with Host.Post.
func (h *Host) Ask(pr *agentcli.PermissionRequest, answer func(agentcli.PermissionDecision)) {
	s := h.s
	if pr.SessionID == "" {
		pr.SessionID = s.ID()
	}
	if s.sink != nil {
		// Replaying: the decision was the live session's, and what is
		// answered does not change the events.
		answer(driver.NormalizeDecision(pr.Options, agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: DeniedMessage}, false))
		return
	}
	if _, ok := s.htools.Match(pr.Tool.RawName); !ok && s.hooks.AskAll() {
		// PreToolUse first (Config.Hooks), then the usual decision,
		// with the hook's input when it changed it.
		go func() {
			ctx, cancel := h.TurnContext()
			defer cancel()
			out := s.hooks.PreToolUse(ctx, pr.SessionID, pr.Tool, pr.Title)
			switch {
			case out.Deny:
				answer(driver.NormalizeDecision(pr.Options, agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: out.Reason}, false))
				if d, ok := s.proto.(HookDenier); ok {
					d.HookDenied(pr, out.Reason)
				}
				return
			case out.Input != nil && !s.edit:
				answer(driver.NormalizeDecision(pr.Options, agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: driver.RewriteRefused}, false))
				if d, ok := s.proto.(HookDenier); ok {
					d.HookDenied(pr, driver.RewriteRefused)
				}
				return
			}
			input := out.Input
			h.decide(pr, func(d agentcli.PermissionDecision) {
				if input != nil && d.Allowed() && d.Input == nil {
					d.Input = input
				}
				answer(d)
			})
		}()
		return
	}
	h.decide(pr, answer)
}

// decide decides pr after PreToolUse (Ask): host tools, the tool lists,
// the permission mode and callback.
func (h *Host) decide(pr *agentcli.PermissionRequest, answer func(agentcli.PermissionDecision)) {
	s := h.s
	if _, ok := s.htools.Match(pr.Tool.RawName); ok {
		// agentcli's own server decides its calls (driver.HostTools).
		answer(driver.NormalizeDecision(pr.Options, agentcli.PermissionDecision{Kind: agentcli.AllowOnce}, true))
		return
	}
	// The tool lists come first, in every mode: a listed tool is approved
	// in advance, any other refused (the CLI's own configuration holds
	// the lists too, where it can; see each backend).
	switch driver.Judge(s.req.AllowedTools, s.req.DisallowedTools, &pr.Tool) {
	case driver.VerdictAllow:
		answer(driver.NormalizeDecision(pr.Options, agentcli.PermissionDecision{Kind: agentcli.AllowOnce}, true))
		return
	case driver.VerdictRefuse:
		answer(driver.NormalizeDecision(pr.Options, agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: ToolListMessage}, false))
		return
	}
	switch s.permMode() {
	case agentcli.PermissionBypass:
		answer(driver.NormalizeDecision(pr.Options, agentcli.PermissionDecision{Kind: agentcli.AllowOnce}, true))
		return
	case agentcli.PermissionAsk:
		if s.req.OnPermission != nil {
			break
		}
		fallthrough
	default: // deny, plan, and the zero mode: whatever would ask is refused
		answer(driver.NormalizeDecision(pr.Options, agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: DeniedMessage}, false))
		return
	}
	parent := s.ctx
	s.mu.Lock()
	if s.turn != nil {
		parent = s.turn.ctx
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(parent, s.permTO)
	go func() {
		defer cancel()
		d := agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: DeniedMessage}
		// One callback at a time: the semaphore is held until the user's
		// function returns, even after this request has been given up.
		select {
		case s.askSem <- struct{}{}:
			d = s.callback(ctx, pr)
		case <-ctx.Done():
		}
		answer(driver.NormalizeDecision(pr.Options, d, s.edit))
	}()
}

// callback runs the user's permission function, which holds s.askSem (the
// caller took it) until it returns; when ctx ends first, the default
// decision (refuse) applies and the function's late answer is dropped. A
// panic in the callback refuses too.
func (s *Session) callback(ctx context.Context, pr *agentcli.PermissionRequest) agentcli.PermissionDecision {
	def := agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: DeniedMessage}
	ch := make(chan agentcli.PermissionDecision, 1)
	cp := *pr
	cp.Options = append([]agentcli.PermissionOption(nil), pr.Options...)
	go func() {
		defer func() { <-s.askSem }()
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
