package claude

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
	"github.com/agentcli/agentcli/driver/streamjson"
)

// Each line is read once, in a single pass (driver/jsonscan), straight
// into wireLine: the subset of Claude Code's SDKMessage union that agentcli
// reads, under the wire's own field names. What no event uses (the
// tool_use_result copy of every tool output, uuids, per-message usage) is
// skipped without being decoded. Unknown fields are ignored and unknown
// line types are kept raw. Nothing depends on key order: a line is decoded
// whole before its type is looked at. A field of an unexpected type reads
// as absent; it cannot hide the rest of the line.
//
// Strings share the line's memory when they hold no escapes (the line is
// kept as Event.Raw anyway), so a text event costs no copy of its text.

// wireLine is one output line.
type wireLine struct {
	Type, Subtype string
	SessionID     string
	// ParentToolUseID is "" when absent or null.
	ParentToolUseID string
	Message         wireMessage
	HasMessage      bool
	Event           wireStreamEvt
	HasEvent        bool
	Model           string // system/init
	Version         string // system/init: claude_code_version
	IsAPIErrorMsg   bool
	Error           string // the error, a string or raw JSON
	// limits (see limits.go): rate_limit_event, api_error_params,
	// compact_boundary, the result's context windows
	RateLimit    wireRateLimit
	HasRateLimit bool
	ErrResetsAt  float64
	Compact      wireCompact
	Windows      []wireWindow

	// system/api_retry
	Attempt        int
	MaxRetries     int
	RetryDelayMS   float64
	ErrorStatus    int
	HasErrorStatus bool

	// result (Res.SessionID, Res.Subtype and Res.Raw are set by Apply)
	Res             wireResult
	ModelUsage      string // the model of modelUsage when it names one
	ModelUsageCount int    // distinct models in modelUsage (counted to 2)
	Errors          []string

	// system/init: mcp_servers (mcpnotice.go)
	MCPServers []driver.MCPServerStatus
}

type wireMessage struct {
	Model    string
	Content  []wireBlock
	Usage    agentcli.Usage
	HasUsage bool
}

type wireBlock = streamjson.Block

// blocks makes the events of an assistant message's blocks: the API's
// server tools (web search) are tool uses.
var blocks = streamjson.Blocks{Tools: tools, ServerTools: true}

type wireStreamEvt = streamjson.StreamEvent

// wireResult is what End needs of the result line: what qwen's says too
// (the answer's value under --json-schema is a view into the result line,
// which Result.Raw keeps anyway), and claude's own fields.
type wireResult struct {
	streamjson.Result
	TotalCostUSD    float64
	HasTotalCostUSD bool
	Model           string // the only model of modelUsage
	HasModel        bool
	StopReason      string
	TerminalReason  string
	APIErrorStatus  int
}

// parser is the state of one run's parsing of Claude Code output —
// stream-json lines, one json result object, or a json array of messages
// (--verbose) — which it turns into events (see driver.LineParser).
type parser struct {
	evs       []agentcli.Event
	sessionID string
	model     string
	result    *wireResult
	lastText  string
	// limits: the last rate limit state reported, the reset time of a
	// rejected request, the usage and model of the main thread's last
	// model call (hasCall: one was reported since the last result)
	rateLimit *agentcli.RateLimit
	resetsAt  time.Time
	lastCall  agentcli.Usage
	callModel string
	hasCall   bool
	// mcp reports the MCP servers that did not start (mcpnotice.go):
	// the session's, shared by its turns, in a live session.
	mcp *driver.MCPStartNotices
	// d and w decode the messages of an array (Other).
	d jsonscan.Decoder
	w wireLine
}

var _ driver.LineParser[wireLine] = (*parser)(nil)

// newParser returns the driver.Parser of one run.
func newParser() driver.Parser { return driver.Lines(Name, &parser{}) }

// Apply implements driver.LineParser.
func (p *parser) Apply(w *wireLine, line *driver.Line) []agentcli.Event {
	p.evs = p.evs[:0]
	p.apply(w, line)
	return p.evs
}

// Decode implements driver.Wire.
func (w *wireLine) Decode(d *jsonscan.Decoder) error {
	return driver.CheckJSON(d, w.decode(d), w.Type == "result")
}

// Other reads a line that is not a JSON object: `--output-format json
// --verbose` prints an array of messages.
func (p *parser) Other(line []byte) []agentcli.Event {
	p.evs = p.evs[:0]
	d, w := &p.d, &p.w
	d.Reset(line)
	defer d.Reset(nil)
	for range d.Array() {
		if d.Kind() != jsonscan.Object {
			if raw := d.Raw(); raw != nil {
				p.evs = append(p.evs, driver.NotObject(Name, raw))
			}
			continue
		}
		start := d.Offset()
		*w = wireLine{}
		bad := w.decode(d)
		if d.Err() != nil {
			break
		}
		raw := line[start:d.Offset()]
		if bad || w.Type == "result" && !json.Valid(raw) {
			p.evs = append(p.evs, driver.Notice(Name, raw, driver.ErrInvalidJSON))
			continue
		}
		p.apply(w, driver.KeptLine(raw))
	}
	if err := d.Finish(); err != nil {
		p.evs = append(p.evs, driver.Notice(Name, line, err))
	}
	*w = wireLine{}
	return p.evs
}

