package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// Replaying a live session: the session's own machinery (its protocol,
// its turns, how a turn ends) runs again without a process. The driver
// reads the log record by record on one goroutine and does what the live
// session did at that point: a stdout line goes to the protocol, a turn
// record begins a turn and sends its prompt, an abort record ends the turn
// early, an interrupt record asks the protocol to interrupt, the exit
// record ends the session. What the protocol sends is dropped, but
// counted: at each in record the driver waits until the replayed session
// has sent as many messages as the live one had, so that an answer from
// the CLI never comes before the request it answers (the protocol's
// request ids are the live session's, in the same order). Permission
// requests are answered at once (the answer is in the log; it changes no
// event). A switch record (model, permission, steer) asks the protocol
// for the same switch, on a goroutine of its own (the answer to what it
// sends is further in the log). After each record the running turn's new
// events are yielded; a turn's result is held until the log says whether
// a steered follow-up turn goes on with the Stream (which then yields one
// result for both, as live).

// replayWait bounds how long the driver waits for the replayed protocol
// to send what the log says it sent, or to finish its handshake: a log
// that does not match the backend (written by another version) fails
// instead of hanging.
var replayWait = 10 * time.Second

// errIncomplete: the log ends before the session did.
var errIncomplete = errors.New("the log ends before the session ended")

// Replay yields the events of the live session recorded in a wire log,
// read from rd after its start record: each turn's events, each turn
// ending with its EventResult or its error, as the session yielded them
// (durations aside; a turn whose consumer stopped reading is replayed to
// its end, which is an error matching agentcli.ErrInterrupted). When the
// session failed to start, the start's error is all it yields. cfg
// describes the session as the log's start record does (Backend, Request,
// Proto, EditInput, Options.MaxLineBytes); nothing is started.
func Replay(cfg Config, rd *wirelog.Reader) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		r, err := newReplayer(cfg)
		if err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		defer r.stop()
		r.yield = yield
		for {
			rec, err := rd.Next()
			if !r.release(rec, err) {
				return
			}
			if err == io.EOF {
				if r.closed && r.t == nil {
					// Closed with no turn running: every event is in the
					// log. The CLI's exit record comes when the CLI is
					// gone, which Close does not always wait for (it is
					// bounded): a log read after Close may end here.
					return
				}
				yield(agentcli.Event{}, r.bad("%w", errIncomplete))
				return
			}
			if err != nil {
				yield(agentcli.Event{}, &agentcli.ParseError{Backend: r.backend, Err: fmt.Errorf("replay: %w", err)})
				return
			}
			if rec.T == "exit" {
				if r.exit(rec, rd) {
					r.release(rec, nil) // the result the exit's flush held
				}
				return
			}
			if err := r.record(rec); err != nil {
				yield(agentcli.Event{}, err)
				return
			}
			if !r.flush() {
				return
			}
		}
	}
}

// replayer is one replay of a live session: the session without a
// process, and what the driver knows of the log read so far.
type replayer struct {
	s       *Session
	backend string
	yield   func(agentcli.Event, error) bool

	nsent       atomic.Int64  // messages the replayed protocol sent
	sent        chan struct{} // a message was sent
	startDone   chan error    // the handshake's result
	cancelStart context.CancelFunc

	ready     bool  // the handshake succeeded
	startErr  error // the handshake's error, once it returned one
	startRet  bool  // the handshake returned
	aborted   error // the start's context ended (abort before ready)
	closed    bool  // a close record came
	ins       int64 // in records so far
	t         *turn // the running turn
	d         delivery
	turnCount int
	// held is the result of the last turn, not yielded yet: a steered
	// turn may follow it.
	held *agentcli.Event
	// switches are the switches running on goroutines of their own.
	switches sync.WaitGroup
}

// newReplayer makes the session cfg describes, with no process and no
// callbacks, and begins its handshake.
func newReplayer(cfg Config) (*replayer, error) {
	cfg.Wire, cfg.Cleanup, cfg.Logger = nil, nil, nil
	req := agentcli.Request{}
	if cfg.Request != nil {
		req = *cfg.Request
	}
	req.Permission, req.OnPermission, req.OnText = "", nil, nil
	cfg.Request = &req
	r := &replayer{backend: cfg.Backend, sent: make(chan struct{}, 1), startDone: make(chan error, 1)}
	proto := cfg.Proto
	cfg.Proto = func(h *Host) Proto {
		h.s.sink = func() {
			r.nsent.Add(1)
			select {
			case r.sent <- struct{}{}:
			default:
			}
		}
		return proto(h)
	}
	s, err := newSession(cfg)
	if err != nil {
		return nil, err
	}
	r.s = s
	startCtx, cancel := context.WithCancel(context.Background())
	r.cancelStart = cancel
	go func() { r.startDone <- s.proto.Start(startCtx) }()
	return r, nil
}

