package agentcli_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/driver"
	"pgregory.net/rapid"
)

// fast retries, so that tests do not sleep.
var fast = &agentcli.RetryOptions{BaseDelay: time.Microsecond, MaxDelay: 10 * time.Microsecond}

func TestIsTransient(t *testing.T) {
	rate := &agentcli.ResultError{Backend: "x", APIStatus: 429, Kind: agentcli.ErrRateLimited}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"timeout", &agentcli.TimeoutError{Backend: "x", Timeout: time.Second}, true},
		{"rate limit result", rate, true},
		{"rate limit exit", &agentcli.ExitError{Backend: "x", Code: 1, Kind: agentcli.ErrRateLimited}, true},
		{"429 without kind", &agentcli.ResultError{Backend: "x", APIStatus: 429}, true},
		{"500", &agentcli.ResultError{Backend: "x", APIStatus: 500}, true},
		{"529 overloaded", &agentcli.ResultError{Backend: "x", APIStatus: 529}, true},
		{"400 bad request", &agentcli.ResultError{Backend: "x", APIStatus: 400}, false},
		{"404", &agentcli.ResultError{Backend: "x", APIStatus: 404}, false},
		{"max turns", &agentcli.ResultError{Backend: "x", Subtype: "error_max_turns"}, false},
		{"auth result", &agentcli.ResultError{Backend: "x", APIStatus: 401, Kind: agentcli.ErrAuth}, false},
		{"auth beats 5xx", &agentcli.ResultError{Backend: "x", APIStatus: 503, Kind: agentcli.ErrAuth}, false},
		{"session not found", &agentcli.ExitError{Backend: "x", Code: 1, Kind: agentcli.ErrSessionNotFound}, false},
		{"killed by signal", &agentcli.ExitError{Backend: "x", Code: -1}, true},
		{"killed, shell status", &agentcli.ExitError{Backend: "x", Code: 137}, true},
		{"plain exit 1", &agentcli.ExitError{Backend: "x", Code: 1}, false},
		{"no result", &agentcli.NoResultError{Backend: "x", Code: 0}, true},
		{"no result, exit 2", &agentcli.NoResultError{Backend: "x", Code: 2}, true},
		{"canceled", &agentcli.CanceledError{Backend: "x", Err: context.Canceled}, false},
		{"canceled by deadline", &agentcli.CanceledError{Backend: "x", Err: context.DeadlineExceeded}, false},
		{"bare context.Canceled", context.Canceled, false},
		{"bare deadline", context.DeadlineExceeded, false},
		{"unsupported", &agentcli.UnsupportedError{Backend: "x", Feature: "live sessions"}, false},
		{"interrupted", fmt.Errorf("x: %w", agentcli.ErrInterrupted), false},
		{"session closed", fmt.Errorf("x: %w", agentcli.ErrSessionClosed), false},
		{"binary missing", &agentcli.BinaryError{Backend: "x", Path: "x", Err: agentcli.ErrNotFound, Cause: fs.ErrNotExist}, false},
		{"binary not executable", &agentcli.BinaryError{Backend: "x", Path: "x", Err: agentcli.ErrNotExecutable, Cause: fs.ErrPermission}, false},
		{"exec: text file busy", &agentcli.BinaryError{Backend: "x", Path: "x", Err: agentcli.ErrNotExecutable,
			Cause: &fs.PathError{Op: "fork/exec", Path: "x", Err: syscall.ETXTBSY}}, true},
		{"exec: EAGAIN", &agentcli.BinaryError{Backend: "x", Path: "x", Err: agentcli.ErrNotExecutable, Cause: syscall.EAGAIN}, true},
		{"parse", &agentcli.ParseError{Backend: "x", Err: errors.New("bad")}, false},
		{"protocol", &agentcli.ProtocolError{Backend: "x", Method: "initialize", Message: "bad"}, false},
		{"protocol, rate limited", &agentcli.ProtocolError{Backend: "x", Method: "session/new", Kind: agentcli.ErrRateLimited}, true},
		{"protocol, auth", &agentcli.ProtocolError{Backend: "x", Method: "session/new", Kind: agentcli.ErrAuth}, false},
		{"unknown error", errors.New("boom"), false},
		{"wrapped 503", fmt.Errorf("turn 3: %w", &agentcli.ResultError{Backend: "x", APIStatus: 503}), true},
		{"joined with auth", errors.Join(&agentcli.TimeoutError{Backend: "x"}, agentcli.ErrAuth), false},
	}
	for _, tt := range tests {
		if got := agentcli.IsTransient(tt.err); got != tt.want {
			t.Errorf("%s: IsTransient(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// errorPool are errors a property draws from, with their classification
// spelled out independently of IsTransient.
var errorPool = []struct {
	err       error
	transient bool
}{
	{&agentcli.TimeoutError{Backend: "scripted", Timeout: time.Second}, true},
	{&agentcli.ResultError{Backend: "scripted", APIStatus: 502}, true},
	{&agentcli.ExitError{Backend: "scripted", Code: -1}, true},
	{&agentcli.ResultError{Backend: "scripted", APIStatus: 429, Kind: agentcli.ErrRateLimited}, true},
	{&agentcli.ResultError{Backend: "scripted", APIStatus: 400}, false},
	{&agentcli.ExitError{Backend: "scripted", Code: 1, Kind: agentcli.ErrAuth}, false},
	{&agentcli.ExitError{Backend: "scripted", Code: 1, Kind: agentcli.ErrSessionNotFound}, false},
	{&agentcli.UnsupportedError{Backend: "scripted", Feature: "x"}, false},
}

// TestRetryRunProperties: the number of attempts is the index of the first
// success or non-transient failure, capped at MaxAttempts; the caller gets
// the last attempt's outcome; non-transient errors are never retried.
func TestRetryRunProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		max := rapid.IntRange(1, 5).Draw(t, "max")
		n := rapid.IntRange(1, 7).Draw(t, "calls")
		var calls []agentclitest.Call
		var kinds []int // -1 success, else index into errorPool
		for i := range n {
			k := rapid.IntRange(-1, len(errorPool)-1).Draw(t, fmt.Sprint("kind", i))
			kinds = append(kinds, k)
			if k < 0 {
				calls = append(calls, agentclitest.Reply(fmt.Sprint("answer ", i), "s"))
			} else {
				calls = append(calls, agentclitest.Call{Err: errorPool[k].err})
			}
		}
		sb := agentclitest.NewBackend(calls...)
		opts := *fast
		opts.MaxAttempts = max
		var retries int
		opts.OnRetry = func(int, error, time.Duration) { retries++ }
		b := agentcli.WithRetry(sb, &opts)
		res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p"})

		// Past the script, the backend fails with ErrScriptExhausted,
		// which is not transient.
		kinds = append(kinds, -2)
		want := 0
		for {
			want++
			k := kinds[want-1]
			if k == -2 || k < 0 || !errorPool[k].transient || want == max {
				break
			}
		}
		if got := len(sb.Requests()); got != want {
			t.Fatalf("attempts = %d, want %d (kinds %v, max %d)", got, want, kinds, max)
		}
		if want > max {
			t.Fatalf("attempts %d > max %d", want, max)
		}
		if retries != want-1 {
			t.Fatalf("OnRetry called %d times, want %d", retries, want-1)
		}
		last := kinds[want-1]
		switch {
		case last == -2:
			if !errors.Is(err, agentclitest.ErrScriptExhausted) {
				t.Fatalf("err = %v past the script", err)
			}
		case last < 0:
			if err != nil || res == nil || res.Text != fmt.Sprint("answer ", want-1) {
				t.Fatalf("got %v, %v; want answer %d", res, err, want-1)
			}
		default:
			if !errors.Is(err, errorPool[last].err) {
				t.Fatalf("err = %v, want %v", err, errorPool[last].err)
			}
		}
	})
}

