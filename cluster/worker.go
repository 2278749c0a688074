package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Worker takes jobs of its backend from the pool's work queue and runs
// them on a local agentcli.Backend: one-shot runs, and live sessions,
// which stay on this worker (pinned) until they close or idle out. It
// streams each run's events back to the caller in order, with flow
// control, forwards permission requests, OnText and wire-log records to
// the caller, heartbeats, and stops a run whose caller went silent.
//
// A job is started at most once: a worker claims it in a key-value
// bucket with a compare-and-set before anything runs, so a job redelivered
// after its first worker died is run by the next worker only when the
// first never claimed it, and skipped otherwise (its caller then gets a
// *WorkerLostError).
type Worker struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	b     agentcli.Backend
	opts  WorkerOptions
	name  string
	res   *resources
	rc    *reconnects
	chunk int

	slots chan struct{}
	wg    sync.WaitGroup // runs, turns and session starts in progress

	// life is the parent context of every run; cancelled with a cause
	// when the worker stops them.
	life     context.Context
	stopRuns context.CancelCauseFunc

	mu       sync.Mutex
	streams  map[*stream]struct{}
	sessions map[*hosted]struct{}
	draining bool
}

// errWorkerStopping is the cause of a run stopped by the worker's
// shutdown.
var errWorkerStopping = errors.New("worker shut down")

