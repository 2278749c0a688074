package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Backend is an agentcli.Backend whose runs go to a pool of workers
// (see Worker) over NATS JetStream: each Run, Stream or live session is a
// job on a work queue that one worker of the backend takes, runs on its
// own local backend, and streams back event by event, in order. It also
// implements driver.SessionStarter.
//
// What crosses the wire, and how:
//
//   - Every Request field but the three below is sent as it is, to be
//     used on the worker's machine: Dir, Env, MCPServers and ExtraArgs
//     name things there (see WorkerOptions.MapDir), and Env's values
//     (often credentials) travel through NATS, so use TLS and NATS
//     authorization.
//   - OnText and OnPermission run in this process, in the same order and
//     with the same contexts as locally: the worker's backend calls its
//     own stand-ins, which send each call here; a permission decision
//     goes back before the request's deadline (PermissionTimeout, counted
//     on the worker) or not at all, and the request's context here ends
//     at that deadline, when the turn is interrupted or cancelled, and
//     when the run ends.
//   - Host tools (Request.Tools), OnQuestion and Hooks run in this
//     process the same way: the worker's backend gets a stand-in for
//     each (a tool with the same Name, Description, InputSchema and
//     Approved), whose calls come here with their input and go back
//     with what the function returned; the worker's backend applies the
//     rules it applies locally (PermissionTimeout for questions and
//     hooks, the answer given when none comes in time, a panic as a
//     failed call). A host tool's call is bounded by the run only, and
//     its context here ends when the worker's does. An output too large
//     for a NATS message goes through the object store.
//   - WireLog is written here, record by record, in order, one Write per
//     record, from the goroutine that iterates the run. It has no other
//     io.Writer or callback field.
//   - Attachments (Request.Attachments, and a session's Turn, see
//     agentcli.StreamTurn) are read and checked here, as a local backend
//     does (driver.LoadAttachments: a Path is read in this process, a
//     regular file, bounded; the kinds the workers' backend takes, as
//     Capabilities reports them; the size limits), before anything is
//     queued, and their content crosses the wire: a path never does. The
//     worker's backend checks them again. A request or a turn too large
//     for a NATS message goes through the object store.
//   - ForkSession forks the session SessionID names, restored on the
//     worker from the object store (WorkerOptions.Sessions) like any
//     resumed session, and the fork is saved there under its own id.
//     NewSessionID names the new session; with WorkerOptions.Sessions,
//     an id the store already holds is an *agentcli.RequestError, as a
//     CLI refuses an id in use. Continue resumes (or, with ForkSession,
//     forks) the newest session the store holds for Dir (see
//     ListSessions), found here before anything is queued; with none it
//     fails with an error matching agentcli.ErrNoSession, as locally.
//
// Cancelling ctx, a Request.Timeout, breaking out of a Stream loop and a
// session's Interrupt reach the worker, which stops its CLI as the local
// backend would; Run and Stream return once the worker reports the run
// over (its CLI reaped), or after Options.WorkerDeadAfter when it cannot.
// Time spent waiting in the queue for a free worker counts against ctx
// but not against Request.Timeout, as with agentcli.WithLimit.
//
// A run whose worker dies or stays silent for Options.WorkerDeadAfter ends
// with a *WorkerLostError; the pool never runs it again by itself. A job
// not yet started when its worker died goes to another worker, once.
//
// A Backend is safe for concurrent use. Close it when done.
type Backend struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	opts Options
	res  *resources
	rc   *reconnects

	mu    sync.Mutex
	calls map[*call]struct{}

	regMu   sync.Mutex
	workers map[string]registration

	stop     chan struct{}
	stopOnce sync.Once
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// registration is a worker's entry in the workers bucket.
type registration struct {
	Backend   string                `json:"backend"`
	Caps      agentcli.Capabilities `json:"caps"`
	MaxRuns   int                   `json:"max_runs"`
	Running   int                   `json:"running"`
	Check     *wireError            `json:"check,omitempty"`
	Heartbeat time.Duration         `json:"hb"`
	Time      time.Time             `json:"time"`
}

