package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/nats-io/nats.go"
)

// call is the caller's end of one stream (a run, a turn, or the start of
// a live session). Frames arrive on the stream's subject in the NATS
// subscription's goroutine (receive), which puts them in order, acks
// them, starts permission callbacks, and queues them; the goroutine that
// iterates the run (consume) takes them from the queue, calls OnText and
// the wire log, and yields the events.
type call struct {
	b       *Backend
	id      string
	subject string
	req     *agentcli.Request // the caller's: OnText, OnPermission, WireLog
	sub     *nats.Subscription

	// onSession, if set, is called with each session id seen.
	onSession func(string)

	notify     chan struct{} // cap 1: something changed
	permCtx    context.Context
	permCancel context.CancelFunc

	mu            sync.Mutex
	ctl           string // the worker's subject of the stream
	worker        string
	workerHB      time.Duration
	accepted      bool
	refuse        bool // answer handshakes with kindNo
	refused       bool // a handshake was answered with kindNo
	expect        uint64
	partial       []byte
	queue         []item
	queueBytes    int
	consumed      uint64
	consumedBytes int // since the last ack
	ackedRecv     uint64
	ackedConsumed uint64
	heard         time.Time
	lastGap       time.Time
	endSeen       bool
	lost          error
	perms         map[uint64]context.CancelFunc
	logFailed     bool
}

type item struct {
	kind    byte
	seq     uint64
	payload []byte
}

func (b *Backend) newCall(req *agentcli.Request) *call {
	id := newID()
	c := &call{
		b: b, id: id, subject: callerSubject(b.opts.Prefix, id), req: req,
		notify: make(chan struct{}, 1), expect: 1, perms: map[uint64]context.CancelFunc{},
	}
	c.permCtx, c.permCancel = context.WithCancel(context.Background())
	return c
}

// open subscribes to the stream's subject and registers the call for
// heartbeats.
func (c *call) open() error {
	sub, err := c.b.nc.Subscribe(c.subject, c.receive)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", c.b.opts.Backend, ErrUnavailable, err)
	}
	// A slow consumer is bounded by the window; the client's own limits
	// need only exceed it.
	_ = sub.SetPendingLimits(-1, -1)
	c.sub = sub
	c.b.track(c, true)
	return nil
}

// close unsubscribes and ends pending permission callbacks.
func (c *call) close() {
	c.b.track(c, false)
	if c.sub != nil {
		_ = c.sub.Unsubscribe()
	}
	c.permCancel()
}

// pinned marks a call whose worker is known beforehand (a turn of a live
// session).
func (c *call) pinned(worker string, hb time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accepted, c.worker, c.workerHB = true, worker, hb
	c.ctl = workerSubject(c.b.opts.Prefix, worker, c.id)
	c.heard = time.Now()
}