func TestRetryRunNotAfterText(t *testing.T) {
	failing := agentclitest.Reply("partial", "s")
	failing.Err = &agentcli.ResultError{Backend: "scripted", APIStatus: 503}
	sb := agentclitest.NewBackend(failing, agentclitest.Reply("whole", "s"))
	var got string
	b := agentcli.WithRetry(sb, fast)
	_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p", OnText: func(s string) { got += s }})
	if err == nil || len(sb.Requests()) != 1 {
		t.Fatalf("err = %v after %d attempts; want the 503 after 1 (text reached OnText)", err, len(sb.Requests()))
	}
	if got != "partial" {
		t.Fatalf("OnText got %q", got)
	}

	// Without OnText nothing reached the caller: retried.
	sb = agentclitest.NewBackend(failing, agentclitest.Reply("whole", "s"))
	res, err := agentcli.WithRetry(sb, fast).Run(context.Background(), &agentcli.Request{Prompt: "p"})
	if err != nil || res.Text != "whole" || len(sb.Requests()) != 2 {
		t.Fatalf("got %v, %v after %d attempts; want whole after 2", res, err, len(sb.Requests()))
	}
}

func collect(seq iter.Seq2[agentcli.Event, error]) (kinds []agentcli.EventKind, err error) {
	for ev, e := range seq {
		if e != nil {
			return kinds, e
		}
		kinds = append(kinds, ev.Kind)
	}
	return kinds, nil
}

