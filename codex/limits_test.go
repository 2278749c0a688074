package codex

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/google/go-cmp/cmp"
)

// account/rateLimits/updated as codex 0.169.0 sent it after a 429
// usage_limit_reached (x-codex-primary-used-percent: 100).
const reachedSnapshot = `{"rateLimits":{"limitId":"codex","limitName":null,"normalModelSlug":null,"primary":{"usedPercent":100,"windowDurationMins":300,"resetsAt":1795666547},"secondary":{"usedPercent":40,"windowDurationMins":10080,"resetsAt":1795752947},"credits":null,"individualLimit":null,"spendControlReached":null,"planType":null,"rateLimitReachedType":null}}`

func TestRateLimitSnapshot(t *testing.T) {
	var n wireNotify
	if err := json.Unmarshal([]byte(reachedSnapshot), &n); err != nil {
		t.Fatal(err)
	}
	l := n.RateLimits.limit()
	primary := agentcli.RateLimitWindow{Type: "primary", Status: agentcli.RateLimitRejected, Utilization: 1,
		ResetsAt: time.Unix(1795666547, 0), Window: 5 * time.Hour}
	want := &agentcli.RateLimit{Status: agentcli.RateLimitRejected, ResetsAt: primary.ResetsAt, Type: "primary",
		Utilization: 1, Window: 5 * time.Hour, Windows: []agentcli.RateLimitWindow{primary,
			{Type: "secondary", Status: agentcli.RateLimitAllowed, Utilization: 0.4, ResetsAt: time.Unix(1795752947, 0), Window: 7 * 24 * time.Hour}}}
	if d := cmp.Diff(want, l); d != "" {
		t.Fatalf("limit (-want +got):\n%s", d)
	}

	// The failed turn's codexErrorInfo makes the outcome a rate limit
	// resetting when the reached window does.
	var o driver.Outcome
	usageLimit(&o, json.RawMessage(`"usageLimitExceeded"`), l)
	if !errors.Is(o.Kind, agentcli.ErrRateLimited) || !o.ResetsAt.Equal(primary.ResetsAt) {
		t.Fatalf("outcome %+v", o)
	}
	o = driver.Outcome{}
	usageLimit(&o, json.RawMessage(`"usageLimitExceeded"`), nil)
	if !errors.Is(o.Kind, agentcli.ErrRateLimited) || !o.ResetsAt.IsZero() {
		t.Fatalf("outcome without a snapshot %+v", o)
	}
	o = driver.Outcome{}
	usageLimit(&o, json.RawMessage(`{"httpConnectionFailed":{}}`), l)
	if o.Kind != nil {
		t.Fatalf("another error is a rate limit: %+v", o)
	}
	var empty wireRateLimits
	if empty.limit() != nil {
		t.Fatal("an empty snapshot is a limit")
	}
}
