package agentcli

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/semaphore"
)

// IsTransient reports whether err is worth another attempt of the same
// request: the failure lies with the moment, not with the request. It is the
// classification WithRetry uses, decided from the typed errors only:
//
//   - transient: a Request.Timeout that expired (ErrTimeout); a rate limit
//     (ErrRateLimited); an API error with an HTTP status of 500 or above
//     (*ResultError.APIStatus); a CLI that crashed: killed by a signal
//     (*ExitError.Code < 0, or above 128 as a shell reports it) or gone
//     without a result (ErrNoResult); a CLI that could not be started for
//     want of resources (a *BinaryError caused by EAGAIN, ENOMEM, EMFILE,
//     ENFILE, ETXTBSY or EINTR).
//   - never transient, whatever else the error matches: the caller's own
//     cancellation (ErrCanceled, context.Canceled, context.DeadlineExceeded
//     outside a *TimeoutError), credentials (ErrAuth), a session that does
//     not exist (ErrSessionNotFound), anything unsupported (ErrUnsupported),
//     an interrupted turn (ErrInterrupted) or a closed session
//     (ErrSessionClosed).
//   - everything else is not transient either: a missing or non-executable
//     binary, a bad request (an API status from 400 to 499 other than 429),
//     an error result without a server-side status (such as max turns), a
//     non-zero exit with a message, output that cannot be parsed, and
//     errors agentcli does not know.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	for _, never := range []error{ErrCanceled, ErrAuth, ErrSessionNotFound, ErrUnsupported,
		ErrInterrupted, ErrSessionClosed, ErrUnknownBackend, context.Canceled} {
		if errors.Is(err, never) {
			return false
		}
	}
	if errors.Is(err, ErrTimeout) || errors.Is(err, ErrRateLimited) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// A deadline that is not Request.Timeout's is the caller's.
		return false
	}
	var re *ResultError
	if errors.As(err, &re) {
		return re.APIStatus >= 500 || re.APIStatus == 429
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code < 0 || ee.Code > 128
	}
	if errors.Is(err, ErrNoResult) {
		return true
	}
	var be *BinaryError
	if errors.As(err, &be) && errors.Is(be.Err, ErrNotExecutable) {
		for _, errno := range []error{syscall.EAGAIN, syscall.ENOMEM, syscall.EMFILE,
			syscall.ENFILE, syscall.ETXTBSY, syscall.EINTR} {
			if errors.Is(be.Cause, errno) {
				return true
			}
		}
	}
	return false
}

// RetryOptions configure WithRetry. A nil *RetryOptions means the defaults.
type RetryOptions struct {
	// MaxAttempts is how many times a call is made at most, the first
	// included. Zero means 3; 1 turns retries off.
	MaxAttempts int
	// BaseDelay is the wait before the first retry; it doubles with each
	// further retry, up to MaxDelay. Zero means 1 second.
	BaseDelay time.Duration
	// MaxDelay caps the wait between two attempts. Zero means 30 seconds.
	MaxDelay time.Duration
	// MaxWait caps the wait for a rate limit to reset: when a failed
	// attempt's *RateLimitError says when its limit resets
	// (RateLimitError.ResetsAt), the next attempt waits until then
	// instead of the back-off (MaxDelay does not apply), provided that
	// is at most MaxWait away and before ctx's deadline; a reset further
	// away ends the call at once with that error rather than sleep for
	// hours. Zero means DefaultMaxWait; a negative MaxWait never waits
	// for a reset (such an error is returned at once).
	MaxWait time.Duration
	// OnRetry, if set, is called before each wait with the number of the
	// attempt that failed (1 for the first), its error and the wait. It is
	// called from the goroutine making the call.
	OnRetry func(attempt int, err error, wait time.Duration)
}

func (o *RetryOptions) withDefaults() RetryOptions {
	var r RetryOptions
	if o != nil {
		r = *o
	}
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = 3
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = time.Second
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = 30 * time.Second
	}
	if r.MaxDelay < r.BaseDelay {
		r.MaxDelay = r.BaseDelay
	}
	if r.MaxWait == 0 {
		r.MaxWait = DefaultMaxWait
	}
	return r
}

