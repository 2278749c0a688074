package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// hosted is a live session a worker holds for a caller: the local
// session, its control subscription, and the stream of the turn in
// progress, which the callbacks' stand-ins follow.
type hosted struct {
	w         *Worker
	id        string // the start job's id
	subject   string
	dir       string // the session's Dir on this worker
	callerDir string // as the caller gave it
	callerHB  time.Duration
	win       window
	sess      agentcli.Session
	sub       *nats.Subscription

	mu        sync.Mutex
	cur       *stream // the turn in progress (or the start)
	turnID    string  // the last turn's stream id
	lastUsed  time.Time
	closed    bool
	closeOnce sync.Once
}

// startSession starts a live session for a session job and reports
// whether it did (the session then keeps the job's slot).
func (w *Worker) startSession(s *stream, j *job) bool {
	h := &hosted{w: w, id: j.ID, subject: sessionSubject(w.opts.Prefix, w.opts.ID, j.ID),
		callerHB: j.Heartbeat, win: j.Window, cur: s, lastUsed: time.Now()}
	req, err := w.prepare(s, j.Req, callbacks{text: h.onText, permission: h.onPermission, log: hostedLog{h}, relay: h.relay})
	if err != nil {
		s.end(wireEnd{Err: encodeError(err)}, s.deadAfter)
		return false
	}
	h.dir, h.callerDir = req.Dir, j.Req.Dir
	sess, err := agentcli.StartSession(s.ctx, w.b, &req)
	if err != nil {
		s.end(wireEnd{Err: encodeError(w.outcome(s, err))}, s.deadAfter)
		return false
	}
	h.sess = sess
	sub, err := w.nc.Subscribe(h.subject, h.control)
	if err != nil {
		_ = sess.Close()
		s.end(wireEnd{Err: encodeError(fmt.Errorf("%s: %w: %w", w.name, ErrUnavailable, err))}, s.deadAfter)
		return false
	}
	h.sub = sub
	w.mu.Lock()
	draining := w.draining
	w.sessions[h] = struct{}{}
	w.mu.Unlock()
	h.mu.Lock()
	h.cur = nil
	h.mu.Unlock()
	s.end(wireEnd{Session: &wireSession{ID: sess.ID(), Subject: h.subject, Worker: w.opts.ID}}, s.deadAfter)
	if draining {
		h.close()
		return true // close released the slot
	}
	return true
}

// current returns the stream of the turn in progress, or nil.
func (h *hosted) current() *stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur
}

func (h *hosted) onText(t string) {
	if s := h.current(); s != nil {
		s.onText(t)
	}
}

func (h *hosted) onPermission(ctx context.Context, pr *agentcli.PermissionRequest) agentcli.PermissionDecision {
	if s := h.current(); s != nil {
		return s.onPermission(ctx, pr)
	}
	return agentcli.PermissionDecision{Kind: agentcli.RejectOnce}
}

// relay sends a call to the caller of the turn in progress; between
// turns nobody answers.
func (h *hosted) relay(ctx context.Context, c wireCall) (wireReturn, bool) {
	if s := h.current(); s != nil {
		return s.relay(ctx, c)
	}
	return wireReturn{}, false
}

// hostedLog sends wire-log records to the turn in progress; records
// written between turns are dropped.
type hostedLog struct{ h *hosted }

func (l hostedLog) Write(p []byte) (int, error) {
	if s := l.h.current(); s != nil {
		return streamLog{s}.Write(p)
	}
	return len(p), nil
}

// control handles a request on the session's control subject.
func (h *hosted) control(m *nats.Msg) {
	kind, _, payload, err := parseFrame(m.Data)
	if err != nil {
		return
	}
	switch kind {
	case kindTurn:
		var t wireTurn
		if err := json.Unmarshal(payload, &t); err != nil || !validToken(t.Stream) || (t.Blob != "" && t.Blob != t.Stream) {
			_ = m.Respond(replyError(&agentcli.RequestError{Backend: h.w.name, Field: "turn", Reason: "malformed"}))
			return
		}
		h.mu.Lock()
		switch {
		case h.closed:
			h.mu.Unlock()
			_ = m.Respond(replyError(agentcli.ErrSessionClosed))
			return
		case t.Stream == h.turnID:
			h.mu.Unlock()
			_ = m.Respond(newFrame(replyOK, 0, nil)) // a retry of a request we took
			return
		case h.cur != nil:
			h.mu.Unlock()
			_ = m.Respond(replyError(fmt.Errorf("%s: a turn is in progress", h.w.name)))
			return
		}
		s := h.w.newStream(t.Stream, t.Heartbeat, t.Window)
		h.w.watch(s)
		h.cur, h.turnID, h.lastUsed = s, t.Stream, time.Now()
		h.w.wg.Add(1)
		h.mu.Unlock()
		_ = m.Respond(newFrame(replyOK, 0, nil))
		go h.turn(s, &t)
	case kindInterrupt:
		ms, _ := binary.Uvarint(payload)
		go func() {
			ctx, cancel := context.WithTimeout(h.w.life, time.Duration(ms)*time.Millisecond)
			defer cancel()
			if err := h.sess.Interrupt(ctx); err != nil {
				_ = m.Respond(replyError(err))
				return
			}
			_ = m.Respond(newFrame(replyOK, 0, nil))
		}()
	case kindClose:
		go func() {
			h.close()
			_ = m.Respond(newFrame(replyOK, 0, nil))
		}()
	}
}