// str reads a string that may share the line's memory ("" for any other
// value).
func str(d *jsonscan.Decoder) string {
	s, _ := d.UnsafeStr()
	return s
}

// optInt reads a number that may be null or absent.
func optInt(d *jsonscan.Decoder) (int, bool) {
	n, ok := d.IntOK()
	return int(n), ok
}

// decode reads the object at the decoder's position into w, which is
// zero. It reports a tool input that is not valid JSON (bad).
func (w *wireLine) decode(d *jsonscan.Decoder) (bad bool) {
	for k := range d.Object() {
		switch string(k) {
		case "type":
			w.Type = str(d)
		case "subtype":
			w.Subtype = str(d)
		case "session_id":
			w.SessionID = str(d)
		case "parent_tool_use_id":
			w.ParentToolUseID = str(d)
		case "message":
			w.HasMessage = d.Kind() == jsonscan.Object
			bad = w.Message.decode(d) || bad
		case "event":
			w.HasEvent = d.Kind() == jsonscan.Object
			w.Event.Decode(d)
		case "model":
			w.Model = str(d)
		case "claude_code_version":
			w.Version = str(d)
		case "mcp_servers":
			w.MCPServers = driver.DecodeMCPServers(d, w.MCPServers)
		case "is_api_error_message":
			w.IsAPIErrorMsg = d.LooseBool()
		case "error":
			w.Error = driver.StrOrRaw(d)
		case "attempt":
			w.Attempt, _ = optInt(d)
		case "max_retries":
			w.MaxRetries, _ = optInt(d)
		case "retry_delay_ms":
			w.RetryDelayMS = d.Float()
		case "error_status":
			w.ErrorStatus, w.HasErrorStatus = optInt(d)
		case "is_error":
			w.Res.IsError = d.LooseBool()
		case "result":
			w.Res.Text, w.Res.HasText = d.UnsafeStr()
		case "num_turns":
			w.Res.Turns, _ = optInt(d)
		case "total_cost_usd":
			var c float64
			c, w.Res.HasTotalCostUSD = d.FloatOK()
			w.Res.TotalCostUSD = driver.Cost(c)
		case "usage":
			w.Res.HasUsage = d.Kind() == jsonscan.Object
			w.Res.Usage = streamjson.DecodeUsage(d)
		case "modelUsage":
			w.decodeModelUsage(d)
		case "rate_limit_info":
			w.HasRateLimit = d.Kind() == jsonscan.Object
			w.RateLimit.decode(d)
		case "api_error_params":
			for k := range d.Object() {
				if string(k) != "rate_limit_info" {
					continue
				}
				for k := range d.Object() {
					if string(k) == "resetsAt" {
						w.ErrResetsAt = d.Float()
					}
				}
			}
		case "compact_metadata":
			w.Compact.decode(d)
		case "stop_reason":
			w.Res.StopReason = str(d)
		case "terminal_reason":
			w.Res.TerminalReason = str(d)
		case "api_error_status":
			w.Res.APIErrorStatus, _ = optInt(d)
		case "structured_output":
			w.Res.Structured = driver.JSONValue(d)
		case "errors":
			w.Errors = driver.Strings(d)
		}
	}
	return bad
}

// decode reads a message; it reports a tool input that is not valid JSON
// (bad).
func (m *wireMessage) decode(d *jsonscan.Decoder) (bad bool) {
	m.Model, m.Content, m.Usage, m.HasUsage = "", m.Content[:0], agentcli.Usage{}, false
	for k := range d.Object() {
		switch string(k) {
		case "usage":
			m.HasUsage = d.Kind() == jsonscan.Object
			m.Usage = streamjson.DecodeUsage(d)
		case "model":
			m.Model = str(d)
		case "content":
			m.Content = streamjson.DecodeContent(d, m.Content[:0], &bad)
		}
	}
	return bad
}

// apply appends the events of the decoded line w.
func (p *parser) apply(w *wireLine, line *driver.Line) {
	if w.SessionID != "" {
		p.sessionID = w.SessionID
	}
	base := agentcli.Event{SessionID: w.SessionID, Subagent: w.ParentToolUseID, Raw: line.Raw()}
	known := true
	switch w.Type {
	case "system":
		known = p.system(w, base)
	case "assistant":
		known = w.HasMessage && p.assistant(w, base, line)
	case "user":
		known = w.HasMessage && p.user(w, base)
	case "stream_event":
		p.streamEvent(&w.Event, w.HasEvent, base)
	case "result":
		p.resultLine(w, base)
	case "rate_limit_event":
		known = p.rateLimitEvent(w, base)
	default:
		known = false
	}
	if !known {
		ev := base
		ev.Kind, ev.Raw = agentcli.EventUnknown, line.UnknownRaw()
		p.evs = append(p.evs, ev)
	}
}