func TestRetryStream(t *testing.T) {
	e503 := &agentcli.ResultError{Backend: "scripted", APIStatus: 503}
	init := agentcli.Event{Kind: agentcli.EventInit, SessionID: "s1"}
	usage := agentcli.Event{Kind: agentcli.EventUsage, Usage: &agentcli.Usage{InputTokens: 1}}
	text := agentcli.Event{Kind: agentcli.EventText, Text: "half"}

	t.Run("before content: retried, held events dropped", func(t *testing.T) {
		second := agentclitest.Reply("ok then", "s2")
		sb := agentclitest.NewBackend(
			agentclitest.Call{Events: []agentcli.Event{init, usage}, Err: e503},
			second)
		kinds, err := collect(agentcli.WithRetry(sb, fast).Stream(context.Background(), &agentcli.Request{Prompt: "p"}))
		if err != nil || len(sb.Requests()) != 2 {
			t.Fatalf("err %v after %d attempts", err, len(sb.Requests()))
		}
		var want []agentcli.EventKind
		for _, ev := range second.Events {
			want = append(want, ev.Kind)
		}
		want = append(want, agentcli.EventResult)
		if fmt.Sprint(kinds) != fmt.Sprint(want) {
			t.Fatalf("events %v, want only the second attempt's %v", kinds, want)
		}
	})
	t.Run("after content: not retried", func(t *testing.T) {
		sb := agentclitest.NewBackend(
			agentclitest.Call{Events: []agentcli.Event{init, text}, Err: e503},
			agentclitest.Reply("ok", "s2"))
		kinds, err := collect(agentcli.WithRetry(sb, fast).Stream(context.Background(), &agentcli.Request{Prompt: "p"}))
		if !errors.Is(err, e503) || len(sb.Requests()) != 1 {
			t.Fatalf("err %v after %d attempts; want the 503 after 1", err, len(sb.Requests()))
		}
		// The text block comes with the delta synthesized before it.
		if fmt.Sprint(kinds) != fmt.Sprint([]agentcli.EventKind{agentcli.EventInit, agentcli.EventTextDelta, agentcli.EventText}) {
			t.Fatalf("events %v", kinds)
		}
	})
	t.Run("held events delivered with a final error", func(t *testing.T) {
		sb := agentclitest.NewBackend(agentclitest.Call{Events: []agentcli.Event{init}, Err: agentcli.ErrAuth})
		kinds, err := collect(agentcli.WithRetry(sb, fast).Stream(context.Background(), &agentcli.Request{Prompt: "p"}))
		if !errors.Is(err, agentcli.ErrAuth) || fmt.Sprint(kinds) != "[init]" || len(sb.Requests()) != 1 {
			t.Fatalf("got %v, %v after %d attempts", kinds, err, len(sb.Requests()))
		}
	})
	t.Run("break stops", func(t *testing.T) {
		sb := agentclitest.NewBackend(agentclitest.Reply("ok", "s"))
		n := 0
		for range agentcli.WithRetry(sb, fast).Stream(context.Background(), &agentcli.Request{Prompt: "p"}) {
			n++
			break
		}
		if n != 1 {
			t.Fatalf("yielded %d after break", n)
		}
	})
}

