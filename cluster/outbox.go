package cluster

import (
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// outbox is the worker's end of one stream (a run or a turn): it numbers
// the frames it publishes to the caller, keeps those the caller has not
// consumed, and blocks its senders while a window of them is in flight.
//
// Delivery is go-back-N over core NATS: the caller acks what it has
// received (so the outbox retransmits only beyond that, after a quiet
// retransmission interval or at once when the caller reports a gap) and
// what it has consumed (which opens the window). A frame lost in a
// reconnection is thus sent again, and a caller that reads slowly holds
// back its own run and nothing else: the run's goroutine waits in send,
// the backend stops reading the CLI, and the CLI blocks on its pipe.
type outbox struct {
	nc      *nats.Conn
	subject string // the caller's subject of the stream

	chunk       int // largest frame payload
	window      int // frames in flight, at most
	windowBytes int // bytes in flight, at most (one frame may exceed it)

	// sendMu serializes senders, so that the pieces of a large message
	// are consecutive frames.
	sendMu sync.Mutex

	mu        sync.Mutex
	next      uint64    // sequence number of the next frame
	recv      uint64    // highest sequence the caller has received
	consumed  uint64    // highest sequence the caller has consumed
	pending   []pframe  // frames after consumed, in order
	pendBytes int       // bytes of pending
	progress  time.Time // when recv last advanced or frames were resent
	backoff   int       // timer retransmissions since recv last advanced
	heard     time.Time // when the caller was last heard
	room      chan struct{}
	dead      chan struct{}
	deadErr   error
	endSeq    uint64 // sequence of the kindEnd frame, once sent
}

type pframe struct {
	seq  uint64
	data []byte
}

func newOutbox(nc *nats.Conn, subject string, chunk, window, windowBytes int) *outbox {
	now := time.Now()
	return &outbox{
		nc: nc, subject: subject, chunk: chunk, window: window, windowBytes: windowBytes,
		next: 1, progress: now, heard: now,
		room: make(chan struct{}, 1), dead: make(chan struct{}),
	}
}

// errStreamDone is the error of a send on a stream whose end was sent.
var errStreamDone = errors.New("stream already ended")

// send publishes one message, in frames of at most chunk bytes, waiting
// for room in the window. It fails once the stream is abandoned (the
// caller is lost, or the connection closed).
func (o *outbox) send(kind byte, payload []byte) error {
	o.sendMu.Lock()
	defer o.sendMu.Unlock()
	for {
		piece, last := payload, true
		if len(piece) > o.chunk {
			piece, last = payload[:o.chunk], false
		}
		k := kind
		if !last {
			k = kindChunk
		}
		if err := o.sendFrame(k, piece); err != nil {
			return err
		}
		if last {
			return nil
		}
		payload = payload[len(piece):]
	}
}

// sendFrame waits for room and publishes one frame.
func (o *outbox) sendFrame(kind byte, piece []byte) error {
	for {
		o.mu.Lock()
		if o.deadErr != nil {
			err := o.deadErr
			o.mu.Unlock()
			return err
		}
		if o.endSeq != 0 {
			o.mu.Unlock()
			return errStreamDone
		}
		inFlight := len(o.pending)
		if inFlight == 0 || (inFlight < o.window && o.pendBytes+len(piece) <= o.windowBytes) {
			seq := o.next
			o.next++
			data := newFrame(kind, seq, piece)
			o.pending = append(o.pending, pframe{seq: seq, data: data})
			o.pendBytes += len(data)
			if kind == kindEnd {
				o.endSeq = seq
			}
			if len(o.pending) == 1 {
				o.progress = time.Now()
			}
			// Publishing under mu keeps frames in sequence order with
			// retransmissions. While the connection is down, the client
			// buffers; a frame it cannot take is resent later.
			err := o.nc.Publish(o.subject, data)
			o.mu.Unlock()
			if errors.Is(err, nats.ErrConnectionClosed) {
				o.abandon(err)
				return err
			}
			return nil
		}
		o.mu.Unlock()
		select {
		case <-o.room:
		case <-o.dead:
		}
	}
}

// ack records a kindAck from the caller.
func (o *outbox) ack(payload []byte) {
	recv, n := binary.Uvarint(payload)
	if n <= 0 {
		return
	}
	consumed, m := binary.Uvarint(payload[n:])
	if m <= 0 {
		return
	}
	var flags byte
	if len(payload) > n+m {
		flags = payload[n+m]
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.heard = time.Now()
	if recv >= o.next {
		recv = o.next - 1 // a hostile or confused peer
	}
	if consumed > recv {
		consumed = recv
	}
	advanced := false
	if recv > o.recv {
		o.recv = recv
		o.progress = time.Now()
		o.backoff = 0
		advanced = true
	}
	if consumed > o.consumed {
		advanced = true
		o.consumed = consumed
		i := 0
		for i < len(o.pending) && o.pending[i].seq <= consumed {
			o.pendBytes -= len(o.pending[i].data)
			o.pending[i] = pframe{}
			i++
		}
		o.pending = o.pending[i:]
	}
	if advanced {
		// Wakes a sender waiting for room, or waitDelivered.
		select {
		case o.room <- struct{}{}:
		default:
		}
	}
	if flags&ackGap != 0 {
		o.retransmitLocked()
	}
}

// heardFrom records a message from the caller other than an ack.
func (o *outbox) heardFrom() {
	o.mu.Lock()
	o.heard = time.Now()
	o.mu.Unlock()
}

// retransmitLocked publishes again every frame the caller has not
// received.
func (o *outbox) retransmitLocked() {
	for _, f := range o.pending {
		if f.seq > o.recv {
			if err := o.nc.Publish(o.subject, f.data); err != nil {
				break
			}
		}
	}
	o.progress = time.Now()
}

// tick is called every heartbeat interval: it sends a heartbeat,
// retransmits frames the caller has not received for rto (doubling with
// each retransmission that brings no progress: a caller busy with a large
// message is not a lost frame; real losses are reported by the caller at
// once), and abandons the stream when the caller was not heard for
// deadAfter while the connection was up. A stream whose sender is
// publishing is skipped: its frames say the worker is alive.
func (o *outbox) tick(now time.Time, rto, deadAfter time.Duration) {
	if !o.mu.TryLock() {
		return
	}
	defer o.mu.Unlock()
	if o.deadErr != nil {
		return
	}
	if !o.nc.IsConnected() {
		// Time without a connection is nobody's silence.
		o.heard, o.progress = now, now
		return
	}
	if now.Sub(o.heard) > deadAfter {
		o.abandonLocked(ErrCallerLost)
		return
	}
	if len(o.pending) > 0 && o.pending[len(o.pending)-1].seq > o.recv && now.Sub(o.progress) >= rto<<min(o.backoff, 6) {
		o.retransmitLocked()
		o.backoff++
	}
	hb := newFrame(kindHeartbeat, 0, binary.AppendUvarint(nil, o.next-1))
	_ = o.nc.Publish(o.subject, hb)
}

// abandon ends the stream without delivering the rest: senders fail with
// err.
func (o *outbox) abandon(err error) {
	o.mu.Lock()
	o.abandonLocked(err)
	o.mu.Unlock()
}

func (o *outbox) abandonLocked(err error) {
	if o.deadErr == nil {
		o.deadErr = err
		close(o.dead)
	}
}

// delivered reports whether the caller has received the end frame, and
// whether the stream was abandoned.
func (o *outbox) delivered() (done, abandoned bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.endSeq != 0 && o.recv >= o.endSeq, o.deadErr != nil
}

// waitDelivered waits until the caller has received the end frame, the
// stream is abandoned, or max passes.
func (o *outbox) waitDelivered(max time.Duration) {
	t := time.NewTimer(max)
	defer t.Stop()
	for {
		if done, abandoned := o.delivered(); done || abandoned {
			return
		}
		select {
		case <-o.room:
		case <-o.dead:
			return
		case <-t.C:
			return
		}
	}
}