// system appends the events of a system line; it reports false for a
// subtype it does not know.
func (p *parser) system(w *wireLine, base agentcli.Event) bool {
	ev := base
	switch w.Subtype {
	case "init":
		p.model = w.Model
		ev.Kind, ev.Model, ev.Version = agentcli.EventInit, w.Model, w.Version
		p.evs = append(p.evs, ev)
		p.evs = streamjson.MCPNotices(p.evs, &p.mcp, w.MCPServers, mcpFailed, base)
		return true
	case "api_retry":
		ev.Kind = agentcli.EventRetry
		ev.Retry = &agentcli.Retry{
			Attempt:    w.Attempt,
			MaxRetries: w.MaxRetries,
			Delay:      millis(w.RetryDelayMS),
			Message:    w.Error,
		}
		if w.HasErrorStatus {
			ev.Retry.Status = w.ErrorStatus
		}
	case "compact_boundary":
		p.compaction(w, base)
		return true
	default:
		return false
	}
	p.evs = append(p.evs, ev)
	return true
}

// assistant appends the events of an assistant message: one per block.
func (p *parser) assistant(w *wireLine, base agentcli.Event, line *driver.Line) bool {
	if w.IsAPIErrorMsg || w.Message.Model == "<synthetic>" {
		// The CLI's own rendering of an API error; the result line
		// carries the error. Surface the text as a notice, not as model
		// output.
		ev := base
		ev.Kind = agentcli.EventNotice
		ev.Text = joinText(w.Message.Content)
		p.evs = append(p.evs, ev)
		if t := driver.UnixTime(w.ErrResetsAt); !t.IsZero() {
			p.resetsAt = t
		}
		return true
	}
	if base.Subagent == "" && w.Message.HasUsage {
		p.lastCall, p.callModel, p.hasCall = w.Message.Usage, w.Message.Model, true
	}
	var last string
	var hasText bool
	p.evs, last, hasText = blocks.Events(p.evs, w.Message.Content, base, line)
	if hasText && base.Subagent == "" {
		p.lastText = last
	}
	return true
}

// user appends the tool results of a user message; it reports false
// when there are none.
func (p *parser) user(w *wireLine, base agentcli.Event) bool {
	n := len(p.evs)
	p.evs = streamjson.ToolResults(p.evs, w.Message.Content, base)
	return len(p.evs) > n
}

// streamEvent appends the text or thinking delta of a stream event; the
// others (message_start, input_json_delta, …) have nothing to normalize.
func (p *parser) streamEvent(e *wireStreamEvt, has bool, base agentcli.Event) {
	if ev, ok := e.DeltaEvent(base); has && ok {
		p.evs = append(p.evs, ev)
	}
}

// resultLine keeps the result line for End, and appends its usage.
func (p *parser) resultLine(w *wireLine, base agentcli.Event) {
	r := w.Res
	r.SessionID, r.Subtype, r.Raw = w.SessionID, w.Subtype, base.Raw
	r.Error, r.HasError = strings.Join(w.Errors, "; "), len(w.Errors) > 0
	if w.ModelUsageCount == 1 {
		r.Model, r.HasModel = w.ModelUsage, true
	}
	p.result = &r
	if r.HasUsage {
		ev := base
		ev.Kind = agentcli.EventUsage
		u := r.Usage
		ev.Usage = &u
		p.evs = append(p.evs, ev)
	}
	p.contextUsage(w, base)
	p.hasCall = false
}

// millis converts a delay in milliseconds, saturating rather than
// overflowing.
func millis(ms float64) time.Duration {
	const maxMS = float64(1<<63-1) / float64(time.Millisecond)
	switch {
	case !(ms > 0):
		return 0
	case ms >= maxMS:
		return 1<<63 - 1
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// End implements driver.Parser. Success is exit status 0 and a result with
// is_error false; anything else is a failure.
func (p *parser) End(exit driver.Exit) driver.Outcome {
	w := p.result
	if w == nil {
		return driver.Outcome{}
	}
	model := p.model
	if w.HasModel {
		model = w.Model
	}
	o := w.Outcome(exit, p.sessionID, model, p.lastText)
	res := o.Result
	res.TerminalReason, res.StopReason = w.TerminalReason, w.StopReason
	if w.HasTotalCostUSD {
		c := w.TotalCostUSD
		res.CostUSD = &c
	}
	if o.Failed {
		o.TerminalReason, o.APIStatus, o.ResetsAt, o.RateLimit = w.TerminalReason, w.APIErrorStatus, p.resetsAt, p.rateLimit
	}
	return o
}

func joinText(c []wireBlock) string {
	var b strings.Builder
	for _, blk := range c {
		if blk.Type == "text" {
			b.WriteString(blk.Text)
		}
	}
	return b.String()
}
