package agentcli_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/google/go-cmp/cmp"
)

// fakeClock is a clock whose timers fire at once, recording each wait.
type fakeClock struct {
	now time.Time

	mu    sync.Mutex
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) After(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- c.now.Add(d)
	return ch, func() bool { return false }
}

func (c *fakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// WithRetry waits exactly until a reported reset, however long its
// back-off would be, within MaxWait; beyond it, or past ctx's deadline,
// or with a negative MaxWait, the error comes back at once; without a
// reset time the back-off applies.
func TestRetryWaitsForReportedReset(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		reset    time.Time // zero: a rate limit without a reset time
		maxWait  time.Duration
		deadline time.Duration // ctx deadline from now; 0: none
		calls    int           // model calls made
		wait     []time.Duration
	}{
		{name: "reset ahead", reset: t0.Add(90 * time.Second), calls: 2, wait: []time.Duration{90 * time.Second}},
		{name: "reset passed", reset: t0.Add(-time.Second), calls: 2, wait: []time.Duration{0}},
		{name: "reset beyond MaxWait", reset: t0.Add(2 * time.Hour), calls: 1},
		{name: "reset within a larger MaxWait", reset: t0.Add(2 * time.Hour), maxWait: 3 * time.Hour, calls: 2, wait: []time.Duration{2 * time.Hour}},
		{name: "negative MaxWait", reset: t0.Add(time.Second), maxWait: -1, calls: 1},
		{name: "reset before ctx deadline", reset: t0.Add(time.Minute), deadline: time.Hour, calls: 2, wait: []time.Duration{time.Minute}},
		{name: "no reset: back-off", calls: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := agentclitest.NewBackend(agentclitest.RateLimited("fake", c.reset), agentclitest.Reply("ok", "s"))
			clk := &fakeClock{now: t0}
			var retried []time.Duration
			r := agentcli.WithRetryClock(b, &agentcli.RetryOptions{
				BaseDelay: 7 * time.Second, MaxDelay: 7 * time.Second, MaxWait: c.maxWait,
				OnRetry: func(_ int, _ error, d time.Duration) { retried = append(retried, d) },
			}, clk.Now, clk.After)
			ctx := context.Background()
			if c.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, time.Now().Add(c.deadline))
				defer cancel()
			}
			res, err := r.Run(ctx, &agentcli.Request{Prompt: "hi"})
			if n := len(b.Requests()); n != c.calls {
				t.Fatalf("%d calls, want %d (err %v)", n, c.calls, err)
			}
			if c.calls == 1 {
				if at, ok := agentcli.ResetTime(err); !ok || !at.Equal(c.reset) {
					t.Fatalf("error %v: want the *RateLimitError with its reset", err)
				}
				if len(clk.Waits()) != 0 || len(retried) != 0 {
					t.Fatalf("waited %v", clk.Waits())
				}
				return
			}
			if err != nil || res.Text != "ok" {
				t.Fatalf("Run: %v, %v", res, err)
			}
			if c.wait == nil {
				w := clk.Waits()
				if len(w) != 1 || w[0] < 3500*time.Millisecond || w[0] > 7*time.Second {
					t.Fatalf("waits %v, want one back-off of 3.5s to 7s", w)
				}
				return
			}
			if d := cmp.Diff(c.wait, clk.Waits()); d != "" {
				t.Fatalf("waits (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.wait, retried); d != "" {
				t.Fatalf("OnRetry waits (-want +got):\n%s", d)
			}
		})
	}
}

