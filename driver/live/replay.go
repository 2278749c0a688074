package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
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
// event). After each record the running turn's new events are yielded.

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
		cfg.Wire, cfg.Cleanup, cfg.Logger = nil, nil, nil
		req := agentcli.Request{}
		if cfg.Request != nil {
			req = *cfg.Request
		}
		req.Permission, req.OnPermission, req.OnText = "", nil, nil
		cfg.Request = &req
		backend := cfg.Backend
		bad := func(format string, args ...any) error {
			return &agentcli.ParseError{Backend: backend, Err: fmt.Errorf("replay: "+format, args...)}
		}
		var nsent atomic.Int64
		sent := make(chan struct{}, 1)
		cfg0 := cfg
		proto := cfg0.Proto
		cfg0.Proto = func(h *Host) Proto {
			h.s.sink = func() {
				nsent.Add(1)
				select {
				case sent <- struct{}{}:
				default:
				}
			}
			return proto(h)
		}
		s, err := newSession(cfg0)
		if err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		defer func() {
			select {
			case <-s.dead:
			default:
				s.die(agentcli.ErrSessionClosed) // ends what still waits on the session
			}
		}()
		startCtx, cancelStart := context.WithCancel(context.Background())
		defer cancelStart()
		startDone := make(chan error, 1)
		go func() { startDone <- s.proto.Start(startCtx) }()
		waitSent := func(n int64) bool {
			deadline := time.NewTimer(replayWait)
			defer deadline.Stop()
			for nsent.Load() < n {
				select {
				case <-sent:
				case <-deadline.C:
					return false
				}
			}
			return true
		}

		var (
			ready     bool  // the handshake succeeded
			startErr  error // the handshake's error, once it returned one
			startRet  bool  // the handshake returned
			aborted   error // the start's context ended (abort before ready)
			closed    bool  // a close record came
			ins       int64
			t         *turn
			d         delivery
			turnCount int
		)
		waitStart := func() {
			if startRet {
				return
			}
			select {
			case startErr = <-startDone:
				startRet = true
			case <-time.After(replayWait):
			}
		}
		// flush yields the running turn's new events; false when the
		// consumer stopped.
		flush := func() bool {
			if t == nil {
				return true
			}
			done, broke := s.deliver(t, t.pop(), &d, time.Time{}, yield)
			if broke {
				return false
			}
			if done {
				s.mu.Lock()
				s.turn = nil
				s.mu.Unlock()
				t.leave()
				t = nil
			}
			return true
		}
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				if closed && t == nil {
					// Closed with no turn running: every event is in the
					// log. The CLI's exit record comes when the CLI is
					// gone, which Close does not always wait for (it is
					// bounded): a log read after Close may end here.
					return
				}
				yield(agentcli.Event{}, bad("%w", errIncomplete))
				return
			}
			if err != nil {
				yield(agentcli.Event{}, &agentcli.ParseError{Backend: backend, Err: fmt.Errorf("replay: %w", err)})
				return
			}
			switch rec.T {
			case "in":
				ins++
				if !waitSent(ins) {
					yield(agentcli.Event{}, bad("the session sent %d messages where the log holds %d: was it written by another version of the backend?", nsent.Load(), ins))
					return
				}
			case "out":
				if rec.TooLong > 0 {
					s.tooLong(rec.TooLong)
				} else {
					s.line(rec.Data)
				}
			case "ready":
				waitStart()
				if !startRet || startErr != nil {
					yield(agentcli.Event{}, bad("the handshake did not succeed as it did live (%v)", startErr))
					return
				}
				ready = true
			case "turn":
				if !ready {
					yield(agentcli.Event{}, bad("a turn before the session was ready"))
					return
				}
				if t != nil {
					yield(agentcli.Event{}, bad("turn %d began before turn %d ended", turnCount+1, turnCount))
					return
				}
				turnCount++
				t = newTurn(s.ctx)
				d = delivery{}
				s.mu.Lock()
				s.turn = t
				s.mu.Unlock()
				// The prompt's text is in the log's in record; what the
				// protocol sends here only counts.
				s.proto.Prompt(t.ctx, "replay") //nolint:errcheck // a failed prompt has an end record
				close(t.sent)
			case "abort":
				r, cause := abortReason(rec)
				if t != nil {
					s.abortTurn(t, r, cause)
				} else if !ready {
					aborted = canceled(backend, cause)
					cancelStart()
				}
			case "interrupt":
				if t != nil {
					go s.proto.Interrupt(s.ctx) //nolint:errcheck // as live: a failed interrupt is only logged
				}
			case "end":
				if t != nil {
					t.end(TurnEnd{Err: &agentcli.ProtocolError{Backend: backend, Message: rec.Message}})
				}
			case "kill":
				s.mu.Lock()
				if s.err == nil {
					s.err = &agentcli.ProtocolError{Backend: backend, Message: rec.Message}
				}
				s.mu.Unlock()
			case "close":
				closed = true
				s.Close()
			case "exit":
				s.exited(closed, rec.Exit)
				if !flush() {
					return
				}
				if !ready {
					// As live: the handshake's error, or the dead CLI's
					// when it died by itself (before Close), or the
					// start's context (recorded before Close, which may
					// come after the exit).
					for {
						rec, err := rd.Next()
						if err != nil {
							break
						}
						if rec.T == "abort" {
							_, cause := abortReason(rec)
							aborted = canceled(backend, cause)
						}
					}
					waitStart()
					herr := startErr
					if !closed || herr == nil {
						if e := s.Err(); e != nil {
							herr = e
						}
					}
					if aborted != nil && !errors.Is(herr, agentcli.ErrCanceled) {
						herr = aborted
					}
					if herr == nil {
						herr = bad("the session never became ready")
					}
					yield(agentcli.Event{}, herr)
				}
				return
			case "start":
				yield(agentcli.Event{}, bad("a second start record"))
				return
			}
			if !flush() {
				return
			}
		}
	}
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