// TestRetryStreamProperty: the caller sees the events of exactly one
// attempt, which is the last one made; an attempt is retried only if none
// of its content events were delivered.
func TestRetryStreamProperty(t *testing.T) {
	kindsPool := []agentcli.EventKind{agentcli.EventInit, agentcli.EventUsage, agentcli.EventNotice,
		agentcli.EventTextDelta, agentcli.EventToolUse, agentcli.EventThinking}
	rapid.Check(t, func(t *rapid.T) {
		max := rapid.IntRange(1, 4).Draw(t, "max")
		n := rapid.IntRange(1, 5).Draw(t, "calls")
		var calls []agentclitest.Call
		for i := range n {
			evs := rapid.SliceOfN(rapid.SampledFrom(kindsPool), 0, 4).Draw(t, fmt.Sprint("events", i))
			c := agentclitest.Call{}
			for j, k := range evs {
				// Thinking as a delta: a whole block would be preceded by a
				// synthesized delta (see agentclitest.Call.Events).
				c.Events = append(c.Events, agentcli.Event{Kind: k, Text: fmt.Sprintf("%d.%d", i, j), Delta: k == agentcli.EventThinking})
			}
			if rapid.Bool().Draw(t, fmt.Sprint("ok", i)) {
				c.Result = &agentcli.Result{Text: fmt.Sprint(i)}
			} else {
				c.Err = errorPool[rapid.IntRange(0, len(errorPool)-1).Draw(t, fmt.Sprint("err", i))].err
			}
			calls = append(calls, c)
		}
		sb := agentclitest.NewBackend(calls...)
		// Past the script, the backend fails with ErrScriptExhausted.
		calls = append(calls, agentclitest.Call{Err: agentclitest.ErrScriptExhausted})
		opts := *fast
		opts.MaxAttempts = max
		var seen []agentcli.Event
		var final error
		for ev, err := range agentcli.WithRetry(sb, &opts).Stream(context.Background(), &agentcli.Request{Prompt: "p"}) {
			if err != nil {
				final = err
				break
			}
			seen = append(seen, ev)
		}
		attempts := len(sb.Requests())
		if attempts > max {
			t.Fatalf("%d attempts > max %d", attempts, max)
		}
		last := calls[attempts-1]
		for i, ev := range seen {
			if i < len(last.Events) && ev.Text != last.Events[i].Text {
				t.Fatalf("event %d %q is not from the last attempt %d", i, ev.Text, attempts-1)
			}
		}
		wantN := len(last.Events)
		if last.Err == nil {
			wantN++ // the result event
		}
		if len(seen) != wantN {
			t.Fatalf("saw %d events, the last attempt had %d", len(seen), wantN)
		}
		if (last.Err == nil) != (final == nil) {
			t.Fatalf("final error %v; last attempt's %v", final, last.Err)
		}
		// Every earlier attempt failed transiently before content.
		for i := 0; i < attempts-1; i++ {
			c := calls[i]
			if c.Err == nil || !agentcli.IsTransient(c.Err) {
				t.Fatalf("attempt %d retried after %v", i, c.Err)
			}
			for _, ev := range c.Events {
				if ev.Kind == agentcli.EventTextDelta || ev.Kind == agentcli.EventToolUse || ev.Kind == agentcli.EventThinking {
					t.Fatalf("attempt %d retried after content %v", i, ev.Kind)
				}
			}
		}
	})
}

func TestRetryCancelDuringBackoff(t *testing.T) {
	sb := agentclitest.NewBackend(agentclitest.Call{Err: &agentcli.ResultError{Backend: "scripted", APIStatus: 500}})
	retrying := make(chan struct{})
	b := agentcli.WithRetry(sb, &agentcli.RetryOptions{BaseDelay: time.Hour, MaxDelay: time.Hour,
		OnRetry: func(int, error, time.Duration) { close(retrying) }})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-retrying; cancel() }()
	done := make(chan error, 1)
	go func() { _, err := b.Run(ctx, &agentcli.Request{Prompt: "p"}); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want a *CanceledError", err)
		}
	case <-time.After(30 * time.Second): // the failure mode is "an hour"
		t.Fatal("Run did not return when ctx was cancelled during the backoff")
	}

	// Stream likewise.
	sb.Push(agentclitest.Call{Err: &agentcli.ResultError{Backend: "scripted", APIStatus: 500}})
	ctx, cancel = context.WithCancel(context.Background())
	retrying = make(chan struct{})
	go func() { <-retrying; cancel() }()
	_, err := collect(b.Stream(ctx, &agentcli.Request{Prompt: "p"}))
	if !errors.Is(err, agentcli.ErrCanceled) {
		t.Fatalf("Stream err = %v", err)
	}
}