// NewBackend returns a Backend that submits its runs to the workers of
// opts.Backend on the pool reached through nc. It creates the pool's
// JetStream streams and buckets that do not exist yet, blocking up to
// opts.SetupTimeout. nc stays the caller's: the Backend neither closes it
// nor sets its handlers; it should reconnect forever (nats.MaxReconnects(-1))
// so that runs survive a NATS restart. opts may be nil; it is copied.
func NewBackend(nc *nats.Conn, opts *Options) (*Backend, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	b := &Backend{nc: nc, js: js, opts: o, calls: map[*call]struct{}{},
		workers: map[string]registration{}, stop: make(chan struct{})}
	b.rc = watchReconnects(nc, b.stop)
	ctx, cancel := context.WithTimeout(context.Background(), o.SetupTimeout)
	defer cancel()
	res, err := setupResources(ctx, b.rc, js, o.SetupTimeout, o.Prefix, o.Replicas, o.Storage)
	if err != nil {
		close(b.stop)
		return nil, err
	}
	b.res = res
	wctx, wcancel := context.WithCancel(context.Background())
	b.cancel = wcancel
	w, err := res.workers.WatchAll(wctx)
	if err != nil {
		wcancel()
		return nil, fmt.Errorf("cluster: watching the workers: %w", err)
	}
	initial := make(chan struct{})
	b.wg.Add(2)
	go b.pump()
	go b.watch(w, initial)
	select {
	case <-initial:
	case <-ctx.Done():
	}
	return b, nil
}

// Close stops the Backend's background work, and it takes no more runs.
// Let the runs in progress end first: without the Backend's heartbeats,
// their workers stop them after WorkerOptions.CallerDeadAfter. It does not
// close the NATS connection.
func (b *Backend) Close() error {
	b.stopOnce.Do(func() {
		close(b.stop)
		b.cancel()
	})
	b.wg.Wait()
	return nil
}

func (b *Backend) closed() bool {
	select {
	case <-b.stop:
		return true
	default:
		return false
	}
}

func (b *Backend) errClosed() error {
	return fmt.Errorf("%s: %w: the Backend is closed", b.opts.Backend, ErrUnavailable)
}

// Name reports the backend the workers run, such as "claude".
func (b *Backend) Name() string { return b.opts.Backend }

// Capabilities reports Options.Capabilities when set, otherwise the
// capabilities a live worker of the backend registered (the zero value
// while none is known).
func (b *Backend) Capabilities() agentcli.Capabilities {
	if b.opts.Capabilities != nil {
		return cloneCaps(*b.opts.Capabilities)
	}
	if r, ok := b.liveWorker(); ok {
		return cloneCaps(r.Caps)
	}
	return agentcli.Capabilities{}
}

// checkLocalOnly checks here what of the request does not cross the wire:
// a host tool's handler (Request.Tools) runs here, so one without a
// handler, or built by NewTool from a type without a JSON schema, is
// refused here as a local backend refuses it.
func (b *Backend) checkLocalOnly(req *agentcli.Request) error {
	for i, t := range req.Tools {
		f := fmt.Sprintf("Tools[%d]", i)
		switch {
		case t.Err() != nil:
			return &agentcli.RequestError{Backend: b.opts.Backend, Field: f, Reason: t.Err().Error()}
		case t.Handler == nil:
			return &agentcli.RequestError{Backend: b.opts.Backend, Field: f + ".Handler", Reason: "not set"}
		}
	}
	return nil
}

// cloneCaps returns a copy of c as the pool offers it: continuing and
// listing are the pool's own, from its session store (see ListSessions),
// and need only resuming of the workers' backend.
func cloneCaps(c agentcli.Capabilities) agentcli.Capabilities {
	c.Attachments = slices.Clone(c.Attachments)
	c.ContinueSession = agentcli.SessionModes{OneShot: c.Resume, Live: c.Resume && c.Sessions}
	c.ListSessions = true
	c.PermissionModes = slices.Clone(c.PermissionModes)
	c.Efforts = slices.Clone(c.Efforts)
	return c
}

// ListSessions returns the sessions of dir that the pool's session store
// holds (those its workers saved with WorkerOptions.Sessions after a run
// or turn in Dir dir, as the caller gave it), newest first, each with the
// time it was saved as Updated and no Title. It implements
// agentcli.ListSessions; Request.Continue takes the first.
func (b *Backend) ListSessions(ctx context.Context, dir string) ([]agentcli.SessionInfo, error) {
	name := b.opts.Backend
	var infos []*jetstream.ObjectInfo
	err := b.rc.retry(ctx, time.Minute, func(ctx context.Context) error {
		var err error
		infos, err = b.res.sessions.List(ctx)
		if errors.Is(err, jetstream.ErrNoObjectsFound) {
			infos, err = nil, nil
		}
		return err
	})
	if err != nil {
		return nil, b.unavailable(ctx, "listing sessions", err)
	}
	var out []agentcli.SessionInfo
	for _, in := range infos {
		id, ok := strings.CutPrefix(in.Name, sessionKey(name, ""))
		if !ok || in.Deleted || in.Metadata[metaBackend] != name || in.Metadata[metaDir] != dir {
			continue
		}
		out = append(out, agentcli.SessionInfo{ID: id, Updated: in.ModTime})
	}
	driver.SortSessions(out)
	return out, nil
}

