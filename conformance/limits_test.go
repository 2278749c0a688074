//go:build unix

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/google/go-cmp/cmp"
)

// What the CLIs tell about their limits, on the real binaries: the
// context window's fill, the account's rate limit state, and a
// rate-limited run's *RateLimitError with the reset time the server
// scripted.

// bigInput is the input token count the limit scenarios script, large
// enough that a context fill reported from it cannot be a default.
const bigInput = 54321

// limitLive says how each CLI is driven for the limit events: claude
// one-shot and live (with subscription credentials: it reports rate
// limits only then), codex, gemini and opencode as live sessions (codex exec and the
// ACP CLIs' one-shot modes report none of it).
var limitLive = map[string]bool{"codex": true, "gemini": true, "opencode": true}

// limitEvents runs one turn against e, one-shot or in a live session,
// and returns its events and error.
//
// The run's wire log is replayed too: the limit events and the error
// replay as they were.
func limitEvents(t *testing.T, e *env, b agentcli.Backend, prompt string, live bool) ([]agentcli.Event, error) {
	t.Helper()
	var log bytes.Buffer
	evs, err := func() ([]agentcli.Event, error) {
		if !live {
			req, tag := e.request(prompt)
			req.WireLog = &log
			return stream(t, context.Background(), b, req, tag)
		}
		req, tag := e.liveRequest()
		req.WireLog = &log
		s := liveSession(t, b, req, tag)
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		defer cancel()
		var evs []agentcli.Event
		for ev, err := range s.Stream(ctx, prompt) {
			if err != nil {
				return evs, err
			}
			evs = append(evs, ev)
		}
		return evs, nil
	}()
	var revs []agentcli.Event
	var rerr error
	for ev, err := range agentcli.Replay(b, bytes.NewReader(log.Bytes())) {
		if err != nil {
			rerr = err
			break
		}
		revs = append(revs, ev)
	}
	if d := cmp.Diff(limitsOf(evs), limitsOf(revs)); d != "" {
		t.Errorf("replayed limit events differ (-run +replay):\n%s", d)
	}
	if fmt.Sprint(err) != fmt.Sprint(rerr) {
		t.Errorf("replayed error %s, the run's %s", errSummary(rerr), errSummary(err))
	}
	return evs, err
}

// limitsOf returns the limit events of evs, as JSON.
func limitsOf(evs []agentcli.Event) []string {
	var out []string
	for _, ev := range evs {
		switch ev.Kind {
		case agentcli.EventContextUsage, agentcli.EventCompaction, agentcli.EventRateLimit:
			ev.Raw = nil
			b, _ := json.Marshal(ev)
			out = append(out, string(b))
		}
	}
	return out
}

