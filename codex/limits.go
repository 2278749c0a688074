package codex

import (
	"encoding/json"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// What codex's app-server reports of its limits (verified on codex
// 0.169.0; codex exec reports none of it, only the error's text):
//
//   - thread/tokenUsage/updated {"tokenUsage":{"total":{…},"last":
//     {"totalTokens",…},"modelContextWindow":N}} after each model call;
//   - an item of type "contextCompaction" when the thread is compacted;
//   - account/rateLimits/updated {"rateLimits":{"primary":{"usedPercent",
//     "windowDurationMins","resetsAt"},"secondary":{…},
//     "rateLimitReachedType"}} from the API's x-codex-* headers, with a
//     custom provider and an API key too;
//   - a turn that failed for a usage limit: error
//     {"codexErrorInfo":"usageLimitExceeded"} (the reset only as a
//     sentence, "try again at 4:15 AM", which agentcli does not parse).

// wireRateLimits is an account/rateLimits/updated snapshot.
type wireRateLimits struct {
	Primary              *wireWindow `json:"primary"`
	Secondary            *wireWindow `json:"secondary"`
	RateLimitReachedType *string     `json:"rateLimitReachedType"`
}

type wireWindow struct {
	UsedPercent        float64 `json:"usedPercent"`
	WindowDurationMins float64 `json:"windowDurationMins"`
	ResetsAt           float64 `json:"resetsAt"`
}

// window returns the agentcli form of one window.
func (w *wireWindow) window(name string) agentcli.RateLimitWindow {
	st := agentcli.RateLimitAllowed
	if w.UsedPercent >= 100 {
		st = agentcli.RateLimitRejected
	}
	return agentcli.RateLimitWindow{Type: name, Status: st, Utilization: max(0, w.UsedPercent/100),
		ResetsAt: driver.UnixTime(w.ResetsAt), Window: driver.Minutes(w.WindowDurationMins)}
}

// limit returns the agentcli form of a snapshot: the window reached, or
// else the most used one, in the top-level fields; nil for an empty one.
func (r *wireRateLimits) limit() *agentcli.RateLimit {
	var ws []agentcli.RateLimitWindow
	if r.Primary != nil {
		ws = append(ws, r.Primary.window("primary"))
	}
	if r.Secondary != nil {
		ws = append(ws, r.Secondary.window("secondary"))
	}
	if len(ws) == 0 {
		return nil
	}
	top := ws[0]
	for _, w := range ws[1:] {
		if w.Utilization > top.Utilization {
			top = w
		}
	}
	l := &agentcli.RateLimit{Status: top.Status, ResetsAt: top.ResetsAt, Type: top.Type,
		Utilization: top.Utilization, Window: top.Window}
	if r.RateLimitReachedType != nil && *r.RateLimitReachedType != "" {
		l.Status = agentcli.RateLimitRejected
	}
	if len(ws) > 1 {
		l.Windows = ws
	}
	return l
}

// rateLimits emits the EventRateLimit of an account/rateLimits/updated
// notification and keeps it for the turn's error.
func (p *appServer) rateLimits(r *wireRateLimits, base agentcli.Event) {
	if r == nil {
		return
	}
	l := r.limit()
	if l == nil {
		return
	}
	p.mu.Lock()
	p.rateLimit = l
	p.mu.Unlock()
	ev := base
	ev.Kind, ev.RateLimit = agentcli.EventRateLimit, l
	p.h.Emit(ev)
}

// contextUsage emits the EventContextUsage of a thread/tokenUsage/updated
// notification that names the context window.
func (p *appServer) contextUsage(n wireNotify, base agentcli.Event) {
	tu := n.TokenUsage
	if tu.ModelContextWindow <= 0 || tu.Last == nil {
		return
	}
	p.mu.Lock()
	model := firstNonEmpty(p.req.Model, p.model)
	p.mu.Unlock()
	ev := base
	ev.Kind = agentcli.EventContextUsage
	ev.ContextUsage = &agentcli.ContextUsage{UsedTokens: max(0, tu.Last.TotalTokens), WindowTokens: tu.ModelContextWindow, Model: model}
	p.h.Emit(ev)
}

// usageLimit marks o, the outcome of a failed turn, as a rate limit when
// codex says a usage limit was exceeded, with the reset time of the
// window the last snapshot showed reached.
func usageLimit(o *driver.Outcome, info json.RawMessage, limit *agentcli.RateLimit) {
	if !strings.Contains(string(info), "usageLimitExceeded") {
		return
	}
	o.Kind, o.RateLimit = agentcli.ErrRateLimited, limit
	if limit == nil {
		return
	}
	for _, w := range append([]agentcli.RateLimitWindow{{Status: limit.Status, ResetsAt: limit.ResetsAt}}, limit.Windows...) {
		if w.Status == agentcli.RateLimitRejected && !w.ResetsAt.IsZero() {
			o.ResetsAt = w.ResetsAt
			return
		}
	}
}
