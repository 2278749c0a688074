package claude

// The oracle's reading of the limits (limits.go), written with
// encoding/json: objects whose order matters (modelUsage,
// unifiedWindows) are walked token by token.

import (
	"bytes"
	"encoding/json"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// limitShapes adds the limit fields to the oracle's domain.
func limitShapes(fields map[string]*backendtest.Shape, usage *backendtest.Shape) {
	B, s, num := backendtest.Obj, backendtest.StrNull, backendtest.OrNull(backendtest.Num)
	window := backendtest.OrNull(B(map[string]*backendtest.Shape{"utilization": num, "resetsAt": num, "status": s}))
	rateInfo := backendtest.OrNull(B(map[string]*backendtest.Shape{
		"status": s, "resetsAt": num, "rateLimitType": s, "utilization": num,
		"unifiedWindows": backendtest.OrNull(&backendtest.Shape{Kinds: backendtest.KObj, Values: window}),
	}))
	fields["rate_limit_info"] = rateInfo
	fields["api_error_params"] = backendtest.OrNull(B(map[string]*backendtest.Shape{
		"rate_limit_info": backendtest.OrNull(B(map[string]*backendtest.Shape{"resetsAt": num})),
	}))
	fields["compact_metadata"] = backendtest.OrNull(B(map[string]*backendtest.Shape{
		"trigger": s, "pre_tokens": backendtest.OrNull(backendtest.Count), "post_tokens": backendtest.OrNull(backendtest.Count),
	}))
	fields["modelUsage"] = backendtest.OrNull(&backendtest.Shape{Kinds: backendtest.KObj,
		Values: backendtest.OrNull(B(map[string]*backendtest.Shape{"contextWindow": backendtest.OrNull(backendtest.Count)}))})
	msg := fields["message"]
	msg.Fields["usage"] = usage
}

type oRateInfo struct {
	Status         string          `json:"status"`
	ResetsAt       float64         `json:"resetsAt"`
	RateLimitType  string          `json:"rateLimitType"`
	Utilization    float64         `json:"utilization"`
	UnifiedWindows json.RawMessage `json:"unifiedWindows"`
}

type oLimits struct {
	RateLimitInfo  *oRateInfo `json:"rate_limit_info"`
	APIErrorParams *struct {
		RateLimitInfo *struct {
			ResetsAt float64 `json:"resetsAt"`
		} `json:"rate_limit_info"`
	} `json:"api_error_params"`
	CompactMetadata *struct {
		Trigger    string `json:"trigger"`
		PreTokens  int64  `json:"pre_tokens"`
		PostTokens int64  `json:"post_tokens"`
	} `json:"compact_metadata"`
	Message *struct {
		Model string      `json:"model"`
		Usage *oWireUsage `json:"usage"`
	} `json:"message"`
	ModelUsage json.RawMessage `json:"modelUsage"`
}

// orderedObject calls f with each member of the JSON object raw, in
// order; nothing for null or anything else.
func orderedObject(raw json.RawMessage, f func(key string, val json.RawMessage)) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return
		}
		f(t.(string), v)
	}
}

func (r *oRateInfo) limit() *agentcli.RateLimit {
	l := &agentcli.RateLimit{Status: agentcli.RateLimitStatus(r.Status), ResetsAt: driver.UnixTime(r.ResetsAt),
		Type: r.RateLimitType, Utilization: r.Utilization, Window: windows[r.RateLimitType]}
	var ws []agentcli.RateLimitWindow
	orderedObject(r.UnifiedWindows, func(k string, v json.RawMessage) {
		if len(ws) >= maxRateWindows {
			return
		}
		var w struct {
			Utilization float64 `json:"utilization"`
			ResetsAt    float64 `json:"resetsAt"`
			Status      string  `json:"status"`
		}
		_ = json.Unmarshal(v, &w)
		ws = append(ws, agentcli.RateLimitWindow{Type: k, Status: agentcli.RateLimitStatus(w.Status),
			Utilization: w.Utilization, ResetsAt: driver.UnixTime(w.ResetsAt), Window: windows[k]})
	})
	for _, w := range ws {
		if w.Type == r.RateLimitType && l.Utilization == 0 {
			l.Utilization = w.Utilization
		}
	}
	if len(ws) > 1 {
		l.Windows = ws
	}
	return l
}

// oracleLimits is the oracle parser's state for the limits.
type oracleLimits struct {
	rateLimit *agentcli.RateLimit
	resetsAt  float64
	lastCall  agentcli.Usage
	callModel string
	hasCall   bool
}

// line returns the limit events of a decoded line w (raw), and whether
// the line is a limit line of its own (rate_limit_event,
// compact_boundary); model is the session's model.
func (o *oracleLimits) line(w *oWireLine, raw []byte, base agentcli.Event, model string) (evs []agentcli.Event, own bool) {
	var l oLimits
	_ = json.Unmarshal(raw, &l)
	switch {
	case w.Type == "rate_limit_event":
		if l.RateLimitInfo == nil {
			return nil, false
		}
		o.rateLimit = l.RateLimitInfo.limit()
		ev := base
		ev.Kind, ev.RateLimit = agentcli.EventRateLimit, o.rateLimit
		return []agentcli.Event{ev}, true
	case w.Type == "system" && w.Subtype == "compact_boundary":
		c := agentcli.Compaction{}
		if m := l.CompactMetadata; m != nil {
			c = agentcli.Compaction{Trigger: m.Trigger, PreTokens: m.PreTokens, PostTokens: m.PostTokens}
		}
		ev := base
		ev.Kind, ev.Compaction = agentcli.EventCompaction, &c
		return []agentcli.Event{ev}, true
	case w.Type == "assistant" && w.Message != nil:
		if w.IsAPIErrorMsg || w.Message.Model == "<synthetic>" {
			if p := l.APIErrorParams; p != nil && p.RateLimitInfo != nil && !driver.UnixTime(p.RateLimitInfo.ResetsAt).IsZero() {
				o.resetsAt = p.RateLimitInfo.ResetsAt
			}
		} else if base.Subagent == "" && l.Message != nil && l.Message.Usage != nil {
			o.lastCall, o.callModel, o.hasCall = oUsageOf(l.Message.Usage), l.Message.Model, true
		}
	case w.Type == "result":
		if o.callModel != "" {
			model = o.callModel
		}
		hasCall := o.hasCall
		o.hasCall = false
		var ws []wireWindow
		orderedObject(l.ModelUsage, func(k string, v json.RawMessage) {
			var m struct {
				ContextWindow int64 `json:"contextWindow"`
			}
			_ = json.Unmarshal(v, &m)
			ws = addWindow(ws, k, m.ContextWindow)
		})
		win := windowOf(ws, model)
		if win.Window == 0 {
			return nil, false
		}
		u := o.lastCall
		if !hasCall {
			u = agentcli.Usage{}
			if w.Usage != nil {
				u = oUsageOf(w.Usage)
			}
		}
		ev := base
		ev.Kind = agentcli.EventContextUsage
		ev.ContextUsage = &agentcli.ContextUsage{UsedTokens: u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens,
			WindowTokens: win.Window, Model: win.Model}
		return []agentcli.Event{ev}, false
	}
	return nil, false
}

// outcome adds the rate limit to the oracle's outcome.
func (o *oracleLimits) outcome(out driver.Outcome) driver.Outcome {
	if out.Failed {
		out.ResetsAt, out.RateLimit = driver.UnixTime(o.resetsAt), o.rateLimit
	}
	return out
}