func eventsOf(evs []agentcli.Event, k agentcli.EventKind) []agentcli.Event {
	var out []agentcli.Event
	for _, ev := range evs {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// TestLimitEvents: a turn whose response carries the account's rate
// limit state (a warning at 91% of a 5-hour window) and a large input
// yields an EventRateLimit with the scripted reset time, utilization and
// window, and an EventContextUsage whose fill counts the scripted input,
// on the CLIs whose Capabilities say they report them; the others report
// neither and say so.
func TestLimitEvents(t *testing.T) {
	for _, name := range []string{"claude", "claude-live", "codex", "gemini", "opencode"} {
		cli, _, live := strings.Cut(name, "-")
		live = live || limitLive[cli]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			reset := time.Now().Add(90 * time.Minute).Truncate(time.Second)
			e := newEnv(t, cli, agentclitest.Turn{Text: "limits reported",
				Usage: &agentclitest.TurnUsage{InputTokens: bigInput, OutputTokens: 7},
				Limit: &agentclitest.Limit{Status: agentcli.RateLimitWarning, ResetsAt: reset, Utilization: 0.91}})
			e.w.UseOAuth()
			b := openBackend(t, cli, nil)
			caps := b.Capabilities()
			evs, err := limitEvents(t, e, b, "report your limits", live)
			if err != nil {
				t.Fatalf("run: %s", errSummary(err))
			}

			rls := eventsOf(evs, agentcli.EventRateLimit)
			switch {
			case !caps.RateLimits && len(rls) > 0:
				t.Errorf("Capabilities().RateLimits = false, but %d EventRateLimit", len(rls))
			case caps.RateLimits && len(rls) == 0:
				t.Errorf("Capabilities().RateLimits = true, but no EventRateLimit; kinds %v", kindsOf(evs))
			}
			for _, ev := range rls {
				rl := ev.RateLimit
				t.Logf("rate limit: %+v", *rl)
				if !rl.ResetsAt.Equal(reset) {
					t.Errorf("ResetsAt = %v, want the scripted %v", rl.ResetsAt, reset)
				}
				if rl.Utilization < 0.905 || rl.Utilization > 0.915 {
					t.Errorf("Utilization = %v, want 0.91", rl.Utilization)
				}
				if rl.Status == agentcli.RateLimitRejected {
					t.Errorf("Status = %q for a limit that is not reached", rl.Status)
				}
				if cli == "claude" && (rl.Status != agentcli.RateLimitWarning || rl.Type != "five_hour") {
					t.Errorf("claude: Status %q Type %q, want the scripted allowed_warning of five_hour", rl.Status, rl.Type)
				}
				if cli == "codex" && rl.Window != 5*time.Hour {
					t.Errorf("codex: Window = %v, want the scripted 5h", rl.Window)
				}
			}

			cus := eventsOf(evs, agentcli.EventContextUsage)
			switch {
			case !caps.ContextUsage && len(cus) > 0:
				t.Errorf("Capabilities().ContextUsage = false, but %d EventContextUsage", len(cus))
			case caps.ContextUsage && len(cus) == 0:
				t.Errorf("Capabilities().ContextUsage = true, but no EventContextUsage; kinds %v", kindsOf(evs))
			}
			for _, ev := range cus {
				cu := ev.ContextUsage
				t.Logf("context usage: %+v (%.1f%%)", *cu, 100*cu.Fraction())
				if cu.UsedTokens < bigInput || cu.UsedTokens > bigInput+10000 {
					t.Errorf("UsedTokens = %d, want the scripted input %d and a little", cu.UsedTokens, bigInput)
				}
				if cu.WindowTokens <= cu.UsedTokens {
					t.Errorf("WindowTokens = %d, want a window larger than the fill", cu.WindowTokens)
				}
			}
		})
	}
}

func kindsOf(evs []agentcli.Event) []agentcli.EventKind {
	var k []agentcli.EventKind
	for _, ev := range evs {
		k = append(k, ev.Kind)
	}
	return k
}