func TestRetryBackoffBounds(t *testing.T) {
	var waits []time.Duration
	sb := agentclitest.NewBackend()
	sb.Default = &agentclitest.Call{Err: &agentcli.ExitError{Backend: "scripted", Code: -1}}
	opts := &agentcli.RetryOptions{MaxAttempts: 6, BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond,
		OnRetry: func(_ int, _ error, w time.Duration) { waits = append(waits, w) }}
	agentcli.WithRetry(sb, opts).Run(context.Background(), &agentcli.Request{Prompt: "p"})
	if len(waits) != 5 {
		t.Fatalf("%d waits, want 5", len(waits))
	}
	for i, w := range waits {
		d := min(time.Millisecond<<i, 4*time.Millisecond)
		if w < d/2 || w > d {
			t.Errorf("wait %d = %v, want within [%v, %v]", i+1, w, d/2, d)
		}
	}
}

// counting is a Backend that records how many calls run at once.
type counting struct {
	agentclitest.Backend
	cur, max atomic.Int32
	delay    time.Duration
}

func (c *counting) enter() {
	n := c.cur.Add(1)
	for {
		m := c.max.Load()
		if n <= m || c.max.CompareAndSwap(m, n) {
			break
		}
	}
}

func (c *counting) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	c.enter()
	defer c.cur.Add(-1)
	time.Sleep(c.delay)
	return &agentcli.Result{Text: "ok"}, nil
}

func (c *counting) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		c.enter()
		defer c.cur.Add(-1)
		time.Sleep(c.delay)
		yield(agentcli.Event{Kind: agentcli.EventResult, Result: &agentcli.Result{Text: "ok"}}, nil)
	}
}

// TestLimitProperty: never more than n calls run at once, and every call
// completes.
func TestLimitProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "n")
		k := rapid.IntRange(1, 16).Draw(t, "calls")
		c := &counting{delay: time.Duration(rapid.IntRange(0, 500).Draw(t, "delay_us")) * time.Microsecond}
		b := agentcli.WithLimit(c, n)
		var wg sync.WaitGroup
		var ok atomic.Int32
		for i := range k {
			stream := rapid.Bool().Draw(t, fmt.Sprint("stream", i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				if stream {
					if _, err := collect(b.Stream(context.Background(), nil)); err == nil {
						ok.Add(1)
					}
					return
				}
				if _, err := b.Run(context.Background(), nil); err == nil {
					ok.Add(1)
				}
			}()
		}
		wg.Wait()
		if m := c.max.Load(); m > int32(n) {
			t.Fatalf("%d calls at once, limit %d", m, n)
		}
		if int(ok.Load()) != k {
			t.Fatalf("%d of %d calls succeeded", ok.Load(), k)
		}
	})
}

func TestLimitWaitHonoursContext(t *testing.T) {
	sb := agentclitest.NewBackend(agentclitest.Call{Delay: time.Hour}, agentclitest.Reply("never", "s"))
	b := agentcli.WithLimit(sb, 1)
	hold, release := context.WithCancel(context.Background())
	done := make(chan struct{})
	req := &agentcli.Request{Prompt: "p"}
	go func() { defer close(done); b.Run(hold, req) }()
	for len(sb.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := b.Run(ctx, req)
	if !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a *CanceledError for the deadline", err)
	}
	_, err = collect(b.Stream(ctx, req))
	if !errors.Is(err, agentcli.ErrCanceled) {
		t.Fatalf("Stream err = %v", err)
	}
	if len(sb.Requests()) != 1 {
		t.Fatalf("the waiting calls reached the backend")
	}
	release()
	<-done
}

func TestLimitPanicsOnZero(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("WithLimit(b, 0) did not panic")
		}
	}()
	agentcli.WithLimit(agentclitest.NewBackend(), 0)
}