func (c *call) signal() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// receive handles one frame from the worker.
func (c *call) receive(m *nats.Msg) {
	kind, seq, payload, err := parseFrame(m.Data)
	if err != nil {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch kind {
	case kindAccept:
		c.handshake(m, payload, now)
		return
	case kindHeartbeat:
		if !c.accepted {
			return
		}
		c.heard = now
		if last, n := binary.Uvarint(payload); n > 0 && last >= c.expect {
			c.sendAckLocked(ackGap) // frames are missing at the tail
		}
		return
	}
	if !c.accepted || seq == 0 || c.lost != nil {
		return
	}
	c.heard = now
	if seq < c.expect {
		return // a retransmission of what we have
	}
	if seq > c.expect {
		if now.Sub(c.lastGap) > c.b.opts.Heartbeat/4 {
			c.lastGap = now
			c.sendAckLocked(ackGap)
		}
		return
	}
	c.expect++
	if kind == kindChunk {
		if !c.chunkLocked(seq, payload) {
			return
		}
	} else if !c.messageLocked(kind, seq, payload) {
		return
	}
	if kind == kindEnd || c.expect-1-c.ackedRecv >= uint64(c.b.opts.Window/4+1) || c.consumedEnough() {
		c.sendAckLocked(0)
	}
}

// chunkLocked holds payload, the frame seq's piece of a message that
// frames to come complete; false when the call failed (the message is
// over MaxMessageBytes). c.mu is held.
func (c *call) chunkLocked(seq uint64, payload []byte) bool {
	if len(c.partial)+len(payload) > c.b.opts.MaxMessageBytes {
		c.failLocked(fmt.Errorf("%s: worker %s sent a message over %d bytes (Options.MaxMessageBytes)",
			c.b.opts.Backend, c.worker, c.b.opts.MaxMessageBytes))
		return false
	}
	c.partial = append(c.partial, payload...)
	if len(c.queue) == 0 {
		// Everything before is consumed and the pieces are held
		// here (bounded by MaxMessageBytes): they must not hold the
		// window, or a message larger than it could never complete.
		c.consumed = seq
		c.consumedBytes += len(payload)
	}
	return true
}

// messageLocked takes the last frame (seq, of kind) of a message: a
// permission request or its end is handled here, anything else is
// queued for the call's reader; false when the call failed (the worker
// overran the window). c.mu is held.
func (c *call) messageLocked(kind byte, seq uint64, payload []byte) bool {
	full := payload
	if c.partial != nil {
		full = append(c.partial, payload...)
		c.partial = nil
	}
	switch kind {
	case kindPermit:
		c.permitLocked(full)
		full = nil
	case kindCall:
		c.callLocked(full)
		full = nil
	case kindPermitEnd:
		if id, n := binary.Uvarint(full); n > 0 {
			if cancel := c.perms[id]; cancel != nil {
				cancel()
			}
		}
		full = nil
	case kindEnd:
		c.endSeen = true
	}
	if len(c.queue) > 4*c.b.opts.Window+16 || c.queueBytes > 2*c.b.opts.WindowBytes+c.b.opts.MaxMessageBytes {
		c.failLocked(fmt.Errorf("%s: worker %s overran the window", c.b.opts.Backend, c.worker))
		return false
	}
	c.queue = append(c.queue, item{kind: kind, seq: seq, payload: full})
	c.queueBytes += len(full)
	c.signal()
	return true
}

// consumedEnough reports whether consumption advanced enough since the
// last ack to tell the worker.
func (c *call) consumedEnough() bool {
	return c.consumed-c.ackedConsumed >= uint64(c.b.opts.Window/4+1) || c.consumedBytes >= c.b.opts.WindowBytes/4
}

// handshake answers a worker's kindAccept.
func (c *call) handshake(m *nats.Msg, payload []byte, now time.Time) {
	if m.Reply == "" {
		return
	}
	var a wireAccept
	if err := json.Unmarshal(payload, &a); err != nil || !validToken(a.Worker) ||
		c.refuse || (c.accepted && a.Worker != c.worker) {
		c.refused = true
		_ = m.Respond(newFrame(kindNo, 0, nil))
		c.signal()
		return
	}
	if !c.accepted {
		c.accepted, c.worker, c.workerHB, c.heard = true, a.Worker, a.Heartbeat, now
		c.ctl = workerSubject(c.b.opts.Prefix, a.Worker, c.id)
		c.signal()
	}
	_ = m.Respond(newFrame(kindGo, 0, nil))
}

// failLocked ends the call with a protocol error.
func (c *call) failLocked(err error) {
	if c.lost == nil {
		c.lost = err
		c.signal()
	}
}

// sendAckLocked tells the worker what was received and consumed.
func (c *call) sendAckLocked(flags byte) {
	if c.ctl == "" {
		return
	}
	recv := c.expect - 1
	b := make([]byte, 0, 24)
	b = appendFrame(b, kindAck, 0)
	b = binary.AppendUvarint(b, recv)
	b = binary.AppendUvarint(b, c.consumed)
	b = append(b, flags)
	_ = c.b.nc.Publish(c.ctl, b)
	c.ackedRecv, c.ackedConsumed, c.consumedBytes = recv, c.consumed, 0
}

// tick is called every heartbeat interval: it acks (which tells the
// worker the caller is alive) and finds the worker lost after its
// silence.
func (c *call) tick(now time.Time) {
	if !c.mu.TryLock() {
		return // receiving: the worker is not silent
	}
	defer c.mu.Unlock()
	if !c.accepted || c.endSeen || c.lost != nil {
		return
	}
	if !c.b.nc.IsConnected() {
		c.heard = now // time without a connection is nobody's silence
		return
	}
	if silence := now.Sub(c.heard); silence > c.deadAfterLocked() {
		c.lost = &WorkerLostError{Backend: c.b.opts.Backend, Worker: c.worker, Started: true,
			Silence: silence, Reason: "no heartbeat"}
		c.signal()
		return
	}
	c.sendAckLocked(0)
}

func (c *call) deadAfterLocked() time.Duration {
	return max(c.b.opts.WorkerDeadAfter, 3*c.workerHB)
}

// pop takes the next queued frame; when there is none it reports
// whether the call failed.
func (c *call) pop() (item, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) > 0 {
		it := c.queue[0]
		c.queue[0] = item{}
		c.queue = c.queue[1:]
		c.queueBytes -= len(it.payload)
		return it, nil, true
	}
	return item{}, c.lost, false
}

