package claude

import (
	"strings"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// What Claude Code reports of its limits (verified on claude 2.1.330):
//
//   - {"type":"rate_limit_event","rate_limit_info":{"status":"allowed"|
//     "allowed_warning"|"rejected","resetsAt":<unix s>,"rateLimitType":
//     "five_hour",…,"utilization":0.91,"unifiedWindows":{"five_hour":
//     {"utilization","resetsAt","status"}}}} when the API's
//     anthropic-ratelimit-unified-* headers change; only with
//     subscription (OAuth) credentials, never with an API key;
//   - a rejected request's synthetic assistant message carries
//     "api_error_params":{"rate_limit_info":{"resetsAt":…}}, and the
//     result "api_error_status":429;
//   - {"type":"system","subtype":"compact_boundary","compact_metadata":
//     {"trigger":"manual"|"auto","pre_tokens","post_tokens",…}};
//   - the result's "modelUsage":{"<model>":{"contextWindow":N,…}}.

// wireRateLimit is a rate_limit_info object.
type wireRateLimit struct {
	Status      string
	ResetsAt    float64
	Type        string
	Utilization float64
	Windows     []agentcli.RateLimitWindow
}

// decode reads a rate_limit_info object.
func (r *wireRateLimit) decode(d *jsonscan.Decoder) {
	*r = wireRateLimit{}
	for k := range d.Object() {
		switch string(k) {
		case "status":
			r.Status = str(d)
		case "resetsAt":
			r.ResetsAt = d.Float()
		case "rateLimitType":
			r.Type = str(d)
		case "utilization":
			r.Utilization = d.Float()
		case "unifiedWindows":
			for name := range d.Object() {
				if len(r.Windows) >= 8 {
					d.Skip()
					continue
				}
				w := agentcli.RateLimitWindow{Type: strings.Clone(string(name))}
				for k := range d.Object() {
					switch string(k) {
					case "status":
						w.Status = agentcli.RateLimitStatus(strings.Clone(str(d)))
					case "resetsAt":
						w.ResetsAt = driver.UnixTime(d.Float())
					case "utilization":
						w.Utilization = d.Float()
					}
				}
				r.Windows = append(r.Windows, w)
			}
		}
	}
}

// limit returns the agentcli form of r, with memory of its own.
func (r *wireRateLimit) limit() *agentcli.RateLimit {
	l := &agentcli.RateLimit{
		Status:      agentcli.RateLimitStatus(strings.Clone(r.Status)),
		ResetsAt:    driver.UnixTime(r.ResetsAt),
		Type:        strings.Clone(r.Type),
		Utilization: r.Utilization,
	}
	for _, w := range r.Windows {
		if w.Type == r.Type && l.Utilization == 0 {
			l.Utilization = w.Utilization
		}
	}
	l.Window = windows[r.Type]
	for i := range r.Windows {
		r.Windows[i].Window = windows[r.Windows[i].Type]
	}
	if len(r.Windows) > 1 {
		l.Windows = r.Windows
	}
	return l
}

// windows are the lengths of the windows Claude's unified limits name.
var windows = map[string]time.Duration{"five_hour": 5 * time.Hour, "seven_day": 7 * 24 * time.Hour}

// wireCompact is a compact_metadata object.
type wireCompact struct {
	Trigger         string
	Pre, Post       int64
	HasPre, HasPost bool
}

func (c *wireCompact) decode(d *jsonscan.Decoder) {
	*c = wireCompact{}
	for k := range d.Object() {
		switch string(k) {
		case "trigger":
			c.Trigger = str(d)
		case "pre_tokens":
			c.Pre = driver.Count(d.Int())
		case "post_tokens":
			c.Post = driver.Count(d.Int())
		}
	}
}

// wireWindow is the context window of one model of a result's modelUsage.
type wireWindow struct {
	Model  string
	Window int64
}

// decodeModelUsage reads a result's modelUsage: its models (counted to
// two, the first kept) and the context window of each (at most four).
func (w *wireLine) decodeModelUsage(d *jsonscan.Decoder) {
	w.ModelUsage, w.ModelUsageCount, w.Windows = "", 0, w.Windows[:0]
	for k := range d.Object() {
		switch {
		case w.ModelUsageCount == 0:
			w.ModelUsage, w.ModelUsageCount = string(k), 1
		case w.ModelUsageCount == 1 && string(k) != w.ModelUsage:
			w.ModelUsageCount = 2
		}
		win := wireWindow{Model: string(k)}
		for f := range d.Object() {
			if string(f) == "contextWindow" {
				win.Window = driver.Count(d.Int())
			}
		}
		if win.Window > 0 && len(w.Windows) < 4 {
			w.Windows = append(w.Windows, win)
		}
	}
}

// rateLimitEvent appends the EventRateLimit of a rate_limit_event line.
func (p *parser) rateLimitEvent(w *wireLine, base agentcli.Event) bool {
	if !w.HasRateLimit {
		return false
	}
	l := w.RateLimit.limit()
	p.rateLimit = l
	ev := base
	ev.Kind, ev.RateLimit = agentcli.EventRateLimit, l
	p.evs = append(p.evs, ev)
	return true
}

// compaction appends the EventCompaction of a compact_boundary line.
func (p *parser) compaction(w *wireLine, base agentcli.Event) {
	ev := base
	ev.Kind = agentcli.EventCompaction
	ev.Compaction = &agentcli.Compaction{Trigger: w.Compact.Trigger, PreTokens: w.Compact.Pre, PostTokens: w.Compact.Post}
	p.evs = append(p.evs, ev)
}

// contextUsage appends the EventContextUsage of a result line: the
// context window of the turn's model, filled by its last model call (or,
// when no call reported usage, the result's usage).
func (p *parser) contextUsage(w *wireLine, base agentcli.Event) {
	model := p.callModel
	if model == "" {
		model = p.model
	}
	var win wireWindow
	for _, x := range w.Windows {
		if x.Model == model || len(w.Windows) == 1 {
			win = x
			break
		}
	}
	if win.Window == 0 {
		return
	}
	u := p.lastCall
	if !p.hasCall {
		u = w.Usage
	}
	ev := base
	ev.Kind = agentcli.EventContextUsage
	ev.ContextUsage = &agentcli.ContextUsage{
		UsedTokens:   u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens,
		WindowTokens: win.Window,
		Model:        win.Model,
	}
	p.evs = append(p.evs, ev)
}