// stop ends what still waits on the session.
func (r *replayer) stop() {
	r.cancelStart()
	select {
	case <-r.s.dead:
	default:
		r.s.die(agentcli.ErrSessionClosed)
	}
	r.switches.Wait()
}

// emit yields ev or err, holding a result back (see held); false when
// the consumer stopped.
func (r *replayer) emit(ev agentcli.Event, err error) bool {
	if err == nil && ev.Kind == agentcli.EventResult {
		r.held = &ev
		return true
	}
	return r.yield(ev, err)
}

// release yields the held result unless rec (read with err) begins a
// steered follow-up turn, or holds on (a record between the turns); false
// when the consumer stopped.
func (r *replayer) release(rec wirelog.Record, err error) bool {
	if r.held == nil {
		return true
	}
	if err == nil {
		switch rec.T {
		case "turn":
			if rec.Steered {
				return true // the follow-up takes it (turn)
			}
		case "close", "exit":
		default:
			return true
		}
	}
	ev := *r.held
	r.held = nil
	return r.yield(ev, nil)
}

func (r *replayer) bad(format string, args ...any) error {
	return &agentcli.ParseError{Backend: r.backend, Err: fmt.Errorf("replay: "+format, args...)}
}

// waitSent waits until the protocol has sent n messages; false when it
// does not within replayWait.
func (r *replayer) waitSent(n int64) bool {
	deadline := time.NewTimer(replayWait)
	defer deadline.Stop()
	for r.nsent.Load() < n {
		select {
		case <-r.sent:
		case <-deadline.C:
			return false
		}
	}
	return true
}

// waitStart waits, at most replayWait, for the handshake to return.
func (r *replayer) waitStart() {
	if r.startRet {
		return
	}
	select {
	case r.startErr = <-r.startDone:
		r.startRet = true
	case <-time.After(replayWait):
	}
}

// flush yields the running turn's new events; false when the consumer
// stopped.
func (r *replayer) flush() bool {
	t := r.t
	if t == nil {
		return true
	}
	done, broke := r.s.deliver(t, t.pop(), &r.d, time.Time{}, r.emit)
	if broke {
		return false
	}
	if done {
		r.s.mu.Lock()
		r.s.turn = nil
		r.s.mu.Unlock()
		t.leave()
		r.t = nil
	}
	return true
}

// record does what the live session did at rec (any record but exit); a
// non-nil error ends the replay.
func (r *replayer) record(rec wirelog.Record) error {
	s := r.s
	switch rec.T {
	case "in":
		r.ins++
		if !r.waitSent(r.ins) {
			return r.bad("the session sent %d messages where the log holds %d: was it written by another version of the backend?", r.nsent.Load(), r.ins)
		}
	case "out":
		if rec.TooLong > 0 {
			s.tooLong(rec.TooLong)
		} else {
			s.line(rec.Data)
		}
	case "ready":
		r.waitStart()
		if !r.startRet || r.startErr != nil {
			return r.bad("the handshake did not succeed as it did live (%v)", r.startErr)
		}
		r.ready = true
	case "turn":
		return r.turn(rec.Steered)
	case "model", "permission", "steer":
		r.switchTo(rec)
	case "abort":
		why, cause := abortReason(rec)
		if r.t != nil {
			s.abortTurn(r.t, why, cause)
		} else if !r.ready {
			r.aborted = canceled(r.backend, cause)
			r.cancelStart()
		}
	case "interrupt":
		if r.t != nil {
			go s.proto.Interrupt(s.ctx) //nolint:errcheck // as live: a failed interrupt is only logged
		}
	case "end":
		if r.t != nil {
			r.t.end(TurnEnd{Err: &agentcli.ProtocolError{Backend: r.backend, Message: rec.Message}})
		}
	case "kill":
		s.mu.Lock()
		if s.err == nil {
			s.err = &agentcli.ProtocolError{Backend: r.backend, Message: rec.Message}
		}
		s.mu.Unlock()
	case "close":
		r.closed = true
		s.Close()
	case "start":
		return r.bad("a second start record")
	}
	return nil
}