// starter is a scripted Backend that also starts live sessions.
type starter struct {
	*agentclitest.Backend
	mu        sync.Mutex
	startErrs []error // returned by the next starts, in order
	starts    int
	running   atomic.Int32
	maxRun    atomic.Int32
	release   chan struct{} // turns block until it is closed, if set
}

func (s *starter) StartSession(ctx context.Context, req *agentcli.Request) (agentcli.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starts++
	if len(s.startErrs) > 0 {
		err := s.startErrs[0]
		s.startErrs = s.startErrs[1:]
		return nil, err
	}
	return &fakeSession{s: s, id: fmt.Sprint("live-", s.starts)}, nil
}

type fakeSession struct {
	s          *starter
	id         string
	closed     atomic.Bool
	interrupts atomic.Int32
}

func (f *fakeSession) ID() string { return f.id }
func (f *fakeSession) Err() error {
	if f.closed.Load() {
		return agentcli.ErrSessionClosed
	}
	return nil
}
func (f *fakeSession) Close() error { f.closed.Store(true); return nil }
func (f *fakeSession) Interrupt(ctx context.Context) error {
	f.interrupts.Add(1)
	return nil
}
func (f *fakeSession) Run(ctx context.Context, prompt string) (*agentcli.Result, error) {
	var res *agentcli.Result
	for ev, err := range f.Stream(ctx, prompt) {
		if err != nil {
			return res, err
		}
		res = ev.Result
	}
	return res, nil
}
func (f *fakeSession) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		n := f.s.running.Add(1)
		defer f.s.running.Add(-1)
		for {
			m := f.s.maxRun.Load()
			if n <= m || f.s.maxRun.CompareAndSwap(m, n) {
				break
			}
		}
		if f.s.release != nil {
			select {
			case <-f.s.release:
			case <-ctx.Done():
				yield(agentcli.Event{}, &agentcli.CanceledError{Backend: "scripted", Err: ctx.Err()})
				return
			}
		}
		r := &agentcli.Result{Text: "re: " + prompt, SessionID: f.id}
		yield(agentcli.Event{Kind: agentcli.EventResult, SessionID: f.id, Result: r}, nil)
	}
}

func TestMiddlewareKeepsSessionStarter(t *testing.T) {
	plain := &upperBackend{} // no live sessions
	for _, b := range []agentcli.Backend{agentcli.WithRetry(plain, nil), agentcli.WithLimit(plain, 2),
		agentcli.WithRetry(agentcli.WithLimit(plain, 1), nil)} {
		if _, ok := b.(driver.SessionStarter); ok {
			t.Errorf("%T exposes SessionStarter over a backend without sessions", b)
		}
		if _, err := agentcli.StartSession(context.Background(), b, nil); !errors.Is(err, agentcli.ErrUnsupported) {
			t.Errorf("StartSession on %T: %v, want ErrUnsupported", b, err)
		}
		if u, ok := b.(driver.Unwrapper); !ok || u.Unwrap() == nil {
			t.Errorf("%T does not unwrap", b)
		}
	}

	st := &starter{Backend: agentclitest.NewBackend()}
	for _, b := range []agentcli.Backend{agentcli.WithRetry(st, nil), agentcli.WithLimit(st, 2),
		agentcli.WithLimit(agentcli.WithRetry(st, nil), 1)} {
		if _, ok := b.(driver.SessionStarter); !ok {
			t.Errorf("%T hides SessionStarter", b)
		}
		s, err := agentcli.StartSession(context.Background(), b, nil)
		if err != nil {
			t.Fatalf("StartSession on %T: %v", b, err)
		}
		res, err := s.Run(context.Background(), "hi")
		if err != nil || res.Text != "re: hi" {
			t.Fatalf("turn: %v, %v", res, err)
		}
		s.Close()
	}

	// A third-party wrapper that only unwraps still lets ours see sessions.
	b := agentcli.WithRetry(unwrapOnly{st}, nil)
	if _, ok := b.(driver.SessionStarter); !ok {
		t.Error("SessionStarter behind an Unwrapper is hidden")
	}
}

type unwrapOnly struct{ agentcli.Backend }

func (u unwrapOnly) Unwrap() agentcli.Backend { return u.Backend }

