package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"iter"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/nats-io/nats.go"
)

// StartSession implements driver.SessionStarter: it submits the start
// of a live session to the pool and returns once a worker has started
// it. The session is pinned to that worker while it lives there; when the
// worker is gone, or closed the session after WorkerOptions.SessionIdle,
// the next turn moves it: the session is started again on any worker,
// resuming its id there (from the object store with
// WorkerOptions.Sessions), and the turn runs on it. A turn in progress
// when its worker dies ends with a *WorkerLostError and is not run again;
// the next turn moves the session. ctx bounds the start only (the wait
// for a worker included).
func (b *Backend) StartSession(ctx context.Context, req *agentcli.Request) (agentcli.Session, error) {
	r := agentcli.Request{}
	if req != nil {
		r = *req
	}
	r.Prompt = ""
	if b.closed() {
		return nil, b.errClosed()
	}
	// Once: the session moves as this one (see session.place).
	if err := b.resolveContinue(ctx, &r); err != nil {
		return nil, err
	}
	s := &session{b: b, req: r, id: r.SessionID,
		slot: make(chan struct{}, 1), closed: make(chan struct{})}
	switch {
	case r.NewSessionID != "":
		s.id = r.NewSessionID
	case r.ForkSession:
		s.id = "" // the fork's, once the worker tells it
	}
	if err := s.place(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// session is the caller's handle of a live session in the pool.
type session struct {
	b      *Backend
	req    agentcli.Request
	slot   chan struct{} // one turn at a time
	closed chan struct{}

	mu sync.Mutex
	id string
	// saved: a turn of the session ended, so its worker saved it under
	// id, which it resumes when it moves. Until then it moves as it was
	// asked to start (resuming or forking SessionID, or anew, under
	// NewSessionID if given), since no worker saved anything of it.
	saved     bool
	home      *wireSession // nil: the next turn places the session
	err       error
	cur       *call
	closeOnce sync.Once
}

// place starts the session on a worker (again, resuming its id, when it
// moves). A worker that dies while it starts the session is replaced,
// until maxResubmits workers were; then *WorkerLostError with Started
// false (no turn of the session ran on any of them).
func (s *session) place(ctx context.Context) error {
	for tries := 1; ; tries++ {
		err := s.placeOnce(ctx)
		var lost *WorkerLostError
		if !errors.As(err, &lost) || !lost.Started {
			return err // placeOnce's start gave up after maxResubmits workers
		}
		// The worker died while it started the session: no turn of it
		// ran there, so another worker may start it.
		if tries < maxResubmits && ctx.Err() == nil {
			continue
		}
		return &WorkerLostError{Backend: lost.Backend, Worker: lost.Worker, Silence: lost.Silence,
			Reason: "starting the session: " + lost.Reason, tries: tries}
	}
}

// placeOnce starts the session on one worker.
func (s *session) placeOnce(ctx context.Context) error {
	s.mu.Lock()
	req := s.req
	if s.saved {
		req.SessionID, req.ForkSession, req.NewSessionID = s.id, false, ""
	}
	s.mu.Unlock()
	c, err := s.b.start(ctx, &req, jobSession)
	if err != nil {
		return err
	}
	defer c.close()
	end, err, _ := c.consume(ctx, 0, func(agentcli.Event, error) bool { return true })
	if err != nil {
		if end != nil && end.Session != nil {
			// Started as the caller gave up: nobody will use it.
			go func() { _, _ = s.b.request(end.Session.Subject, newFrame(kindClose, 0, nil), 1) }()
		}
		return err
	}
	if end.Err != nil {
		return decodeError(end.Err)
	}
	if end.Session == nil || !validToken(end.Session.Worker) {
		return &agentcli.ParseError{Backend: s.b.opts.Backend, Err: errors.New("session start without a session")}
	}
	s.mu.Lock()
	s.home = end.Session
	if end.Session.ID != "" {
		s.id = end.Session.ID
	}
	s.mu.Unlock()
	return nil
}

func (s *session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

func (s *session) setID(id string) {
	s.mu.Lock()
	s.id = id
	s.mu.Unlock()
}

func (s *session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// closedErr is the error of a turn on a session that has ended.
func (s *session) closedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil || errors.Is(s.err, agentcli.ErrSessionClosed) {
		return agentcli.ErrSessionClosed
	}
	return &sessionLostError{lost: s.err}
}

func (s *session) Run(ctx context.Context, prompt string) (*agentcli.Result, error) {
	return driver.Collect(s.b.opts.Backend, s.Stream(ctx, prompt))
}

// Stream sends prompt as the next turn to the worker holding the session
// (moving the session first when it has none) and yields the turn's
// events.
func (s *session) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	return s.stream(ctx, &agentcli.Turn{Prompt: prompt})
}

// StreamTurn implements agentcli.TurnStreamer: it checks t's attachments
// in this process and loads them (a Path is read here), as a local
// session does, before anything is sent, then sends the turn as Stream
// does, its attachments' content with it.
func (s *session) StreamTurn(ctx context.Context, t *agentcli.Turn) iter.Seq2[agentcli.Event, error] {
	if t == nil {
		t = &agentcli.Turn{}
	}
	atts, err := driver.LoadAttachments(s.b.opts.Backend, s.b.attachmentKinds(), t.Attachments)
	if err != nil {
		return func(yield func(agentcli.Event, error) bool) { yield(agentcli.Event{}, err) }
	}
	return s.stream(ctx, &agentcli.Turn{Prompt: t.Prompt, Attachments: atts})
}

// stream runs turn t, its attachments loaded.
func (s *session) stream(ctx context.Context, t *agentcli.Turn) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		name := s.b.opts.Backend
		select {
		case s.slot <- struct{}{}:
		case <-ctx.Done():
			yield(agentcli.Event{}, &agentcli.CanceledError{Backend: name, Err: context.Cause(ctx)})
			return
		case <-s.closed:
			yield(agentcli.Event{}, s.closedErr())
			return
		}
		defer func() { <-s.slot }()
		if s.Err() != nil {
			yield(agentcli.Event{}, s.closedErr())
			return
		}
		c, err := s.startTurn(ctx, t)
		if err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		defer func() {
			s.mu.Lock()
			s.cur = nil
			s.mu.Unlock()
			c.close()
		}()
		end, err, broke := c.consume(ctx, s.req.Timeout, yield)
		var lost *WorkerLostError
		if errors.As(err, &lost) {
			s.moved()
		}
		if end != nil {
			s.mu.Lock()
			s.saved = true
			s.mu.Unlock()
		}
		if end != nil && end.SessionDead {
			s.mu.Lock()
			if s.err == nil {
				s.err = decodeError(end.Err)
				if s.err == nil {
					s.err = agentcli.ErrSessionClosed
				}
			}
			s.home = nil
			s.mu.Unlock()
		}
		if err := endErr(end, err, broke); err != nil {
			yield(agentcli.Event{}, err)
		}
	}
}