// done records that the frame it was consumed.
func (c *call) done(it item) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.consumed = it.seq
	if len(c.queue) == 0 {
		c.consumed = c.expect - 1 // the rest are pieces held in partial
	}
	c.consumedBytes += len(it.payload)
	if c.consumedEnough() {
		c.sendAckLocked(0)
	}
}

// consume delivers the stream to yield until it ends. It returns the end
// frame (nil when none came; when the caller stopped the stream, the end
// that came after), the error that ends the caller's sequence (nil when
// the stream ended as the worker said, whose error is in end), and
// whether yield asked to stop. timeout, when positive, is the
// Request.Timeout the worker enforces; the caller gives up some time
// after it.
// endErr is the error a stream yields last after consume returned end, err
// and broke: nil when the consumer stopped (broke) or the call succeeded.
func endErr(end *wireEnd, err error, broke bool) error {
	switch {
	case broke:
		return nil
	case err != nil:
		return err
	case end != nil && end.Err != nil:
		return decodeError(end.Err)
	case end != nil && end.SaveErr != nil:
		return decodeError(end.SaveErr)
	}
	return nil
}

func (c *call) consume(ctx context.Context, timeout time.Duration, yield func(agentcli.Event, error) bool) (end *wireEnd, err error, broke bool) {
	var backstop <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout + c.b.opts.WorkerDeadAfter)
		defer t.Stop()
		backstop = t.C
	}
	name := c.b.opts.Backend
	for {
		it, lost, ok := c.pop()
		if !ok {
			if lost != nil {
				c.stop(cancelCtx, 0)
				return nil, lost, false
			}
			select {
			case <-c.notify:
			case <-ctx.Done():
				e := c.stop(cancelCtx, c.b.opts.WorkerDeadAfter)
				return e, &agentcli.CanceledError{Backend: name, Err: context.Cause(ctx)}, false
			case <-backstop:
				e := c.stop(cancelTimeout, c.b.opts.WorkerDeadAfter)
				if e != nil && e.Err != nil && e.Err.Type == "timeout" {
					return e, nil, false
				}
				return e, &agentcli.TimeoutError{Backend: name, Timeout: timeout}, false
			}
			continue
		}
		switch it.kind {
		case kindEvent:
			ev, w, err := decodeEvent(it.payload)
			if err != nil {
				c.stop(cancelCtx, c.b.opts.WorkerDeadAfter)
				return nil, &agentcli.ParseError{Backend: name, Err: fmt.Errorf("event from worker %s: %w", c.worker, err)}, false
			}
			if ctx.Err() != nil {
				c.stop(cancelCtx, c.b.opts.WorkerDeadAfter)
				return nil, &agentcli.CanceledError{Backend: name, Err: context.Cause(ctx)}, false
			}
			if ev.SessionID != "" && c.onSession != nil {
				c.onSession(ev.SessionID)
			}
			if c.req.OnText != nil {
				for _, t := range w.onTexts(ev) {
					c.req.OnText(t)
				}
			}
			c.done(it)
			if !yield(ev, nil) {
				c.stop(cancelBreak, c.b.opts.WorkerDeadAfter)
				return nil, nil, true
			}
		case kindWireLog:
			c.writeLog(it.payload)
			c.done(it)
		case kindEnd:
			c.done(it)
			var e wireEnd
			if err := json.Unmarshal(it.payload, &e); err != nil {
				return nil, &agentcli.ParseError{Backend: name, Err: fmt.Errorf("end from worker %s: %w", c.worker, err)}, false
			}
			if e.SessionID != "" && c.onSession != nil {
				c.onSession(e.SessionID)
			}
			return &e, nil, false
		default:
			c.done(it) // permission markers, unknown kinds
		}
	}
}

