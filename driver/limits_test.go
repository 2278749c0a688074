package driver

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

func TestRetryAfter(t *testing.T) {
	for msg, want := range map[string]time.Duration{
		"Resource has been exhausted (e.g. check quota).\nSuggested retry after 3s.": 3 * time.Second,
		"suggested Retry After 2.5s":                   2500 * time.Millisecond,
		"retry after 200ms":                            200 * time.Millisecond,
		"retry after 2m then":                          2 * time.Minute,
		"retry after 25h":                              0, // not a delay to wait for
		"retry after 3 seconds":                        0,
		"retry after 3sx":                              0,
		"no delay here":                                0,
		"retry after 0s":                               0,
		strings.Repeat("a", 70<<10) + "retry after 3s": 0, // beyond what is read
	} {
		if got := RetryAfter(msg); got != want {
			t.Errorf("RetryAfter(%.40q) = %v, want %v", msg, got, want)
		}
	}
}

func TestUnixTime(t *testing.T) {
	if got := UnixTime(1795666577); !got.Equal(time.Unix(1795666577, 0)) {
		t.Fatal(got)
	}
	for _, bad := range []float64{0, -1, 1e300} {
		if !UnixTime(bad).IsZero() {
			t.Errorf("UnixTime(%v) not zero", bad)
		}
	}
	if Minutes(300) != 5*time.Hour || Minutes(-1) != 0 || Minutes(1e300) != 0 {
		t.Fatal("Minutes")
	}
}

func TestRateLimited(t *testing.T) {
	plain := errors.New("boom")
	if RateLimited("x", plain, time.Now(), 0, nil) != plain {
		t.Fatal("an error that is no rate limit is wrapped")
	}
	inner := &agentcli.ResultError{Backend: "x", Kind: agentcli.ErrRateLimited}
	reset := time.Unix(1795666577, 0)
	lim := &agentcli.RateLimit{Status: agentcli.RateLimitRejected, ResetsAt: reset}
	var rl *agentcli.RateLimitError
	if err := RateLimited("x", inner, time.Time{}, 0, lim); !errors.As(err, &rl) || !rl.ResetsAt.Equal(reset) || rl.Limit != lim {
		t.Fatalf("reset from the rejected limit: %v", err)
	}
	if again := RateLimited("x", rl, time.Time{}, time.Second, nil); again != error(rl) {
		t.Fatal("a *RateLimitError is wrapped twice")
	}
	before := time.Now()
	if err := RateLimited("x", inner, time.Time{}, 3*time.Second, nil); !errors.As(err, &rl) ||
		rl.RetryAfter != 3*time.Second || rl.ResetsAt.Before(before.Add(3*time.Second)) {
		t.Fatalf("retry after: %+v", rl)
	}
	lim.Status = agentcli.RateLimitWarning
	if err := RateLimited("x", inner, time.Time{}, 0, lim); !errors.As(err, &rl) || !rl.ResetsAt.IsZero() {
		t.Fatalf("the reset of a limit not reached is taken: %+v", rl)
	}
}