// DefaultMaxWait is RetryOptions.MaxWait when zero: 5 minutes.
const DefaultMaxWait = 5 * time.Minute

// wait returns the wait after the given failed attempt (1-based): drawn
// uniformly from [d/2, d], where d is BaseDelay·2^(attempt-1) capped at
// MaxDelay.
func (o *RetryOptions) wait(attempt int) time.Duration {
	d := o.BaseDelay
	for i := 1; i < attempt && d < o.MaxDelay; i++ {
		if d > o.MaxDelay/2 {
			d = o.MaxDelay
			break
		}
		d *= 2
	}
	d = min(d, o.MaxDelay)
	half := d / 2
	return half + rand.N(d-half+1)
}

// WithRetry returns a Backend that retries b's failed calls whose error is
// transient (see IsTransient), with exponential backoff and jitter, up to
// opts.MaxAttempts attempts in all. opts may be nil; it is copied. A rate
// limit whose reset time the CLI reported (a *RateLimitError with
// ResetsAt) is waited for until that time instead, when it is at most
// opts.MaxWait away and before ctx's deadline; otherwise the call fails
// at once with that error.
//
// A call is retried only while nothing of the failed attempt has reached
// the caller:
//
//   - Run is retried unless the attempt called Request.OnText or
//     Request.OnPermission;
//   - Stream is retried only before its first event reached the caller.
//     Events that carry no content yet (EventInit, EventUsage, EventRetry,
//     EventNotice, EventUnknown, and the limits' EventContextUsage,
//     EventCompaction and EventRateLimit) are held back until the first event that
//     does, or the end of the attempt, so that an attempt failing right
//     after the CLI started is still retried; the held events of a failed
//     attempt that is retried are dropped.
//
// A retry runs the request again from the start: tool calls the failed
// attempt made may be made again.
//
// The waits between attempts honour ctx: when ctx ends during one, the call
// returns at once with a *CanceledError (and Run with the failed attempt's
// Result, if any). Run and Stream block for the attempts and the waits
// between them; Check, Name and Capabilities are b's.
//
// When b, or a backend it wraps, can start live sessions
// (driver.SessionStarter), so can the returned Backend: StartSession is retried on transient errors like Run.
// The turns of a started session are not retried (a turn that failed has
// already become part of the conversation).
func WithRetry(b Backend, opts *RetryOptions) Backend {
	r := &retryBackend{b: b, opts: opts.withDefaults(), now: time.Now, after: realAfter}
	if canStartSessions(b) {
		return &retrySessionBackend{r}
	}
	return r
}

// canStartSessions reports whether StartSession finds a backend in b's
// chain of wrapped backends that can start live sessions.
func canStartSessions(b Backend) bool {
	_, ok := find[interface {
		StartSession(context.Context, *Request) (Session, error)
	}](b)
	return ok
}

type retryBackend struct {
	b    Backend
	opts RetryOptions
	// now and sleep are the clock (time.Now, and a timer's channel);
	// tests replace them.
	now   func() time.Time
	after func(time.Duration) (<-chan time.Time, func() bool)
}

type retrySessionBackend struct{ *retryBackend }

func (r *retryBackend) Name() string                    { return r.b.Name() }
func (r *retryBackend) Check(ctx context.Context) error { return r.b.Check(ctx) }
func (r *retryBackend) Capabilities() Capabilities      { return r.b.Capabilities() }

// Unwrap returns the wrapped Backend.
func (r *retryBackend) Unwrap() Backend { return r.b }

// again reports whether attempt, which failed with err, is followed by
// another one, and waits for it. On a false return with ctx done, the
// returned error replaces err.
func (r *retryBackend) again(ctx context.Context, attempt int, err error) (bool, error) {
	if attempt >= r.opts.MaxAttempts || !IsTransient(err) || ctx.Err() != nil {
		return false, err
	}
	wait := r.opts.wait(attempt)
	if reset, ok := ResetTime(err); ok {
		// The CLI said when the limit resets: wait exactly until
		// then, or not at all when that is too far.
		now := r.now()
		wait = max(0, reset.Sub(now))
		if r.opts.MaxWait < 0 || wait > r.opts.MaxWait {
			return false, err
		}
		if dl, ok := ctx.Deadline(); ok && now.Add(wait).After(dl) {
			return false, err
		}
	}
	if r.opts.OnRetry != nil {
		r.opts.OnRetry(attempt, err, wait)
	}
	c, stop := r.after(wait)
	defer stop()
	select {
	case <-c:
		return true, nil
	case <-ctx.Done():
		return false, &CanceledError{Backend: r.b.Name(), Err: context.Cause(ctx)}
	}
}

