package agentcli

import (
	"context"
	"sync"
	"time"
)

// Pool keeps live sessions of one backend started ahead of need, so that
// a conversation's first prompt does not wait for the CLI to start: a CLI
// takes from a fraction of a second (codex) to seconds (opencode) to boot
// and finish its protocol's handshake, none of which depends on the
// prompt. Take hands out a session that is ready (and starts a
// replacement); an idle limit closes ready sessions nobody took, so a pool
// that is not used holds no process. A Pool is safe for concurrent use.
type Pool struct {
	b    Backend
	req  Request
	warm int
	idle time.Duration

	mu       sync.Mutex
	ready    []*pooled
	starting int
	closed   bool
	lastErr  error
	done     chan struct{} // closed by Close
	wg       sync.WaitGroup
}

// pooled is a ready session and its idle timer.
type pooled struct {
	s     Session
	timer *time.Timer
}

// PoolOptions configure a Pool. A nil *PoolOptions means defaults.
type PoolOptions struct {
	// Warm is how many started, untaken sessions the pool keeps ready;
	// zero means 1.
	Warm int
	// IdleTimeout closes a ready session nobody took for this long; the
	// pool starts no replacement until the next Take, so a quiet pool
	// ends up holding no process. Zero means DefaultPoolIdle; a negative
	// value keeps ready sessions until Close.
	IdleTimeout time.Duration
}

// DefaultPoolIdle is how long a Pool keeps a ready session nobody took
// when PoolOptions.IdleTimeout is zero.
const DefaultPoolIdle = 10 * time.Minute

// startTimeout bounds a session start the pool makes in the background.
const startTimeout = 2 * time.Minute

// NewPool returns a pool of live sessions of b (or of the backend b
// wraps), each started as StartSession(ctx, b, req) would start it: req
// is copied, and its callbacks (OnText, OnPermission) and WireLog serve
// every session of the pool. req.Prompt and req.SessionID must be empty:
// a warm session is a new conversation (resume one with StartSession).
// The first sessions start in the background at once. A backend without
// live sessions, or a request StartSession would refuse, fails here, with
// StartSession's error.
func NewPool(b Backend, req *Request, opts *PoolOptions) (*Pool, error) {
	if req == nil {
		req = &Request{}
	}
	if req.SessionID != "" {
		return nil, &RequestError{Backend: nameOf(b), Field: "SessionID", Reason: "a pool starts new conversations; resume one with StartSession"}
	}
	if !canStartSessions(b) {
		return nil, &UnsupportedError{Backend: nameOf(b), Feature: "live sessions"}
	}
	p := &Pool{b: b, req: *req, warm: 1, idle: DefaultPoolIdle, done: make(chan struct{})}
	if opts != nil {
		if opts.Warm > 0 {
			p.warm = opts.Warm
		}
		if opts.IdleTimeout != 0 {
			p.idle = opts.IdleTimeout
		}
	}
	// The first start is made here, so that a request the backend refuses
	// fails NewPool rather than every Take.
	s, err := p.start(context.Background())
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.put(s)
	p.fill()
	p.mu.Unlock()
	return p, nil
}

// start starts one session of the pool's request.
func (p *Pool) start(ctx context.Context) (Session, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	req := p.req
	return StartSession(ctx, p.b, &req)
}

// Take returns a session that is ready, or, when none is, starts one
// and returns it, and starts replacements in the background so that
// Warm sessions are ready again. The session is the caller's: Close ends
// it (it never goes back to the pool, since a session that ran a turn
// holds a conversation). A ready session whose CLI died is closed and
// skipped. Take blocks until it has a session or ctx ends; after Close it
// fails with ErrSessionClosed.
func (p *Pool) Take(ctx context.Context) (Session, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrSessionClosed
	}
	for len(p.ready) > 0 {
		ps := p.ready[0]
		p.ready = p.ready[1:]
		if !ps.timer.Stop() {
			continue // the idle timer is closing it
		}
		if ps.s.Err() != nil {
			go ps.s.Close()
			continue
		}
		p.fill()
		p.mu.Unlock()
		return ps.s, nil
	}
	p.fill()
	p.mu.Unlock()
	return p.start(ctx)
}

// Close closes the ready sessions and stops starting new ones; the
// sessions already taken are the callers'. It waits for background
// starts to end (they are closed too) and returns nil; later calls do
// nothing.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	ready := p.ready
	p.ready = nil
	p.mu.Unlock()
	for _, ps := range ready {
		ps.timer.Stop()
		ps.s.Close()
	}
	p.wg.Wait()
	return nil
}

// Ready reports how many sessions are started and untaken.
func (p *Pool) Ready() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}

// put adds a started session to the ready ones, with its idle timer.
// p.mu is held.
func (p *Pool) put(s Session) {
	ps := &pooled{s: s}
	if p.idle < 0 {
		ps.timer = time.NewTimer(time.Duration(1<<63 - 1))
	} else {
		ps.timer = time.AfterFunc(p.idle, func() { p.expire(ps) })
	}
	p.ready = append(p.ready, ps)
}

// expire closes a ready session nobody took within the idle limit.
func (p *Pool) expire(ps *pooled) {
	p.mu.Lock()
	for i, x := range p.ready {
		if x == ps {
			p.ready = append(p.ready[:i], p.ready[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	ps.s.Close()
}

// fill starts sessions in the background until Warm are ready or
// starting. p.mu is held.
func (p *Pool) fill() {
	for !p.closed && len(p.ready)+p.starting < p.warm {
		p.starting++
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-p.done:
					cancel()
				case <-ctx.Done():
				}
			}()
			s, err := p.start(ctx)
			cancel()
			p.mu.Lock()
			defer p.mu.Unlock()
			p.starting--
			if err != nil {
				p.lastErr = err
				return // the next Take starts one itself, and says why
			}
			if p.closed {
				go s.Close()
				return
			}
			p.put(s)
		}()
	}
}

// Err returns the error of the last background start that failed, or nil.
func (p *Pool) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}