// turn runs one turn of the session.
func (h *hosted) turn(s *stream, t *wireTurn) {
	defer h.w.wg.Done()
	defer s.close()
	sid, runErr, abandoned := s.forward(h.events(s, t))
	h.mu.Lock()
	h.cur, h.lastUsed = nil, time.Now()
	h.mu.Unlock()
	id := h.sess.ID()
	if id == "" {
		id = sid
	}
	dead := h.sess.Err() != nil
	if !abandoned {
		end := wireEnd{Err: encodeError(h.w.outcome(s, runErr)), SessionID: id, SessionDead: dead}
		end.SaveErr = encodeError(h.w.exportSession(h.dir, h.callerDir, id))
		s.end(end, s.deadAfter)
	}
	h.w.mu.Lock()
	draining := h.w.draining
	h.w.mu.Unlock()
	if dead || draining {
		h.close()
	}
}

// events sends turn t to the session and returns its events: its prompt
// and attachments read from the blobs store first when they were too
// large for the message (a blob that cannot be read fails the turn, not
// the session). The attachments have their content only (see
// wireAttachment); the session's backend checks them.
func (h *hosted) events(s *stream, t *wireTurn) iter.Seq2[agentcli.Event, error] {
	if t.Blob != "" {
		data, err := h.w.readBlob(t.Blob)
		var body wireTurn
		if err == nil {
			if jerr := json.Unmarshal(data, &body); jerr != nil {
				err = &agentcli.RequestError{Backend: h.w.name, Field: "turn", Reason: "undecodable: " + jerr.Error()}
			}
		}
		if err != nil {
			return func(yield func(agentcli.Event, error) bool) { yield(agentcli.Event{}, err) }
		}
		t.Prompt, t.Attachments = body.Prompt, body.Attachments
	}
	if len(t.Attachments) == 0 {
		return h.sess.Stream(s.ctx, t.Prompt)
	}
	return agentcli.StreamTurn(s.ctx, h.sess, &agentcli.Turn{Prompt: t.Prompt, Attachments: fromWireAttachments(t.Attachments)})
}

// close ends the session and frees its slot.
func (h *hosted) close() {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		h.mu.Unlock()
		if h.sub != nil {
			_ = h.sub.Unsubscribe()
		}
		_ = h.sess.Close()
		h.w.mu.Lock()
		delete(h.w.sessions, h)
		h.w.mu.Unlock()
		<-h.w.slots
	})
}

// closeIdleSessions closes the sessions idle for SessionIdle (all idle
// ones while draining).
func (w *Worker) closeIdleSessions() {
	// Lock order: h.mu before w.mu (control holds h.mu to start a turn).
	w.mu.Lock()
	all := make([]*hosted, 0, len(w.sessions))
	for h := range w.sessions {
		all = append(all, h)
	}
	draining := w.draining
	w.mu.Unlock()
	for _, h := range all {
		h.mu.Lock()
		idle := h.cur == nil && (draining || time.Since(h.lastUsed) > w.opts.SessionIdle)
		h.mu.Unlock()
		if idle {
			h.close()
		}
	}
}

// closeSessions closes every session.
func (w *Worker) closeSessions() {
	w.mu.Lock()
	all := make([]*hosted, 0, len(w.sessions))
	for h := range w.sessions {
		all = append(all, h)
	}
	w.mu.Unlock()
	for _, h := range all {
		h.close()
	}
}

// exportTimeout bounds saving one session, retries included, and
// restoring one.
const exportTimeout = 2 * time.Minute