// resolveContinue turns a Request.Continue into the resumption of the
// newest session the store holds for req.Dir.
func (b *Backend) resolveContinue(ctx context.Context, req *agentcli.Request) error {
	if !req.Continue {
		return nil
	}
	if req.SessionID != "" {
		return &agentcli.RequestError{Backend: b.opts.Backend, Field: "Continue",
			Reason: "conflicts with SessionID: continue the newest session of Dir, or resume SessionID, not both"}
	}
	list, err := b.ListSessions(ctx, req.Dir)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return driver.NoSession(b.opts.Backend, cmp.Or(req.Dir, "the workers' directory"))
	}
	req.SessionID, req.Continue = list[0].ID, false
	return nil
}

// attachmentKinds returns the kinds of attachment the pool's workers
// take: Capabilities.Attachments, or every kind while no worker's
// capabilities are known (a run queued before any worker registered),
// and the worker's backend decides.
func (b *Backend) attachmentKinds() []agentcli.AttachmentKind {
	if b.opts.Capabilities != nil {
		return b.opts.Capabilities.Attachments
	}
	if r, ok := b.liveWorker(); ok {
		return r.Caps.Attachments
	}
	return []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}
}

// loadAttachments checks the attachments of req in this process and
// replaces them by their content (driver.LoadAttachments: each Path read
// here), as a local backend does before it starts anything; a session's
// start takes none (they go with a turn), as locally.
func (b *Backend) loadAttachments(req *agentcli.Request, kind string) error {
	if len(req.Attachments) == 0 {
		return nil
	}
	kinds := b.attachmentKinds()
	if len(kinds) == 0 {
		return &agentcli.UnsupportedError{Backend: b.opts.Backend, Feature: "attachments"}
	}
	if kind == jobSession {
		return &agentcli.RequestError{Backend: b.opts.Backend, Field: "Attachments",
			Reason: "attachments go with a prompt: a live session's with a turn (agentcli.StreamTurn); StartSession and Interactive take none"}
	}
	atts, err := driver.LoadAttachments(b.opts.Backend, kinds, req.Attachments)
	if err != nil {
		return err
	}
	req.Attachments = atts
	return nil
}

// Check reports whether a live worker serves the backend and its CLI is
// reachable there: nil when one worker's check passed, the error of a
// worker's check when all of them failed, and a *agentcli.BinaryError
// matching agentcli.ErrNotFound and ErrNoWorkers when no worker of the
// backend is registered. It does not block.
func (b *Backend) Check(ctx context.Context) error {
	b.regMu.Lock()
	defer b.regMu.Unlock()
	var failed error
	for _, r := range b.workers {
		if r.Backend != b.opts.Backend || time.Since(r.Time) > registryTTL {
			continue
		}
		if r.Check == nil {
			return nil
		}
		if failed == nil {
			failed = decodeError(r.Check)
		}
	}
	if failed != nil {
		return failed
	}
	return &agentcli.BinaryError{Backend: b.opts.Backend, Path: "worker pool " + b.opts.Prefix,
		Err: agentcli.ErrNotFound, Cause: ErrNoWorkers,
		Hint: "start a worker: agentcli-worker -backend " + b.opts.Backend}
}

// liveWorker returns the most recent live registration of the backend.
func (b *Backend) liveWorker() (registration, bool) {
	b.regMu.Lock()
	defer b.regMu.Unlock()
	var best registration
	found := false
	for _, r := range b.workers {
		if r.Backend == b.opts.Backend && time.Since(r.Time) <= registryTTL && (!found || r.Time.After(best.Time)) {
			best, found = r, true
		}
	}
	return best, found
}

// watch keeps the registrations of the workers up to date.
func (b *Backend) watch(w jetstream.KeyWatcher, initial chan struct{}) {
	defer b.wg.Done()
	defer func() { _ = w.Stop() }()
	once := sync.OnceFunc(func() { close(initial) })
	defer once()
	for {
		select {
		case <-b.stop:
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil {
				once()
				continue
			}
			b.regMu.Lock()
			if e.Operation() != jetstream.KeyValuePut {
				delete(b.workers, e.Key())
			} else {
				var r registration
				if json.Unmarshal(e.Value(), &r) == nil {
					r.Time = e.Created() // the server's clock, not the worker's
					b.workers[e.Key()] = r
				}
			}
			b.regMu.Unlock()
		}
	}
}