// A reset ahead of ctx's deadline is not waited for: the call fails at
// once with the rate limit, not with a cancellation later.
func TestRetryResetPastDeadline(t *testing.T) {
	now := time.Now()
	b := agentclitest.NewBackend(agentclitest.RateLimited("fake", now.Add(time.Hour)), agentclitest.Reply("ok", "s"))
	clk := &fakeClock{now: now}
	r := agentcli.WithRetryClock(b, &agentcli.RetryOptions{MaxWait: 2 * time.Hour}, clk.Now, clk.After)
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(time.Minute))
	defer cancel()
	_, err := r.Run(ctx, &agentcli.Request{Prompt: "hi"})
	if !errors.Is(err, agentcli.ErrRateLimited) || errors.Is(err, agentcli.ErrCanceled) || len(clk.Waits()) != 0 {
		t.Fatalf("err %v, waits %v", err, clk.Waits())
	}
	// Stream likewise.
	b = agentclitest.NewBackend(agentclitest.RateLimited("fake", now.Add(30*time.Second)), agentclitest.Reply("ok", "s"))
	r = agentcli.WithRetryClock(b, nil, clk.Now, clk.After)
	var kinds []agentcli.EventKind
	for ev, err := range r.Stream(context.Background(), &agentcli.Request{Prompt: "hi"}) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, ev.Kind)
	}
	if w := clk.Waits(); len(w) != 1 || w[0] != 30*time.Second || kinds[len(kinds)-1] != agentcli.EventResult {
		t.Fatalf("waits %v kinds %v", w, kinds)
	}
	// The held EventRateLimit of the failed attempt is dropped.
	for _, k := range kinds {
		if k == agentcli.EventRateLimit {
			t.Fatalf("kinds %v", kinds)
		}
	}
}

func TestRateLimitError(t *testing.T) {
	reset := time.Date(2026, 11, 26, 10, 15, 0, 0, time.UTC)
	inner := &agentcli.ResultError{Backend: "claude", APIStatus: 429, Message: "You've hit your limit", Kind: agentcli.ErrRateLimited}
	err := error(&agentcli.RateLimitError{Backend: "claude", ResetsAt: reset, Err: inner})
	var re *agentcli.ResultError
	if !errors.Is(err, agentcli.ErrRateLimited) || !errors.Is(err, agentcli.ErrResult) || !errors.As(err, &re) || re != inner {
		t.Fatal("a *RateLimitError matches ErrRateLimited and keeps the CLI's error")
	}
	if !agentcli.IsTransient(err) {
		t.Fatal("not transient")
	}
	if got, want := err.Error(), inner.Error()+" (resets at 2026-11-26T10:15:00Z)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	err = &agentcli.RateLimitError{Backend: "gemini", RetryAfter: 3 * time.Second, ResetsAt: reset}
	if got := err.Error(); got != "gemini: rate limited (retry after 3s)" {
		t.Fatalf("Error() = %q", got)
	}
	if _, ok := agentcli.ResetTime(inner); ok {
		t.Fatal("a reset time without a *RateLimitError")
	}
	if _, ok := agentcli.ResetTime(&agentcli.RateLimitError{Err: inner}); ok {
		t.Fatal("a reset time where none was reported")
	}
}

// The new events' payloads survive Event's JSON encoding.
func TestLimitEventsJSON(t *testing.T) {
	evs := []agentcli.Event{
		{Kind: agentcli.EventContextUsage, ContextUsage: &agentcli.ContextUsage{UsedTokens: 990100, WindowTokens: 1000000, Model: "m"}},
		{Kind: agentcli.EventCompaction, Compaction: &agentcli.Compaction{Trigger: "auto", PreTokens: 990107, PostTokens: 2624}},
		{Kind: agentcli.EventRateLimit, RateLimit: &agentcli.RateLimit{Status: agentcli.RateLimitWarning,
			ResetsAt: time.Unix(1795666517, 0).UTC(), Type: "five_hour", Utilization: 0.91, Window: 5 * time.Hour,
			Windows: []agentcli.RateLimitWindow{{Type: "five_hour", Utilization: 0.91}, {Type: "seven_day", Utilization: 0.2}}}},
		{Kind: agentcli.EventRateLimit, RateLimit: &agentcli.RateLimit{Status: agentcli.RateLimitRejected}},
	}
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var back agentcli.Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(ev, back); d != "" {
			t.Fatalf("%s round trip (-want +got):\n%s", b, d)
		}
		if ev.RateLimit != nil && ev.RateLimit.ResetsAt.IsZero() && strings.Contains(string(b), "resets_at") {
			t.Fatalf("a zero reset time is encoded: %s", b)
		}
	}
	b, _ := json.Marshal(evs[2])
	if !strings.Contains(string(b), `"rate_limit":{"status":"allowed_warning","resets_at":"2026-11-26T`) {
		t.Fatalf("encoding %s", b)
	}
}