// exportSession saves session id, run in dir (callerDir as the caller
// gave it), to the sessions store. It
// retries (a NATS restart) for up to exportTimeout: an archive older than
// the run would make the next turn on another worker resume without it.
// It returns nil when there is nothing to save (no porter, no id), and
// the *SessionNotSavedError the caller gets otherwise.
func (w *Worker) exportSession(dir, callerDir, id string) error {
	if w.opts.Sessions == nil || id == "" {
		return nil
	}
	notSaved := func(err error) error {
		w.opts.Logger.Warn("cluster: saving a session failed", "worker", w.opts.ID, "session", id, "err", err)
		return &SessionNotSavedError{Backend: w.name, Session: id, Worker: w.opts.ID, Err: err}
	}
	if len(id) > 512 {
		return notSaved(errors.New("session id over 512 bytes"))
	}
	ctx, cancel := context.WithTimeout(w.life, exportTimeout)
	defer cancel()
	err := w.rc.retry(ctx, exportTimeout, func(actx context.Context) error {
		err := w.exportOnce(actx, dir, callerDir, id)
		var pe *porterError
		if errors.As(err, &pe) {
			return &permanent{err}
		}
		return err
	})
	if err != nil {
		return notSaved(err)
	}
	return nil
}

// porterError is a failure of the SessionPorter itself (not retried).
type porterError struct{ err error }

func (e *porterError) Error() string { return e.err.Error() }
func (e *porterError) Unwrap() error { return e.err }

// exportOnce streams one export into the store.
func (w *Worker) exportOnce(ctx context.Context, dir, callerDir, id string) error {
	pr, pw := io.Pipe()
	exported := make(chan error, 1)
	go func() {
		err := w.opts.Sessions.Export(ctx, w.b, dir, id, &limitWriter{w: pw, n: w.opts.MaxArchiveBytes})
		pw.CloseWithError(err)
		exported <- err
	}()
	_, err := w.res.sessions.Put(ctx, jetstream.ObjectMeta{
		Name:     sessionKey(w.name, id),
		Metadata: map[string]string{"worker": w.opts.ID, metaBackend: w.name, metaDir: callerDir},
	}, pr)
	pr.CloseWithError(errExportAbandoned) // a failed Put stops the porter
	if perr := <-exported; perr != nil && !errors.Is(perr, errExportAbandoned) {
		return &porterError{perr}
	}
	return err
}

var errExportAbandoned = errors.New("export abandoned: the store failed")

// importSession restores session id from the sessions store, if it is
// there, for a run in dir, and returns the id to resume.
func (w *Worker) importSession(ctx context.Context, dir, id string) (string, error) {
	if w.opts.Sessions == nil || len(id) > 512 {
		return id, nil
	}
	// No deadline on this context: the store's reader waits for its
	// context's deadline, whatever else ends it, but without one it looks
	// every few seconds whether it was cancelled.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer time.AfterFunc(exportTimeout, func() { cancel(context.DeadlineExceeded) }).Stop()
	nid := ""
	err := w.rc.retry(ctx, 0, func(actx context.Context) error {
		res, err := w.res.sessions.Get(actx, sessionKey(w.name, id))
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			nid = id // a session this worker has, or none: the CLI will tell
			return nil
		}
		if err != nil {
			return err
		}
		defer func() { _ = res.Close() }()
		lr := &limitReader{r: res, n: w.opts.MaxArchiveBytes}
		got, err := w.opts.Sessions.Import(actx, w.b, dir, lr)
		if err != nil {
			if actx.Err() != nil || lr.err != nil {
				return err // the store's read was cut: again
			}
			return &permanent{fmt.Errorf("%s: importing session %s: %w", w.name, id, err)}
		}
		nid = got
		if nid == "" {
			nid = id
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, nats.ErrConnectionClosed) {
			return "", fmt.Errorf("%s: %w: reading session %s: %w", w.name, ErrUnavailable, id, err)
		}
		return "", err
	}
	return nid, nil
}

// limitWriter fails writes beyond n bytes.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, errOverWorkerLimit
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}

var errOverWorkerLimit = fmt.Errorf("%w: over WorkerOptions.MaxArchiveBytes", ErrArchiveTooLarge)

// limitReader reads at most n bytes of r and fails, rather than stop
// short, when r has more: a truncated archive must not pass for a whole
// one. err is the error r returned, other than io.EOF (a failure of the
// store, worth another attempt).
type limitReader struct {
	r   io.Reader
	n   int64
	err error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// One more byte tells whether r is over the limit or just at it.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, errOverWorkerLimit
		}
		if err != nil && !errors.Is(err, io.EOF) {
			l.err = err
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		l.err = err
	}
	return n, err
}