// switchTo asks the protocol for the switch of rec, as the live session
// did, on a goroutine of its own (a switch that asks the CLI returns once
// the CLI answered, which later records hold). It returns once the switch
// returned or sent its first message, at most replayWait later: a switch
// that only changes what the protocol sends next (codex's model goes with
// the next turn/start) has then taken effect, as it had live before the
// next record was written.
func (r *replayer) switchTo(rec wirelog.Record) {
	s := r.s
	var do func() error
	ms, okModel := s.proto.(ModelSwitcher)
	ps, okPerm := s.proto.(PermissionSwitcher)
	st, okSteer := s.proto.(Steerer)
	switch {
	case rec.T == "model" && okModel:
		do = func() error { return ms.SetModel(s.ctx, rec.Model) }
	case rec.T == "permission" && okPerm:
		do = func() error { return ps.SetPermission(s.ctx, agentcli.PermissionMode(rec.Mode)) }
	case rec.T == "steer" && okSteer:
		do = func() error { return st.Steer(s.ctx, "replay") }
	}
	if do == nil {
		return
	}
	sent := r.nsent.Load()
	done := make(chan struct{})
	r.switches.Add(1)
	go func() {
		defer r.switches.Done()
		defer close(done)
		do() //nolint:errcheck // as live: the error changes no event
	}()
	deadline := time.NewTimer(replayWait)
	defer deadline.Stop()
	for {
		select {
		case <-done:
			return
		case <-r.sent:
			if r.nsent.Load() > sent {
				return
			}
		case <-deadline.C:
			return
		}
	}
}

// waitSwitches waits, at most replayWait, for the switches still running:
// live, each had returned before the next turn began.
func (r *replayer) waitSwitches() {
	done := make(chan struct{})
	go func() {
		r.switches.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(replayWait):
	}
}

// turn begins the log's next turn; steered: a follow-up of the turn
// before, whose held result it goes on with.
func (r *replayer) turn(steered bool) error {
	if !r.ready {
		return r.bad("a turn before the session was ready")
	}
	if r.t != nil {
		return r.bad("turn %d began before turn %d ended", r.turnCount+1, r.turnCount)
	}
	r.waitSwitches()
	r.turnCount++
	t := newTurn(r.s.ctx)
	r.t, r.d = t, delivery{}
	if steered && r.held != nil {
		r.d.prev, r.held = r.held.Result, nil
	}
	r.s.mu.Lock()
	r.s.turn = t
	r.s.mu.Unlock()
	// The prompt's text is in the log's in record; what the protocol
	// sends here only counts.
	r.s.proto.Prompt(t.ctx, "replay") //nolint:errcheck // a failed prompt has an end record
	close(t.sent)
	return nil
}

// exit ends the replay at the exit record: the last events, and for a
// session that never became ready, the error its start returned. It
// reports whether the consumer still reads.
func (r *replayer) exit(rec wirelog.Record, rd *wirelog.Reader) bool {
	r.s.exited(r.closed, rec.Exit)
	if !r.flush() {
		return false
	}
	if r.ready {
		return true
	}
	// As live: the handshake's error, or the dead CLI's when it died by
	// itself (before Close), or the start's context (recorded before
	// Close, which may come after the exit).
	for {
		rec, err := rd.Next()
		if err != nil {
			break
		}
		if rec.T == "abort" {
			_, cause := abortReason(rec)
			r.aborted = canceled(r.backend, cause)
		}
	}
	r.waitStart()
	herr := r.startErr
	if !r.closed || herr == nil {
		if e := r.s.Err(); e != nil {
			herr = e
		}
	}
	if r.aborted != nil && !errors.Is(herr, agentcli.ErrCanceled) {
		herr = r.aborted
	}
	if herr == nil {
		herr = r.bad("the session never became ready")
	}
	return r.yield(agentcli.Event{}, herr)
}

// abortReason returns the reason and context cause of an abort record.
func abortReason(rec wirelog.Record) (reason, error) {
	switch rec.Why {
	case "interrupt":
		return reasonUser, nil
	case "break":
		return reasonBreak, nil
	case "timeout":
		return reasonTimeout, &agentcli.TimeoutError{Timeout: rec.Timeout}
	case "close":
		return reasonClose, nil
	}
	if rec.Deadline {
		return reasonCancel, context.DeadlineExceeded
	}
	return reasonCancel, context.Canceled
}