// moved forgets the session's worker: the next turn places it again.
func (s *session) moved() {
	s.mu.Lock()
	s.home = nil
	s.mu.Unlock()
}

// startTurn hands the turn to the session's worker and returns its call.
// A worker that is gone before it took the turn (no one listens on the
// session's subject) is replaced: the session moves, until maxResubmits
// workers were handed the turn.
func (s *session) startTurn(ctx context.Context, t *agentcli.Turn) (*call, error) {
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		home := s.home
		s.mu.Unlock()
		if home == nil {
			if err := s.place(ctx); err != nil {
				return nil, err
			}
			s.mu.Lock()
			home = s.home
			s.mu.Unlock()
		}
		c := s.b.newCall(&s.req)
		c.onSession = s.setID
		// Stored before the call waits for the worker's heartbeats.
		payload, blob, err := s.turnPayload(ctx, c.id, t)
		if err != nil {
			return nil, err // too large, or the store failed: nothing was sent
		}
		c.pinned(home.Worker, s.b.opts.Heartbeat)
		if err := c.open(); err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.cur = c
		s.mu.Unlock()
		took, err := s.sendTurn(ctx, home.Subject, newFrame(kindTurn, 0, payload))
		if err == nil {
			return c, nil
		}
		s.mu.Lock()
		s.cur = nil
		s.mu.Unlock()
		c.close()
		if blob && !took {
			s.dropBlob(c.id)
		}
		if errors.Is(err, nats.ErrNoResponders) && !took && attempt+1 < maxResubmits {
			s.moved() // the worker, or its copy of the session, is gone
			continue
		}
		if ctx.Err() != nil {
			return nil, &agentcli.CanceledError{Backend: s.b.opts.Backend, Err: context.Cause(ctx)}
		}
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) {
			s.moved()
			lost := &WorkerLostError{Backend: s.b.opts.Backend, Worker: home.Worker, Started: took,
				Reason: "it did not answer the turn"}
			if !took {
				lost.tries = attempt + 1
			}
			return nil, lost
		}
		return nil, err
	}
}

