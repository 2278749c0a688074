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

// maxRateWindows bounds the windows of a rate_limit_info kept.
const maxRateWindows = 8

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
				if len(r.Windows) >= maxRateWindows {
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

// maxWindows bounds the context windows a result line keeps.
const maxWindows = 4

// decodeModelUsage reads a result's modelUsage: its models (counted to
// two, the first kept) and the context window of each: the first
// maxWindows models that name one, in order; a model given again
// replaces its window (the last wins).
func (w *wireLine) decodeModelUsage(d *jsonscan.Decoder) {
	w.ModelUsage, w.ModelUsageCount, w.Windows = "", 0, w.Windows[:0]
	for k := range d.Object() {
		switch {
		case w.ModelUsageCount == 0:
			w.ModelUsage, w.ModelUsageCount = string(k), 1
		case w.ModelUsageCount == 1 && string(k) != w.ModelUsage:
			w.ModelUsageCount = 2
		}
		var win int64
		for f := range d.Object() {
			if string(f) == "contextWindow" {
				win = driver.Count(d.Int())
			}
		}
		w.Windows = addWindow(w.Windows, string(k), win)
	}
}

// addWindow records model's context window in ws (see decodeModelUsage).
func addWindow(ws []wireWindow, model string, win int64) []wireWindow {
	for i := range ws {
		if ws[i].Model == model {
			ws[i].Window = win
			return ws
		}
	}
	if win > 0 && len(ws) < maxWindows {
		ws = append(ws, wireWindow{Model: model, Window: win})
	}
	return ws
}

// windowOf returns the context window of model among ws, or of the only
// model ws holds; zero when there is none.
func windowOf(ws []wireWindow, model string) wireWindow {
	for _, x := range ws {
		if x.Model == model {
			return x
		}
	}
	if len(ws) == 1 {
		return ws[0]
	}
	return wireWindow{}
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
	win := windowOf(w.Windows, model)
	if win.Window == 0 {
		return
	}
	u := p.lastCall
	if !p.hasCall {
		u = w.Res.Usage
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