// TestRateLimitError: a request the API rejects for a rate limit, with a
// reset time, fails with a *RateLimitError (matching ErrRateLimited and
// still the CLI's own error underneath) that carries that reset time
// where the CLI reports it (Capabilities.RateLimitReset), and none
// otherwise. opencode retries a 429 on its own until it succeeds, so it
// is not run here.
func TestRateLimitError(t *testing.T) {
	type scenario struct {
		cli   string
		live  bool
		oauth bool
		// reset: the error carries the scripted reset (or retry delay)
		reset bool
	}
	for _, sc := range []scenario{
		{cli: "claude", oauth: true, reset: true},
		{cli: "claude"}, // API key: a plain 429, no reset time
		{cli: "codex", live: true, reset: true},
		{cli: "codex"}, // exec: only a sentence
		{cli: "gemini", live: true, reset: true},
		{cli: "gemini", reset: true}, // the error's text suggests the delay
	} {
		name := sc.cli
		if sc.live {
			name += "-live"
		}
		if sc.oauth {
			name += "-oauth"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			reset := time.Now().Add(2 * time.Hour).Truncate(time.Second)
			retry := 7 * time.Second
			turn := agentclitest.Turn{Limit: &agentclitest.Limit{Status: agentcli.RateLimitRejected, ResetsAt: reset}}
			if sc.cli == "gemini" {
				turn.Limit.RetryAfter = retry
			}
			if sc.cli == "claude" && !sc.oauth {
				turn = agentclitest.Turn{Status: 429, Message: "rate limited"}
			}
			e := newEnv(t, sc.cli, turn)
			if sc.oauth {
				e.w.UseOAuth()
			}
			b := openBackend(t, sc.cli, nil)
			evs, err := limitEvents(t, e, b, "hit the limit", sc.live)
			t.Logf("error: %s", errSummary(err))
			var rle *agentcli.RateLimitError
			if !errors.As(err, &rle) || !errors.Is(err, agentcli.ErrRateLimited) || !agentcli.IsTransient(err) {
				t.Fatalf("error %s: want a transient *RateLimitError; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			if rle.Err == nil || errors.Unwrap(rle.Err) == nil && !strings.Contains(rle.Error(), sc.cli) {
				t.Errorf("the CLI's own error is not kept: %#v", rle)
			}
			switch {
			case !sc.reset:
				if !rle.ResetsAt.IsZero() {
					t.Errorf("ResetsAt = %v where the CLI reports none", rle.ResetsAt)
				}
			case sc.cli == "gemini":
				if rle.RetryAfter != retry {
					t.Errorf("RetryAfter = %v, want the scripted %v", rle.RetryAfter, retry)
				}
			default:
				if !rle.ResetsAt.Equal(reset) {
					t.Errorf("ResetsAt = %v, want the scripted %v", rle.ResetsAt, reset)
				}
				if rls := eventsOf(evs, agentcli.EventRateLimit); len(rls) == 0 || rls[len(rls)-1].RateLimit.Status != agentcli.RateLimitRejected {
					t.Errorf("no EventRateLimit with the rejected limit before the error; kinds %v", kindsOf(evs))
				}
			}
			if sc.reset && !b.Capabilities().RateLimitReset {
				t.Errorf("Capabilities().RateLimitReset = false")
			}
		})
	}
}

// TestRetryWaitsForReset: WithRetry over a real CLI whose first request
// is rejected with a reset five seconds after the rejection (gemini: a
// suggested delay of two seconds) waits for that reset (not
// its back-off, an hour here) and the second attempt succeeds.
func TestRetryWaitsForReset(t *testing.T) {
	for _, cli := range []string{"claude", "gemini"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			// The reset is counted from the rejection, however long
			// the CLI took to start.
			limit := &agentclitest.Limit{Status: agentcli.RateLimitRejected, ResetIn: 5 * time.Second}
			if cli == "gemini" {
				limit.RetryAfter = 2 * time.Second
			}
			e := newEnv(t, cli, agentclitest.Turn{Limit: limit}, agentclitest.Turn{Text: "after the reset"})
			e.w.UseOAuth()
			var mu sync.Mutex
			var waits []string
			var reset time.Time
			b := agentcli.WithRetry(openBackend(t, cli, nil), &agentcli.RetryOptions{
				MaxAttempts: 2, BaseDelay: time.Hour, MaxDelay: time.Hour, MaxWait: time.Minute,
				OnRetry: func(attempt int, err error, wait time.Duration) {
					mu.Lock()
					defer mu.Unlock()
					waits = append(waits, fmt.Sprintf("attempt %d: %v: wait %v", attempt, err, wait))
					reset, _ = agentcli.ResetTime(err)
				},
			})
			req, tag := e.request("retry after the reset")
			ctx, cancel := context.WithTimeout(context.Background(), 3*runTimeout)
			defer cancel()
			res, err := b.Run(ctx, req)
			assertNoProcs(t, tag)
			mu.Lock()
			defer mu.Unlock()
			t.Logf("retries: %q", waits)
			if err != nil {
				t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			if res.Text != "after the reset" {
				t.Errorf("text %q, want the second turn's", res.Text)
			}
			if len(waits) != 1 {
				t.Errorf("%d retries, want 1", len(waits))
			}
			if n := len(e.main()); n != 2 {
				t.Errorf("%d model requests, want 2: %s", n, describe(e.srv.Requests()))
			}
			if reset.IsZero() {
				t.Errorf("the rate limit error had no reset time")
			} else if time.Now().Before(reset) {
				t.Errorf("the retry succeeded before the reported reset %v", reset)
			}
		})
	}
}