// NewWorker returns a worker that runs the jobs of b's backend (b.Name())
// on b, taking them from the pool reached through nc. It does nothing
// until Run. opts may be nil; it is copied. nc should reconnect forever
// (nats.MaxReconnects(-1)); the worker neither closes it nor sets its
// handlers.
func NewWorker(nc *nats.Conn, b agentcli.Backend, opts *WorkerOptions) (*Worker, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	name := b.Name()
	if !validToken(name) {
		return nil, fmt.Errorf("cluster: backend name %q cannot be a subject token", name)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	chunk := min(o.ChunkBytes, int(nc.MaxPayload())-64)
	chunk = max(chunk, 1024)
	w := &Worker{nc: nc, js: js, b: b, opts: o, name: name, chunk: chunk,
		slots: make(chan struct{}, o.MaxRuns), streams: map[*stream]struct{}{}, sessions: map[*hosted]struct{}{}}
	w.life, w.stopRuns = context.WithCancelCause(context.Background())
	return w, nil
}

// ID returns the worker's id in the pool.
func (w *Worker) ID() string { return w.opts.ID }

// Run takes and runs jobs until ctx is done or the NATS connection is
// closed; it may be called once. When ctx ends it stops taking jobs, closes its idle live
// sessions (their next turn moves), waits up to
// WorkerOptions.DrainTimeout for the runs in progress, stops those left
// (their callers get a *WorkerLostError), and returns nil. When the
// connection closes it stops every run at once, as a crash would, and
// returns nats.ErrConnectionClosed.
func (w *Worker) Run(ctx context.Context) error {
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	w.rc = watchReconnects(w.nc, stopWatch)
	cons, err := w.setup(ctx)
	if err != nil || cons == nil {
		return err
	}
	w.register(ctx)
	tickDone := make(chan struct{})
	stopTick := make(chan struct{})
	go w.ticks(stopTick, tickDone)

	w.opts.Logger.Info("cluster: worker started", "worker", w.opts.ID, "backend", w.name, "max_runs", w.opts.MaxRuns)
	err = w.fetch(ctx, cons)

	w.mu.Lock()
	w.draining = true
	w.mu.Unlock()
	if err != nil {
		// The connection is gone: nothing can reach the callers.
		w.stopRuns(err)
	} else {
		w.closeIdleSessions()
		if !waitGroup(&w.wg, w.opts.DrainTimeout) {
			w.stopRuns(errWorkerStopping)
		}
	}
	w.wg.Wait()
	w.closeSessions()
	close(stopTick)
	<-tickDone
	if err == nil {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = w.res.workers.Delete(dctx, w.opts.ID)
		cancel()
	}
	w.stopRuns(errWorkerStopping)
	w.opts.Logger.Info("cluster: worker stopped", "worker", w.opts.ID, "err", err)
	return err
}

// setup opens the pool's resources and the backend's consumer. A pool
// that cannot be reached yet (NATS restarting) is waited for, with each
// failure logged, until ctx ends; only a closed connection or a
// configuration JetStream refuses ends it at once.
func (w *Worker) setup(ctx context.Context) (jetstream.Consumer, error) {
	var cons jetstream.Consumer
	err := w.rc.retry(ctx, w.opts.SetupTimeout, func(actx context.Context) error {
		res, err := ensureResources(actx, w.js, w.opts.Prefix, w.opts.Replicas, w.opts.Storage)
		if err == nil {
			w.res = res
			cons, err = w.js.CreateOrUpdateConsumer(actx, res.workName, jetstream.ConsumerConfig{
				Durable:       consumerName(w.name),
				Description:   "agentcli workers of backend " + w.name,
				FilterSubject: workSubject(w.opts.Prefix, w.name),
				AckPolicy:     jetstream.AckExplicitPolicy,
				AckWait:       w.opts.AckWait,
				MaxDeliver:    -1,
				MaxAckPending: -1,
			})
			if err != nil {
				err = fmt.Errorf("cluster: consumer %s: %w", consumerName(w.name), err)
			}
		}
		if refused(err) {
			return &permanent{err}
		}
		if err != nil {
			w.opts.Logger.Warn("cluster: the pool is not reachable yet", "worker", w.opts.ID, "err", err)
		}
		return err
	})
	if ctx.Err() != nil {
		return nil, nil
	}
	return cons, err
}

// waitGroup waits for wg up to d and reports whether it finished.
func waitGroup(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// fetch takes jobs while the worker has free slots, until ctx ends (nil)
// or the connection closes.
func (w *Worker) fetch(ctx context.Context, cons jetstream.Consumer) error {
	poll := min(w.opts.Heartbeat, 2*time.Second)
	backoff := 20 * time.Millisecond
	for {
		// Take one slot, waiting, then any others free (up to 16).
		n := 0
		for n == 0 {
			if w.nc.IsClosed() {
				return nats.ErrConnectionClosed
			}
			select {
			case w.slots <- struct{}{}:
				n = 1
			case <-ctx.Done():
				return nil
			case <-time.After(poll):
			}
		}
	more:
		for n < 16 {
			select {
			case w.slots <- struct{}{}:
				n++
			default:
				break more
			}
		}
		batch, err := cons.Fetch(n, jetstream.FetchMaxWait(poll))
		got := 0
		if err == nil {
			for msg := range batch.Messages() {
				got++
				w.wg.Add(1)
				go w.take(msg)
			}
			err = batch.Error()
		}
		for ; got < n; got++ {
			<-w.slots
		}
		if ctx.Err() != nil {
			return nil
		}
		if w.nc.IsClosed() {
			return nats.ErrConnectionClosed
		}
		if err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			// JetStream unreachable (a restart): back off.
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 20 * time.Millisecond
	}
}

// take handles one job from the queue; it owns one slot.
func (w *Worker) take(msg jetstream.Msg) {
	defer w.wg.Done()
	keep := false // a live session keeps the slot
	defer func() {
		if !keep {
			<-w.slots
		}
	}()
	var j job
	if err := json.Unmarshal(msg.Data(), &j); err != nil || !validToken(j.ID) || (j.Blob != "" && j.Blob != j.ID) {
		w.opts.Logger.Warn("cluster: dropping a malformed job", "err", err)
		_ = msg.Term()
		return
	}
	owned, err := w.claim(j.ID)
	if err != nil {
		// Unknown outcome and no way to learn it now: let another
		// worker try (it will find our claim if it landed).
		_ = msg.Nak()
		return
	}
	_ = msg.Ack()
	if !owned {
		return
	}
	s := w.newStream(j.ID, j.Heartbeat, j.Window)
	defer s.close()
	if !w.handshake(s, &j) {
		return
	}
	w.watch(s)
	if j.Blob != "" {
		if err := w.fetchBlob(&j); err != nil {
			s.end(wireEnd{Err: encodeError(err)}, w.callerDeadAfter(j.Heartbeat))
			return
		}
	}
	if (j.V != protocolVersion && j.V != protocolVersionV1) || j.Req == nil || (j.Kind != jobRun && j.Kind != jobSession) {
		err := &agentcli.UnsupportedError{Backend: w.name, Feature: fmt.Sprintf("job v%d %q", j.V, j.Kind),
			Reason: "the worker speaks another protocol version"}
		s.end(wireEnd{Err: encodeError(err)}, w.callerDeadAfter(j.Heartbeat))
		return
	}
	if j.Kind == jobSession {
		keep = w.startSession(s, &j)
		return
	}
	w.run(s, &j)
}

// claim makes this worker the only one to start job id. It reports
// false when another worker claimed it or its caller withdrew it, and an
// error when the outcome cannot be known.
func (w *Worker) claim(id string) (bool, error) {
	// The value is unique to this take: a later delivery of the same job
	// (a lost ack, a duplicate) to this very worker must not find it
	// "ours" and run it again.
	mine := []byte(claimValue(w.opts.ID, newID()))
	// Until the job would be redelivered anyway; the other taker's claim
	// then meets ours in the same compare-and-set.
	deadline := time.Now().Add(max(w.opts.CallerDeadAfter, w.opts.AckWait))
	for {
		ctx, cancel := w.rc.attempt(w.life, 2*time.Second)
		_, err := w.res.claims.Create(ctx, id, mine)
		if err == nil {
			cancel()
			return true, nil
		}
		cancel()
		// Exists, or unknown (a lost reply): read what is there.
		ctx, cancel = w.rc.attempt(w.life, 2*time.Second)
		e, gerr := w.res.claims.Get(ctx, id)
		cancel()
		if gerr == nil {
			return string(e.Value()) == string(mine), nil
		}
		if time.Now().After(deadline) || w.nc.IsClosed() || w.life.Err() != nil {
			return false, fmt.Errorf("claiming job %s: %w", id, errors.Join(err, gerr))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *Worker) callerDeadAfter(callerHB time.Duration) time.Duration {
	return max(w.opts.CallerDeadAfter, 3*callerHB)
}

// handshake tells the caller the worker has the job and waits for its
// go-ahead; false means nobody waits for it.
func (w *Worker) handshake(s *stream, j *job) bool {
	payload, _ := json.Marshal(wireAccept{Worker: w.opts.ID, Heartbeat: w.opts.Heartbeat})
	frame := newFrame(kindAccept, 0, payload)
	subject := callerSubject(w.opts.Prefix, j.ID)
	wait := w.callerDeadAfter(j.Heartbeat)
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && w.life.Err() == nil {
		if !w.nc.IsConnected() {
			// Time without a connection is nobody's silence.
			deadline = time.Now().Add(wait)
		}
		msg, err := w.nc.Request(subject, frame, 2*w.opts.Heartbeat)
		if err == nil {
			kind, _, _, perr := parseFrame(msg.Data)
			if perr == nil && kind == kindGo {
				s.out.heardFrom()
				return true
			}
			return false
		}
		if errors.Is(err, nats.ErrConnectionClosed) {
			return false
		}
		if errors.Is(err, nats.ErrNoResponders) {
			// The caller left, or is resubscribing after a reconnection.
			time.Sleep(w.opts.Heartbeat / 4)
		}
	}
	return false
}

// fetchBlob reads a request too large for the job message.
func (w *Worker) fetchBlob(j *job) error {
	data, err := w.readBlob(j.Blob)
	if err != nil {
		return err
	}
	var r wireRequest
	if err := json.Unmarshal(data, &r); err != nil {
		return &agentcli.RequestError{Backend: w.name, Field: "Request", Reason: "undecodable: " + err.Error()}
	}
	j.Req = &r
	return nil
}

// readBlob reads the blob name (a request or a turn too large for a
// message) and deletes it, reading at most maxBlobBytes: a larger blob
// is refused with a *agentcli.RequestError, and deleted too.
func (w *Worker) readBlob(name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(w.life, time.Minute)
	defer cancel()
	var data []byte
	err := w.rc.retry(ctx, 30*time.Second, func(ctx context.Context) error {
		res, err := w.res.blobs.Get(ctx, name)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return &permanent{err}
		}
		if err != nil {
			return err
		}
		defer func() { _ = res.Close() }()
		if info, err := res.Info(); err == nil && info.Size > maxBlobBytes {
			return &permanent{errBlobTooLarge}
		}
		data, err = io.ReadAll(io.LimitReader(res, maxBlobBytes+1))
		if err == nil && len(data) > maxBlobBytes {
			return &permanent{errBlobTooLarge}
		}
		return err
	})
	_ = w.res.blobs.Delete(ctx, name)
	if errors.Is(err, errBlobTooLarge) {
		return nil, &agentcli.RequestError{Backend: w.name, Field: "Request", Reason: err.Error()}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: reading the request: %w", w.name, ErrUnavailable, err)
	}
	return data, nil
}

var errBlobTooLarge = fmt.Errorf("over %d bytes, the most a worker reads of a request", maxBlobBytes)

// run runs a one-shot job.
func (w *Worker) run(s *stream, j *job) {
	req, err := w.prepare(s, j.Req, s.callbacks())
	if err != nil {
		s.end(wireEnd{Err: encodeError(err)}, s.deadAfter)
		return
	}
	sid, runErr, abandoned := s.forward(w.b.Stream(s.ctx, &req))
	if abandoned {
		return
	}
	if sid == "" {
		sid = req.SessionID
	}
	end := wireEnd{Err: encodeError(w.outcome(s, runErr)), SessionID: sid}
	end.SaveErr = encodeError(w.exportSession(req.Dir, j.Req.Dir, sid))
	s.end(end, s.deadAfter)
}

// outcome is the error a run ended with, as the caller should see it.
func (w *Worker) outcome(s *stream, err error) error {
	if err != nil && errors.Is(context.Cause(s.ctx), errWorkerStopping) {
		return &WorkerLostError{Backend: w.name, Worker: w.opts.ID, Started: true, Reason: errWorkerStopping.Error()}
	}
	return err
}

// prepare turns the wire request into the local one: Dir mapped, the
// callbacks the caller has replaced by cb's stand-ins, the session
// restored from the object store.
func (w *Worker) prepare(s *stream, wr *wireRequest, cb callbacks) (agentcli.Request, error) {
	req := wr.request()
	if w.opts.MapDir != nil {
		dir, err := w.opts.MapDir(req.Dir)
		if err != nil {
			return req, &agentcli.RequestError{Backend: w.name, Field: "Dir", Reason: err.Error()}
		}
		req.Dir = dir
	}
	if wr.OnText {
		req.OnText = cb.text
	}
	if wr.OnPermission {
		req.OnPermission = cb.permission
	}
	if wr.WireLog {
		req.WireLog = cb.log
	}
	standIns(&req, wr, cb.relay)
	if req.NewSessionID != "" {
		if err := w.checkNewID(s.ctx, req.NewSessionID); err != nil {
			return req, err
		}
	}
	if req.SessionID != "" {
		id, err := w.importSession(s.ctx, req.Dir, req.SessionID)
		if err != nil {
			return req, err
		}
		req.SessionID = id
	}
	return req, nil
}

// checkNewID refuses a NewSessionID that names a session the sessions
// store holds, as a CLI refuses an id in use: the new session's archive
// would replace it. Without a store it is the CLI's to check.
func (w *Worker) checkNewID(ctx context.Context, id string) error {
	if w.opts.Sessions == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, exportTimeout)
	defer cancel()
	var found bool
	err := w.rc.retry(ctx, 0, func(actx context.Context) error {
		_, err := w.res.sessions.GetInfo(actx, sessionKey(w.name, id))
		switch {
		case err == nil:
			found = true
			return nil
		case errors.Is(err, jetstream.ErrObjectNotFound):
			return nil
		}
		return err
	})
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w: looking up session %s: %w", w.name, ErrUnavailable, id, err)
	case found:
		return &agentcli.RequestError{Backend: w.name, Field: "NewSessionID",
			Reason: "the pool's session store already holds a session " + id}
	}
	return nil
}

// newStream sets up the worker's end of stream id: its outbox and its
// control subscription.
func (w *Worker) newStream(id string, callerHB time.Duration, win window) *stream {
	frames := clampInt(win.Frames, 4, 4096, 256)
	bytes := clampInt(win.Bytes, 64<<10, 256<<20, 4<<20)
	s := &stream{w: w, id: id, deadAfter: w.callerDeadAfter(callerHB), waiting: map[uint64]chan agentcli.PermissionDecision{},
		returns: map[uint64]chan wireReturn{}}
	s.out = newOutbox(w.nc, callerSubject(w.opts.Prefix, id), w.chunk, frames, bytes)
	s.ctx, s.cancel = context.WithCancelCause(w.life)
	sub, err := w.nc.Subscribe(workerSubject(w.opts.Prefix, w.opts.ID, id), s.control)
	if err != nil {
		s.out.abandon(err)
		s.cancel(err)
	} else {
		_ = sub.SetPendingLimits(-1, -1)
		s.sub = sub
	}
	return s
}

// watch adds s to the streams the worker heartbeats, retransmits and
// watches for a silent caller: once the caller is known to listen (after
// the handshake, or at once for a turn it asked for).
func (w *Worker) watch(s *stream) {
	s.out.heardFrom()
	w.mu.Lock()
	w.streams[s] = struct{}{}
	w.mu.Unlock()
}

func clampInt(v, lo, hi, def int) int {
	if v <= 0 {
		return def
	}
	return min(max(v, lo), hi)
}

// ticks heartbeats and retransmits every stream, refreshes the
// registration and closes idle sessions, until stop is closed.
func (w *Worker) ticks(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(w.opts.Heartbeat)
	defer t.Stop()
	lastReg := time.Now()
	var streams []*stream
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			streams = snapshot(&w.mu, w.streams, streams)
			for _, s := range streams {
				s.out.tick(now, 4*w.opts.Heartbeat, s.deadAfter)
			}
			clear(streams)
			w.closeIdleSessions()
			if now.Sub(lastReg) >= registryTTL/3 {
				lastReg = now
				go w.register(w.life)
			}
		}
	}
}

// register writes the worker's registration.
func (w *Worker) register(ctx context.Context) {
	r := registration{Backend: w.name, Caps: w.b.Capabilities(), MaxRuns: w.opts.MaxRuns,
		Running: len(w.slots), Heartbeat: w.opts.Heartbeat}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r.Check = encodeError(w.b.Check(cctx))
	data, _ := json.Marshal(r)
	_, _ = w.res.workers.Put(cctx, w.opts.ID, data)
}