// realAfter is the real clock's timer.
func realAfter(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// observed returns a copy of req whose callbacks set *seen when called.
func observed(req *Request, seen *atomic.Bool) *Request {
	if req == nil {
		return nil
	}
	c := *req
	if f := req.OnText; f != nil {
		c.OnText = func(s string) { seen.Store(true); f(s) }
	}
	if f := req.OnPermission; f != nil {
		c.OnPermission = func(ctx context.Context, p *PermissionRequest) PermissionDecision {
			seen.Store(true)
			return f(ctx, p)
		}
	}
	return &c
}

func (r *retryBackend) Run(ctx context.Context, req *Request) (*Result, error) {
	var seen atomic.Bool
	req = observed(req, &seen)
	for attempt := 1; ; attempt++ {
		res, err := r.b.Run(ctx, req)
		if err == nil || seen.Load() {
			return res, err
		}
		more, err := r.again(ctx, attempt, err)
		if !more {
			return res, err
		}
	}
}

// maxHeld bounds the content-free events Stream holds back in one attempt.
const maxHeld = 256

// holdable reports whether an event of kind k carries no content of the
// run yet and may be held back (see WithRetry).
func holdable(k EventKind) bool {
	switch k {
	case EventInit, EventUsage, EventRetry, EventNotice, EventUnknown,
		EventContextUsage, EventCompaction, EventRateLimit:
		return true
	}
	return false
}

func (r *retryBackend) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		var seen atomic.Bool
		req := observed(req, &seen)
		for attempt := 1; ; attempt++ {
			var held []Event
			delivered := false
			// flush delivers the held events; false means the caller
			// stopped.
			flush := func() bool {
				for _, h := range held {
					if !yield(h, nil) {
						return false
					}
				}
				held = nil
				return true
			}
			var failed error
			for ev, err := range r.b.Stream(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				if !delivered && holdable(ev.Kind) && len(held) < maxHeld && !seen.Load() {
					held = append(held, ev)
					continue
				}
				delivered = true
				if !flush() || !yield(ev, nil) {
					return
				}
			}
			if failed == nil {
				flush()
				return
			}
			more := false
			if !delivered && !seen.Load() {
				more, failed = r.again(ctx, attempt, failed)
			}
			if !more {
				if flush() {
					yield(Event{}, failed)
				}
				return
			}
		}
	}
}

// StartSession starts a live session on the wrapped backend, retrying
// transient start errors like Run. The session's turns are not retried.
func (r *retrySessionBackend) StartSession(ctx context.Context, req *Request) (Session, error) {
	for attempt := 1; ; attempt++ {
		s, err := StartSession(ctx, r.b, req)
		if err == nil {
			return s, nil
		}
		more, err := r.again(ctx, attempt, err)
		if !more {
			return nil, err
		}
	}
}

// WithLimit returns a Backend that runs at most n calls of b at once: Run
// and Stream wait for a free slot before they start b's call and hold it
// until the call has returned (a Stream: until its sequence ends or the
// loop breaks). Waiting honours ctx: when ctx ends first, the call fails
// with a *CanceledError and b is not called. Request.Timeout counts from
// when the slot is taken. Check, Name and Capabilities are b's and take no
// slot. WithLimit panics if n < 1.
//
// When b, or a backend it wraps, can start live sessions, so can the
// returned Backend. A live session holds a slot per turn, not for its
// lifetime: each turn of Session.Stream or Session.Run waits for a slot,
// and StartSession holds one while the CLI starts. A turn still waiting for
// a slot ends with an error matching ErrInterrupted when Session.Interrupt
// is called, and ErrSessionClosed when Session.Close is.
func WithLimit(b Backend, n int) Backend {
	if n < 1 {
		panic(fmt.Sprintf("agentcli: WithLimit with n = %d; want at least 1", n))
	}
	l := &limitBackend{b: b, sem: semaphore.NewWeighted(int64(n))}
	if canStartSessions(b) {
		return &limitSessionBackend{l}
	}
	return l
}

