package cluster

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// reconnects follows a connection's reconnections. A JetStream request
// in flight when the connection dropped usually lost its reply with it
// and would wait for its whole deadline; an attempt made under
// reconnects.attempt is abandoned at the reconnection instead, and
// retried at once. (Measured: after a server restart, about one object
// store Put in ten otherwise waits for its deadline.)
type reconnects struct {
	nc *nats.Conn

	mu sync.Mutex
	n  uint64
	ch chan struct{} // closed at the next reconnection
}

// watchReconnects polls nc's reconnection count until stop is closed.
func watchReconnects(nc *nats.Conn, stop <-chan struct{}) *reconnects {
	r := &reconnects{nc: nc, n: nc.Stats().Reconnects, ch: make(chan struct{})}
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if n := nc.Stats().Reconnects; n != r.n {
				r.mu.Lock()
				r.n = n
				close(r.ch)
				r.ch = make(chan struct{})
				r.mu.Unlock()
			}
		}
	}()
	return r
}

// errReconnected is the cause of an attempt abandoned at a reconnection.
var errReconnected = errors.New("connection reestablished during the request")

// attempt returns a context for one attempt of a request: ctx bounded by
// d (none when d is 0) and ended by the next reconnection.
func (r *reconnects) attempt(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	r.mu.Lock()
	ch := r.ch
	r.mu.Unlock()
	actx, cancel := ctx, context.CancelFunc(func() {})
	if d > 0 {
		actx, cancel = context.WithTimeoutCause(ctx, d, context.DeadlineExceeded)
	}
	cctx, ccancel := context.WithCancelCause(actx)
	go func() {
		select {
		case <-ch:
			ccancel(errReconnected)
		case <-cctx.Done():
		}
	}()
	return cctx, func() { ccancel(context.Canceled); cancel() }
}

// permanent marks an error that retrying cannot cure.
type permanent struct{ err error }

func (p *permanent) Error() string { return p.err.Error() }
func (p *permanent) Unwrap() error { return p.err }

// retry calls f until it succeeds, ctx ends, or the connection is
// closed, backing off between attempts; each attempt has per (0: no
// limit of its own) and ends at a reconnection. An error that is a *permanent, or wraps
// nats.ErrMaxPayload, is final; retry returns the error *permanent
// wraps.
func (r *reconnects) retry(ctx context.Context, per time.Duration, f func(context.Context) error) error {
	wait := 20 * time.Millisecond
	for {
		actx, cancel := r.attempt(ctx, per)
		err := f(actx)
		cancel()
		var p *permanent
		if errors.As(err, &p) {
			return p.err
		}
		if err == nil || ctx.Err() != nil || errors.Is(err, nats.ErrConnectionClosed) ||
			errors.Is(err, nats.ErrMaxPayload) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait = min(2*wait, time.Second)
	}
}