// turnPayload returns the payload of turn t's kindTurn request on
// stream id, and whether its prompt and attachments went to the blobs
// store (named id), being too large for a message.
func (s *session) turnPayload(ctx context.Context, id string, t *agentcli.Turn) (payload []byte, blob bool, err error) {
	w := wireTurn{Stream: id, Prompt: t.Prompt, Attachments: toWireAttachments(t.Attachments),
		Heartbeat: s.b.opts.Heartbeat, Window: window{Frames: s.b.opts.Window, Bytes: s.b.opts.WindowBytes}}
	payload, err = json.Marshal(w)
	if err != nil {
		return nil, false, &agentcli.RequestError{Backend: s.b.opts.Backend, Field: "Turn", Reason: err.Error()}
	}
	if len(payload) <= s.b.inlineLimit() {
		return payload, false, nil
	}
	body, _ := json.Marshal(wireTurn{Prompt: w.Prompt, Attachments: w.Attachments})
	if err := s.b.putBlob(ctx, id, body); err != nil {
		return nil, false, err
	}
	w.Prompt, w.Attachments, w.Blob = "", nil, id
	payload, _ = json.Marshal(w)
	return payload, true, nil
}

// dropBlob deletes the blob of a turn no worker took.
func (s *session) dropBlob(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*s.b.opts.Heartbeat)
	defer cancel()
	_ = s.b.res.blobs.Delete(ctx, id)
}

// sendTurn sends a turn request, retrying on timeouts. took reports that
// the worker may have received it (an attempt timed out rather than
// finding no one).
func (s *session) sendTurn(ctx context.Context, subject string, frame []byte) (took bool, err error) {
	deadline := time.Now().Add(s.b.opts.WorkerDeadAfter)
	for {
		wait := 2 * s.b.opts.Heartbeat
		if d, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(d))
		}
		if wait <= 0 {
			return took, context.DeadlineExceeded
		}
		msg, err := s.b.nc.Request(subject, frame, wait)
		if err == nil {
			_, err = parseReply(msg.Data)
			return true, err
		}
		if errors.Is(err, nats.ErrNoResponders) {
			if !s.b.nc.IsConnected() || (took && time.Now().Before(deadline)) {
				// Resubscribing after a reconnection, maybe.
				time.Sleep(s.b.opts.Heartbeat / 4)
				continue
			}
			return took, err
		}
		if errors.Is(err, nats.ErrConnectionClosed) || ctx.Err() != nil {
			return took, err
		}
		took = true
		if time.Now().After(deadline) {
			return took, nats.ErrTimeout
		}
	}
}

// Interrupt stops the turn in progress: the worker interrupts its CLI,
// and the caller's permission callbacks of the turn see their context
// end. It returns once the worker's CLI acknowledged or ctx is done.
func (s *session) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	c, home := s.cur, s.home
	s.mu.Unlock()
	if c == nil || home == nil {
		return nil
	}
	c.permCancel()
	if _, ok := ctx.Deadline(); !ok {
		// A worker that died during the interrupt must not hold it forever.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.b.opts.WorkerDeadAfter)
		defer cancel()
	}
	d, _ := ctx.Deadline()
	ms := uint64(max(time.Until(d).Milliseconds(), 1))
	frame := newFrame(kindInterrupt, 0, binary.AppendUvarint(nil, ms))
	msg, err := s.b.nc.RequestWithContext(ctx, home.Subject, frame)
	if err != nil {
		if ctx.Err() != nil {
			return &agentcli.CanceledError{Backend: s.b.opts.Backend, Err: context.Cause(ctx)}
		}
		if errors.Is(err, nats.ErrNoResponders) {
			return nil // no session there, so no turn to interrupt
		}
		return err
	}
	_, err = parseReply(msg.Data)
	return err
}

// Close ends the session on its worker and returns once the worker has
// closed its CLI, or after Options.WorkerDeadAfter when it does not
// answer.
func (s *session) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		if s.err == nil {
			s.err = agentcli.ErrSessionClosed
		}
		home := s.home
		s.home = nil
		s.mu.Unlock()
		close(s.closed)
		if home != nil {
			_, _ = s.b.nc.Request(home.Subject, newFrame(kindClose, 0, nil), s.b.opts.WorkerDeadAfter)
		}
	})
	return nil
}