// track adds or removes a call from those the pump heartbeats.
func (b *Backend) track(c *call, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if on {
		b.calls[c] = struct{}{}
	} else {
		delete(b.calls, c)
	}
}

// snapshot returns the members of set, read under mu, in buf's storage,
// so that a ticker can work on them without holding mu.
func snapshot[T comparable](mu *sync.Mutex, set map[T]struct{}, buf []T) []T {
	mu.Lock()
	defer mu.Unlock()
	buf = buf[:0]
	for v := range set {
		buf = append(buf, v)
	}
	return buf
}

// pump ticks every call in progress each heartbeat interval.
func (b *Backend) pump() {
	defer b.wg.Done()
	t := time.NewTicker(b.opts.Heartbeat)
	defer t.Stop()
	var calls []*call
	for {
		select {
		case <-b.stop:
			return
		case now := <-t.C:
			calls = snapshot(&b.mu, b.calls, calls)
			for _, c := range calls {
				c.tick(now)
			}
			clear(calls)
		}
	}
}

// Run implements agentcli.Backend: it streams the run and returns its
// Result, as the local backends do.
func (b *Backend) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	// driver.Collect keeps the result before a *SessionNotSavedError.
	return driver.Collect(b.opts.Backend, b.Stream(ctx, req))
}

// Stream implements agentcli.Backend: it submits the run to the pool
// when the iteration begins, waits for a worker to take it (bounded by
// ctx only), and yields the worker's events in order.
func (b *Backend) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		r := agentcli.Request{}
		if req != nil {
			r = *req
		}
		if b.closed() {
			yield(agentcli.Event{}, b.errClosed())
			return
		}
		c, err := b.start(ctx, &r, jobRun)
		if err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		defer c.close()
		end, err, broke := c.consume(ctx, r.Timeout, yield)
		if err := endErr(end, err, broke); err != nil {
			yield(agentcli.Event{}, err)
		}
	}
}

// inlineLimit is the largest job that goes in a message; a larger
// request goes to the blobs store.
func (b *Backend) inlineLimit() int {
	return max(int(b.nc.MaxPayload())-8<<10, 4<<10)
}

// submit puts the job of call c on the work queue. A publish that fails
// or whose acknowledgement is lost is retried with the same message id,
// which JetStream deduplicates, until ctx ends.
func (b *Backend) submit(ctx context.Context, c *call, kind string, req *agentcli.Request) error {
	name := b.opts.Backend
	j := job{ID: c.id, Kind: kind, Heartbeat: b.opts.Heartbeat,
		Window: window{Frames: b.opts.Window, Bytes: b.opts.WindowBytes}, Req: toWire(req)}
	j.V = jobVersion(j.Req)
	data, err := json.Marshal(j)
	if err != nil {
		return &agentcli.RequestError{Backend: name, Field: "Request", Reason: err.Error()}
	}
	if len(data) > b.inlineLimit() {
		body, _ := json.Marshal(j.Req)
		if err := b.putBlob(ctx, c.id, body); err != nil {
			return err
		}
		j.Req, j.Blob = nil, c.id
		data, _ = json.Marshal(j)
	}
	subject := workSubject(b.opts.Prefix, name)
	err = b.rc.retry(ctx, 5*time.Second, func(ctx context.Context) error {
		_, err := b.js.Publish(ctx, subject, data, jetstream.WithMsgID(c.id))
		return err
	})
	if err != nil {
		return b.unavailable(ctx, "submitting the run", err)
	}
	return nil
}

// putBlob stores body, a request or a turn too large for a message,
// under name in the blobs store, where its worker reads and deletes it.
// A body over maxBlobBytes, which no worker would read, is a
// *agentcli.RequestError.
func (b *Backend) putBlob(ctx context.Context, name string, body []byte) error {
	if len(body) > maxBlobBytes {
		return &agentcli.RequestError{Backend: b.opts.Backend, Field: "Request",
			Reason: fmt.Sprintf("%d bytes on the wire; a worker reads at most %d", len(body), maxBlobBytes)}
	}
	err := b.rc.retry(ctx, time.Minute, func(ctx context.Context) error {
		_, err := b.res.blobs.PutBytes(ctx, name, body)
		return err
	})
	if err != nil {
		return b.unavailable(ctx, "storing a large request", err)
	}
	return nil
}