type limitBackend struct {
	b   Backend
	sem *semaphore.Weighted
}

type limitSessionBackend struct{ *limitBackend }

func (l *limitBackend) Name() string                    { return l.b.Name() }
func (l *limitBackend) Check(ctx context.Context) error { return l.b.Check(ctx) }
func (l *limitBackend) Capabilities() Capabilities      { return l.b.Capabilities() }

// Unwrap returns the wrapped Backend.
func (l *limitBackend) Unwrap() Backend { return l.b }

// acquire takes a slot or fails with the typed error for ctx's end.
func (l *limitBackend) acquire(ctx context.Context) error {
	if err := l.sem.Acquire(ctx, 1); err != nil {
		return &CanceledError{Backend: l.b.Name(), Err: context.Cause(ctx)}
	}
	return nil
}

func (l *limitBackend) Run(ctx context.Context, req *Request) (*Result, error) {
	if err := l.acquire(ctx); err != nil {
		return nil, err
	}
	defer l.sem.Release(1)
	return l.b.Run(ctx, req)
}

func (l *limitBackend) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := l.acquire(ctx); err != nil {
			yield(Event{}, err)
			return
		}
		defer l.sem.Release(1)
		for ev, err := range l.b.Stream(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// StartSession starts a live session on the wrapped backend, holding a
// slot while it starts; the session's turns take a slot each.
func (l *limitSessionBackend) StartSession(ctx context.Context, req *Request) (Session, error) {
	if err := l.acquire(ctx); err != nil {
		return nil, err
	}
	defer l.sem.Release(1)
	s, err := StartSession(ctx, l.b, req)
	if err != nil {
		return nil, err
	}
	return &limitSession{Session: s, l: l.limitBackend, waiting: map[*waiter]struct{}{}}, nil
}

// limitSession takes a slot of its backend for each turn.
type limitSession struct {
	Session
	l *limitBackend

	mu      sync.Mutex
	waiting map[*waiter]struct{}
	closed  bool
}

// waiter is a turn waiting for a slot; cancel ends its wait with a cause.
type waiter struct{ cancel context.CancelCauseFunc }

// acquire takes a slot for a turn; Interrupt and Close end the wait.
func (s *limitSession) acquire(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("%s: %w", s.l.b.Name(), ErrSessionClosed)
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := &waiter{cancel: cancel}
	s.waiting[w] = struct{}{}
	s.mu.Unlock()

	err := s.l.sem.Acquire(wctx, 1)

	s.mu.Lock()
	delete(s.waiting, w)
	s.mu.Unlock()
	if err == nil {
		return nil
	}
	cause := context.Cause(wctx)
	if ctx.Err() == nil && (errors.Is(cause, ErrInterrupted) || errors.Is(cause, ErrSessionClosed)) {
		return fmt.Errorf("%s: %w while waiting for a run slot", s.l.b.Name(), cause)
	}
	return &CanceledError{Backend: s.l.b.Name(), Err: context.Cause(ctx)}
}

// cancelWaiting ends the wait of every turn waiting for a slot.
func (s *limitSession) cancelWaiting(cause error, close bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if close {
		s.closed = true
	}
	for w := range s.waiting {
		w.cancel(cause)
	}
}

func (s *limitSession) Stream(ctx context.Context, prompt string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := s.acquire(ctx); err != nil {
			yield(Event{}, err)
			return
		}
		defer s.l.sem.Release(1)
		for ev, err := range s.Session.Stream(ctx, prompt) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

func (s *limitSession) Run(ctx context.Context, prompt string) (*Result, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.l.sem.Release(1)
	return s.Session.Run(ctx, prompt)
}

func (s *limitSession) Interrupt(ctx context.Context) error {
	s.cancelWaiting(ErrInterrupted, false)
	return s.Session.Interrupt(ctx)
}

func (s *limitSession) Close() error {
	s.cancelWaiting(ErrSessionClosed, true)
	return s.Session.Close()
}