func TestRetryStartSession(t *testing.T) {
	st := &starter{Backend: agentclitest.NewBackend(), startErrs: []error{
		&agentcli.ExitError{Backend: "scripted", Code: -1},
		&agentcli.BinaryError{Backend: "scripted", Path: "x", Err: agentcli.ErrNotExecutable, Cause: syscall.EAGAIN},
	}}
	s, err := agentcli.StartSession(context.Background(), agentcli.WithRetry(st, fast), nil)
	if err != nil || st.starts != 3 || s.ID() != "live-3" {
		t.Fatalf("got %v after %d starts", err, st.starts)
	}
	st.startErrs = []error{&agentcli.BinaryError{Backend: "scripted", Path: "x", Err: agentcli.ErrNotFound}}
	st.starts = 0
	if _, err := agentcli.StartSession(context.Background(), agentcli.WithRetry(st, fast), nil); !errors.Is(err, agentcli.ErrNotFound) || st.starts != 1 {
		t.Fatalf("missing binary: %v after %d starts; want no retry", err, st.starts)
	}
}

// TestLimitSessionSlotPerTurn: idle sessions hold no slot; a turn does; a
// turn waiting for a slot ends on Interrupt and on Close.
func TestLimitSessionSlotPerTurn(t *testing.T) {
	st := &starter{Backend: agentclitest.NewBackend(), release: make(chan struct{})}
	b := agentcli.WithLimit(st, 1)
	ctx := context.Background()
	a, err := agentcli.StartSession(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Three idle sessions at once under a limit of one.
	c, _ := agentcli.StartSession(ctx, b, nil)
	d, _ := agentcli.StartSession(ctx, b, nil)

	first := make(chan error, 1)
	go func() { _, err := a.Run(ctx, "first"); first <- err }()
	for st.running.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	waitC := make(chan error, 1)
	go func() { _, err := c.Run(ctx, "second"); waitC <- err }()
	waitD := make(chan error, 1)
	go func() { _, err := d.Run(ctx, "third"); waitD <- err }()
	time.Sleep(20 * time.Millisecond)
	if st.running.Load() != 1 {
		t.Fatalf("%d turns run under a limit of 1", st.running.Load())
	}
	c.Interrupt(ctx)
	if err := <-waitC; !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("interrupted waiting turn: %v", err)
	}
	d.Close()
	if err := <-waitD; !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Fatalf("closed waiting turn: %v", err)
	}
	if _, err := d.Run(ctx, "after close"); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Fatalf("turn after close: %v", err)
	}
	close(st.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// The slot is free again.
	if res, err := c.Run(ctx, "again"); err != nil || res.Text != "re: again" {
		t.Fatalf("turn after interrupt: %v, %v", res, err)
	}
	if st.maxRun.Load() != 1 {
		t.Fatalf("max %d turns at once", st.maxRun.Load())
	}
}

// Retries and a concurrency limit around any backend. The retry wrapper
// goes outside, so that a call waiting for its next attempt holds no slot.
func ExampleWithRetry() {
	sb := agentclitest.NewBackend(
		agentclitest.Call{Err: &agentcli.ResultError{Backend: "scripted", APIStatus: 529, Message: "Overloaded"}},
		agentclitest.Reply("Hello!", "s1"),
	)
	b := agentcli.WithRetry(agentcli.WithLimit(sb, 4), &agentcli.RetryOptions{
		MaxAttempts: 3,
		BaseDelay:   time.Millisecond,
		OnRetry: func(attempt int, err error, wait time.Duration) {
			fmt.Println("attempt", attempt, "failed:", err)
		},
	})
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "Say hello."})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// attempt 1 failed: scripted: error result: API status 529: Overloaded
	// Hello!
}

func ExampleIsTransient() {
	for _, err := range []error{
		&agentcli.ResultError{Backend: "claude", APIStatus: 503},
		&agentcli.ResultError{Backend: "claude", APIStatus: 400},
		&agentcli.ExitError{Backend: "codex", Code: 1, Kind: agentcli.ErrAuth},
		&agentcli.TimeoutError{Backend: "gemini", Timeout: time.Minute},
	} {
		fmt.Println(agentcli.IsTransient(err), err)
	}
	// Output:
	// true claude: error result: API status 503
	// false claude: error result: API status 400
	// false codex: exit status 1 (authentication failed)
	// true gemini: query timed out after 1m0s
}