// writeLog writes one wire-log record to Request.WireLog; a write error
// stops the log, not the run.
func (c *call) writeLog(rec []byte) {
	if c.req.WireLog == nil || c.logFailed {
		return
	}
	if _, err := c.req.WireLog.Write(rec); err != nil {
		c.logFailed = true
	}
}

// stop asks the worker to end the stream and waits up to wait for its
// end, consuming (and dropping) what arrives meanwhile.
func (c *call) stop(reason byte, wait time.Duration) *wireEnd {
	c.permCancel()
	c.mu.Lock()
	ctl, lost := c.ctl, c.lost
	c.mu.Unlock()
	if ctl == "" || lost != nil || wait <= 0 {
		if ctl != "" {
			go c.b.request(ctl, newFrame(kindCancel, 0, []byte{reason}), 3)
		}
		return nil
	}
	go c.b.request(ctl, newFrame(kindCancel, 0, []byte{reason}), 0)
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		it, lost, ok := c.pop()
		if !ok {
			if lost != nil {
				return nil
			}
			select {
			case <-c.notify:
			case <-t.C:
				return nil
			}
			continue
		}
		c.done(it)
		if it.kind == kindEnd {
			var e wireEnd
			if json.Unmarshal(it.payload, &e) == nil {
				if e.SessionID != "" && c.onSession != nil {
					c.onSession(e.SessionID)
				}
				return &e
			}
			return nil
		}
	}
}

// permitLocked starts the caller's permission callback for a request
// from the worker.
func (c *call) permitLocked(payload []byte) {
	p, err := unmarshalPermit(payload)
	if err != nil || c.req.OnPermission == nil {
		return // the worker's deadline refuses it
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = agentcli.DefaultPermissionTimeout
	}
	ctx, cancel := context.WithTimeout(c.permCtx, timeout)
	c.perms[p.ID] = cancel
	go c.decide(ctx, cancel, p)
}

// decide runs the permission callback and sends its decision.
func (c *call) decide(ctx context.Context, cancel context.CancelFunc, p wirePermit) {
	defer cancel()
	d := callPermission(ctx, c.req.OnPermission, &p.Req)
	c.mu.Lock()
	delete(c.perms, p.ID)
	ctl := c.ctl
	c.mu.Unlock()
	if ctx.Err() != nil {
		return // the worker has answered with the default decision
	}
	payload, err := marshalDecision(wireDecision{ID: p.ID, Decision: d})
	if err != nil {
		return
	}
	c.send(ctx, ctl, newFrame(kindDecision, 0, payload))
}

func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Hour)
}

// callPermission calls f, refusing when it panics (as the backends do).
func callPermission(ctx context.Context, f agentcli.PermissionFunc, pr *agentcli.PermissionRequest) (d agentcli.PermissionDecision) {
	defer func() {
		if recover() != nil {
			d = agentcli.PermissionDecision{Kind: agentcli.RejectOnce}
		}
	}()
	return f(ctx, pr)
}

// request sends a request to a worker and retries on timeouts, up to
// attempts times (0: until the worker is gone or answers, for at most
// WorkerDeadAfter). It returns the reply's payload.
func (b *Backend) request(subject string, frame []byte, attempts int) ([]byte, error) {
	deadline := time.Now().Add(b.opts.WorkerDeadAfter)
	for i := 0; attempts == 0 || i < attempts; i++ {
		msg, err := b.nc.Request(subject, frame, 2*b.opts.Heartbeat)
		if err == nil {
			return parseReply(msg.Data)
		}
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrConnectionClosed) || time.Now().After(deadline) {
			return nil, err
		}
	}
	return nil, nats.ErrTimeout
}
