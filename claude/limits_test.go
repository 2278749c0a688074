package claude

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/google/go-cmp/cmp"
)

func readLines(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/limits/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func ofKind(evs []agentcli.Event, k agentcli.EventKind) []agentcli.Event {
	var out []agentcli.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// A usage-limit rejection as claude 2.1.330 printed it with OAuth
// credentials: a rate_limit_event, the synthetic error message with
// api_error_params, a result with api_error_status 429.
func TestRateLimitRejected(t *testing.T) {
	p, evs := parseAll(t, readLines(t, "rejected-oauth-2.1.330.jsonl"))
	rl := ofKind(evs, agentcli.EventRateLimit)
	if len(rl) != 1 {
		t.Fatalf("rate limit events: %v", kinds(evs))
	}
	reset := time.Unix(1795666577, 0)
	want := &agentcli.RateLimit{Status: agentcli.RateLimitRejected, ResetsAt: reset, Type: "five_hour", Utilization: 1, Window: 5 * time.Hour}
	if d := cmp.Diff(want, rl[0].RateLimit); d != "" {
		t.Fatalf("rate limit (-want +got):\n%s", d)
	}
	_, err := spec.End(p, driver.Exit{Code: 1})
	var rle *agentcli.RateLimitError
	if !errors.As(err, &rle) || !errors.Is(err, agentcli.ErrRateLimited) || !agentcli.IsTransient(err) {
		t.Fatalf("error %T %v: want a transient *RateLimitError", err, err)
	}
	if !rle.ResetsAt.Equal(reset) || rle.Limit == nil || rle.Limit.Status != agentcli.RateLimitRejected {
		t.Fatalf("RateLimitError %+v", rle)
	}
	var re *agentcli.ResultError
	if !errors.As(err, &re) || re.APIStatus != 429 {
		t.Fatalf("the CLI's result error is kept: %v", err)
	}
	// The window size of the result's modelUsage is reported too.
	cu := ofKind(evs, agentcli.EventContextUsage)
	if len(cu) != 1 || cu[0].ContextUsage.WindowTokens != 1000000 {
		t.Fatalf("context usage %+v", cu)
	}
}

// The reset time comes from the rejected request's api_error_params
// even without a rate_limit_event (and from neither for a plain 429).
func TestRateLimitResetFromErrorParams(t *testing.T) {
	lines := readLines(t, "rejected-oauth-2.1.330.jsonl")
	var kept []byte
	for i, l := range splitLines(lines) {
		if i != 1 { // drop the rate_limit_event
			kept = append(append(kept, l...), '\n')
		}
	}
	p, evs := parseAll(t, kept)
	if n := len(ofKind(evs, agentcli.EventRateLimit)); n != 0 {
		t.Fatalf("%d rate limit events", n)
	}
	_, err := spec.End(p, driver.Exit{Code: 1})
	if at, ok := agentcli.ResetTime(err); !ok || !at.Equal(time.Unix(1795666577, 0)) {
		t.Fatalf("reset %v %v of %v", at, ok, err)
	}
	p, _ = parseAll(t, []byte(`{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: rate limited","session_id":"s"}`+"\n"))
	_, err = spec.End(p, driver.Exit{Code: 1})
	var rle *agentcli.RateLimitError
	if !errors.As(err, &rle) || !rle.ResetsAt.IsZero() {
		t.Fatalf("plain 429: %T %v", err, err)
	}
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		out = append(out, b[:i])
		if i < len(b) {
			i++
		}
		b = b[i:]
	}
	return out
}

func TestRateLimitWarning(t *testing.T) {
	p, evs := parseAll(t, readLines(t, "warning-oauth-2.1.330.jsonl"))
	rl := ofKind(evs, agentcli.EventRateLimit)
	if len(rl) != 1 {
		t.Fatalf("kinds %v", kinds(evs))
	}
	want := &agentcli.RateLimit{Status: agentcli.RateLimitWarning, ResetsAt: time.Unix(1795666517, 0), Type: "five_hour", Utilization: 0.91, Window: 5 * time.Hour}
	if d := cmp.Diff(want, rl[0].RateLimit); d != "" {
		t.Fatalf("rate limit (-want +got):\n%s", d)
	}
	if _, err := spec.End(p, driver.Exit{}); err != nil {
		t.Fatal(err)
	}
}

// An automatic compaction as claude 2.1.330 printed it after a turn that
// filled 99% of a 1M window.
func TestCompactionAndContextUsage(t *testing.T) {
	_, evs := parseAll(t, readLines(t, "autocompact-2.1.330.jsonl"))
	cs := ofKind(evs, agentcli.EventCompaction)
	if len(cs) != 1 {
		t.Fatalf("kinds %v", kinds(evs))
	}
	if d := cmp.Diff(&agentcli.Compaction{Trigger: "auto", PreTokens: 990107, PostTokens: 2624}, cs[0].Compaction); d != "" {
		t.Fatalf("compaction (-want +got):\n%s", d)
	}
	cu := ofKind(evs, agentcli.EventContextUsage)
	if len(cu) != 2 {
		t.Fatalf("context usage events %d: %v", len(cu), kinds(evs))
	}
	// First turn: the model call's input (990,000) and output as the
	// assistant message counts it; second turn after the compaction.
	want := []agentcli.ContextUsage{
		{UsedTokens: 990001, WindowTokens: 1000000, Model: "claude-opus-5-5"},
		{UsedTokens: 11, WindowTokens: 1000000, Model: "claude-opus-5-5"},
	}
	for i := range want {
		if d := cmp.Diff(want[i], *cu[i].ContextUsage); d != "" {
			t.Fatalf("context usage %d (-want +got):\n%s", i, d)
		}
	}
	if cu[0].ContextUsage.Fraction() < 0.99 {
		t.Fatalf("fraction %v", cu[0].ContextUsage.Fraction())
	}
}
