package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/nats-io/nats.go"
)

// stream is the worker's end of one stream: a run, a turn of a live
// session, or a live session's start.
type stream struct {
	w         *Worker
	id        string
	out       *outbox
	sub       *nats.Subscription
	ctx       context.Context // the run's; cancelled by the caller's kindCancel
	cancel    context.CancelCauseFunc
	deadAfter time.Duration // the caller's silence that abandons the stream

	mu      sync.Mutex
	texts   []string
	permSeq uint64 // the ids of permission requests and calls
	waiting map[uint64]chan agentcli.PermissionDecision
	returns map[uint64]chan wireReturn
	fetched map[uint64]bool // calls whose return is being read from the blobs store
}

// Causes of a run stopped by its caller.
var (
	errCallerCanceled = errors.New("canceled by the caller")
	errCallerBroke    = errors.New("the caller stopped reading the run")
	errCallerTimeout  = errors.New("the caller's time for the run ran out")
)

// callbacks are the stand-ins the worker gives its backend for the
// caller's Request callbacks and writer; relay carries the calls of the
// others (see standIns).
type callbacks struct {
	text       func(string)
	permission agentcli.PermissionFunc
	log        io.Writer
	relay      relayFunc
}

func (s *stream) callbacks() callbacks {
	return callbacks{text: s.onText, permission: s.onPermission, log: streamLog{s}, relay: s.relay}
}

// control handles a message from the caller on the stream's control
// subject.
func (s *stream) control(m *nats.Msg) {
	kind, _, payload, err := parseFrame(m.Data)
	if err != nil {
		return
	}
	switch kind {
	case kindAck:
		s.out.ack(payload)
	case kindCancel:
		s.out.heardFrom()
		cause := errCallerCanceled
		if len(payload) > 0 {
			switch payload[0] {
			case cancelBreak:
				cause = errCallerBroke
			case cancelTimeout:
				cause = errCallerTimeout
			}
		}
		s.cancel(cause)
		_ = m.Respond(newFrame(replyOK, 0, nil))
	case kindDecision:
		s.out.heardFrom()
		if d, err := unmarshalDecision(payload); err == nil {
			s.mu.Lock()
			ch := s.waiting[d.ID]
			s.mu.Unlock()
			if ch != nil {
				deliver(ch, d.Decision)
			}
		}
		_ = m.Respond(newFrame(replyOK, 0, nil))
	case kindReturn:
		s.out.heardFrom()
		s.returned(payload)
		_ = m.Respond(newFrame(replyOK, 0, nil))
	}
}

// onText is the stand-in for Request.OnText: the pieces go with the next
// event, so the caller calls OnText with them just before yielding it, as
// a local backend does.
func (s *stream) onText(t string) {
	s.mu.Lock()
	s.texts = append(s.texts, t)
	s.mu.Unlock()
}

func (s *stream) takeTexts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.texts
	s.texts = nil
	return t
}

// onPermission is the stand-in for Request.OnPermission: it sends the
// request to the caller, whose callback decides, and waits for the
// decision until the request's context ends (its deadline, or the turn
// interrupted or cancelled), when it tells the caller to stop waiting.
func (s *stream) onPermission(ctx context.Context, pr *agentcli.PermissionRequest) agentcli.PermissionDecision {
	timeout := agentcli.DefaultPermissionTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	d, ok := await(ctx, s, s.waiting, kindPermit, func(id uint64) ([]byte, error) {
		return marshalPermit(wirePermit{ID: id, Req: *pr, Timeout: timeout})
	})
	if !ok {
		return agentcli.PermissionDecision{Kind: agentcli.RejectOnce}
	}
	return d
}

// await sends the caller a request of kind (a permission request or a
// call) under a new id, its payload made by payload, and waits in
// waiting (one of s's maps) for what the caller answers until ctx ends,
// when it tells the caller to stop waiting (kindPermitEnd). ok is false
// when no answer came or the request could not be sent.
func await[T any](ctx context.Context, s *stream, waiting map[uint64]chan T, kind byte, payload func(id uint64) ([]byte, error)) (v T, ok bool) {
	ch := make(chan T, 1)
	s.mu.Lock()
	s.permSeq++
	id := s.permSeq
	waiting[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(waiting, id)
		s.mu.Unlock()
	}()
	p, err := payload(id)
	if err != nil || s.out.send(kind, p) != nil {
		return v, false
	}
	select {
	case v = <-ch:
		return v, true
	case <-ctx.Done():
		_ = s.out.send(kindPermitEnd, binary.AppendUvarint(nil, id))
		return v, false
	}
}

// deliver hands an answer to its waiter (see await), unless one is there
// already.
func deliver[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}

// streamLog is the stand-in for Request.WireLog: each record goes to the
// caller, in order with the events.
type streamLog struct{ s *stream }

func (l streamLog) Write(p []byte) (int, error) {
	if err := l.s.out.send(kindWireLog, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// forward sends the events of seq to the caller until seq ends. It
// returns the last session id seen, the error seq ended with, and
// whether the stream was abandoned (the caller lost, the connection
// closed), in which case the run was stopped and nothing more can be
// sent.
func (s *stream) forward(seq iter.Seq2[agentcli.Event, error]) (sid string, runErr error, abandoned bool) {
	for ev, err := range seq {
		if err != nil {
			return sid, err, false
		}
		if ev.SessionID != "" {
			sid = ev.SessionID
		}
		if ev.Kind == agentcli.EventResult && ev.Result != nil && ev.Result.SessionID != "" {
			sid = ev.Result.SessionID
		}
		payload, err := encodeEvent(ev, s.takeTexts())
		if err != nil {
			// Not representable in JSON (a NaN cost): say so in its place.
			payload, _ = encodeEvent(agentcli.Event{Kind: agentcli.EventNotice, SessionID: ev.SessionID,
				Text: "cluster: an event of kind " + string(ev.Kind) + " could not be encoded: " + err.Error()}, nil)
		}
		if err := s.out.send(kindEvent, payload); err != nil {
			s.cancel(err) // breaking out below stops and reaps the CLI
			s.w.opts.Logger.Warn("cluster: run abandoned", "worker", s.w.opts.ID, "stream", s.id, "err", err)
			return sid, err, true
		}
	}
	return sid, nil, false
}

// end sends the stream's last frame and waits up to wait for the caller
// to receive it.
func (s *stream) end(e wireEnd, wait time.Duration) {
	payload, err := json.Marshal(e)
	if err != nil {
		payload, _ = json.Marshal(wireEnd{Err: &wireError{Msg: "cluster: end not encodable: " + err.Error()}})
	}
	if s.out.send(kindEnd, payload) == nil {
		s.out.waitDelivered(wait)
	}
}

// close releases the stream.
func (s *stream) close() {
	if s.sub != nil {
		_ = s.sub.Unsubscribe()
	}
	s.w.mu.Lock()
	delete(s.w.streams, s)
	s.w.mu.Unlock()
	s.out.abandon(errStreamDone)
	s.cancel(errStreamDone)
}