// unavailable returns the error of a pool operation that failed: a
// *agentcli.CanceledError when ctx ended, else ErrUnavailable.
func (b *Backend) unavailable(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return &agentcli.CanceledError{Backend: b.opts.Backend, Err: context.Cause(ctx)}
	}
	return fmt.Errorf("%s: %w: %s: %w", b.opts.Backend, ErrUnavailable, what, err)
}

// maxResubmits bounds how many workers are handed a job (or a live
// session's turn) that each died before starting it. The bound stops a
// job that kills the workers that take it from going round the pool.
const maxResubmits = 3

// start submits a job for req and waits until a worker has taken it
// (the handshake done); the call is open then, and the caller closes
// it. It checks req first, its attachments loaded in place (see
// loadAttachments). A job claimed by a worker that died before its handshake was never
// started (a worker starts only on the caller's go-ahead, which is now
// refused to it): it is submitted again under a new id, up to
// maxResubmits times.
func (b *Backend) start(ctx context.Context, req *agentcli.Request, kind string) (*call, error) {
	if err := b.checkLocalOnly(req); err != nil {
		return nil, err
	}
	if err := b.resolveContinue(ctx, req); err != nil {
		return nil, err
	}
	if err := b.loadAttachments(req, kind); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		c := b.newCall(req)
		if err := c.open(); err != nil {
			return nil, err
		}
		err := b.submit(ctx, c, kind, req)
		if err == nil {
			err = b.waitAccept(ctx, c)
		}
		if err == nil {
			return c, nil
		}
		c.close()
		var lost *WorkerLostError
		if !errors.As(err, &lost) || lost.Started {
			return nil, err
		}
		lost.tries = attempt + 1
		if lost.tries >= maxResubmits {
			return nil, err
		}
		b.opts.Logger.Warn("cluster: resubmitting a job its worker never started", "worker", lost.Worker)
	}
}

// waitAccept waits until a worker takes the job of c. A worker that
// claimed the job and stays silent for WorkerDeadAfter (it died between
// the two) ends the wait with a *WorkerLostError.
func (b *Backend) waitAccept(ctx context.Context, c *call) error {
	poll := time.NewTicker(b.opts.QueuePoll)
	defer poll.Stop()
	var claimer string
	var since time.Time
	for {
		c.mu.Lock()
		accepted := c.accepted
		c.mu.Unlock()
		if accepted {
			return nil
		}
		select {
		case <-c.notify:
		case <-ctx.Done():
			return b.abandon(ctx, c)
		case now := <-poll.C:
			if !b.nc.IsConnected() {
				since = now
				continue
			}
			gctx, cancel := b.rc.attempt(ctx, 2*b.opts.Heartbeat)
			e, err := b.res.claims.Get(gctx, c.id)
			cancel()
			if err != nil {
				continue
			}
			v := string(e.Value())
			worker := claimWorker(v)
			if worker == "" {
				continue
			}
			if v != claimer {
				claimer, since = v, now
				continue
			}
			if now.Sub(since) <= b.opts.WorkerDeadAfter {
				continue
			}
			c.mu.Lock()
			accepted = c.accepted
			c.refuse = !accepted
			c.mu.Unlock()
			if !accepted {
				return &WorkerLostError{Backend: b.opts.Backend, Worker: worker, Silence: now.Sub(since),
					Reason: "it claimed the run and never started it"}
			}
		}
	}
}

// abandon withdraws the job of c, whose ctx ended before a worker took
// it: a worker that has not claimed it yet will skip it, one that has
// is told no at its handshake.
func (b *Backend) abandon(ctx context.Context, c *call) error {
	canceled := &agentcli.CanceledError{Backend: b.opts.Backend, Err: context.Cause(ctx)}
	c.mu.Lock()
	c.refuse = true
	accepted := c.accepted
	c.mu.Unlock()
	if accepted {
		c.stop(cancelCtx, b.opts.WorkerDeadAfter)
		return canceled
	}
	wait := 2 * b.opts.Heartbeat
	kctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := b.res.claims.Create(kctx, c.id, []byte("x"))
	if errors.Is(err, jetstream.ErrKeyExists) {
		// A worker claimed it: wait briefly for its handshake, to tell
		// it no rather than leave it waiting for a caller that left.
		for {
			c.mu.Lock()
			refused := c.refused
			c.mu.Unlock()
			if refused {
				break
			}
			select {
			case <-c.notify:
				continue
			case <-kctx.Done():
			}
			break
		}
	}
	return canceled
}
