package opencode

import (
	"cmp"
	"encoding/json"
	"math"
	"regexp"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// Each line of `opencode run --format json` output, an envelope {type,
// timestamp, sessionID, ...data}, is read once, in a single pass
// (driver/jsonscan), straight into wireLine, under the wire's own field
// names. Unknown fields are ignored and unknown line types are kept raw.
// Nothing depends on key order: a line is decoded whole before its type is
// looked at. A field of an unexpected type reads as absent rather than
// losing the line. Strings share the line's memory when they hold no
// escapes (the line is kept as Event.Raw anyway).

type wireLine struct {
	Type      string
	SessionID string
	Part      wirePart
	HasPart   bool
	Error     apiError // the error of an error line
	HasError  bool
	// done (builds after 1.18.33)
	Reason   string
	Rejected []string
}

type wirePart struct {
	ID        string
	SessionID string
	MessageID string
	Type      string
	// text, reasoning
	Text      string
	Synthetic bool
	Ignored   bool
	// tool
	CallID   string
	Tool     string
	State    wireToolState
	HasState bool
	// step-finish
	Reason    string
	Cost      float64
	HasCost   bool
	Tokens    agentcli.Usage // converted (see decodeTokens)
	HasTokens bool
}

type wireToolState struct {
	Status  string
	Input   json.RawMessage
	Output  string // a string's value, or the JSON of any other value
	Error   string // likewise
	Exit    int    // metadata.exit
	HasExit bool
}

// apiError is one error the CLI reported: the `error` field of an error
// line, a NamedError {name, data{message, statusCode, providerID, ...}}.
// Errors returned by the prompt call itself may have other shapes; those
// are kept as raw text.
type apiError struct {
	name    string
	message string
	status  int
}

// parser is the state of one run's parsing of `opencode run --format json`
// lines, which it turns into events, and decides the outcome of the run
// (see driver.LineParser). opencode 1.18.33 prints no terminal event: the
// run succeeded when the CLI exited 0, reported no error and finished its
// last step.
type parser struct {
	evs []agentcli.Event
	outcome
}

var _ driver.LineParser[wireLine] = (*parser)(nil)

// outcome is what a parser of opencode's output keeps to decide a run's
// outcome (see End); the test oracle (the former parser) shares it.
type outcome struct {
	sessionID string
	inited    bool

	// stepMsg is the message id of the current step; stepText holds the
	// text parts of that step.
	stepMsg  string
	stepText []string

	steps      int  // step_finish lines seen
	open       bool // a step started and has not finished
	usage      agentcli.Usage
	cost       *float64
	stopReason string
	lastFinish json.RawMessage

	done     bool
	doneRaw  json.RawMessage
	doneWhy  string
	errs     []apiError
	errorRaw json.RawMessage
}

// maxErrors bounds how many error lines are kept for the error message.
const maxErrors = 32

// newParser returns the driver.Parser of one run.
func newParser() driver.Parser { return driver.Lines(Name, &parser{}) }

// str reads a string that may share the line's memory ("" for any other
// value).
func str(d *jsonscan.Decoder) string {
	s, _ := d.UnsafeStr()
	return s
}

// keptWhole reports whether lines of this type may become Result.Raw,
// which must be valid JSON.
func keptWhole(typ string) bool {
	switch typ {
	case "step_finish", "done", "error":
		return true
	}
	return false
}

// Apply implements driver.LineParser.
func (p *parser) Apply(w *wireLine, line *driver.Line) []agentcli.Event {
	p.evs = p.evs[:0]
	p.apply(w, line)
	return p.evs
}

// Decode implements driver.Wire.
func (w *wireLine) Decode(d *jsonscan.Decoder) error {
	return driver.CheckJSON(d, w.decode(d), keptWhole(w.Type))
}

// decode reads the object at the decoder's position into w, which is
// zero. It reports a tool input that is not valid JSON (bad).
func (w *wireLine) decode(d *jsonscan.Decoder) (bad bool) {
	for k := range d.Object() {
		switch string(k) {
		case "type":
			w.Type = str(d)
		case "sessionID":
			w.SessionID = str(d)
		case "part":
			w.HasPart = d.Kind() == jsonscan.Object
			w.Part = wirePart{}
			bad = w.Part.decode(d) || bad
		case "error":
			w.HasError = true
			w.Error = decodeError(d)
		case "reason":
			w.Reason = str(d)
		case "rejected":
			w.Rejected = driver.Strings(d)
		}
	}
	return bad
}

func (part *wirePart) decode(d *jsonscan.Decoder) (bad bool) {
	for k := range d.Object() {
		switch string(k) {
		case "id":
			part.ID = str(d)
		case "sessionID":
			part.SessionID = str(d)
		case "messageID":
			part.MessageID = str(d)
		case "type":
			part.Type = str(d)
		case "text":
			part.Text = str(d)
		case "synthetic":
			part.Synthetic = d.LooseBool()
		case "ignored":
			part.Ignored = d.LooseBool()
		case "callID":
			part.CallID = str(d)
		case "tool":
			part.Tool = str(d)
		case "state":
			part.HasState = d.Kind() == jsonscan.Object
			part.State = wireToolState{}
			bad = part.State.decode(d) || bad
		case "reason":
			part.Reason = str(d)
		case "cost":
			c, ok := d.FloatOK()
			part.Cost, part.HasCost = driver.Cost(c), ok
		case "tokens":
			part.HasTokens = d.Kind() == jsonscan.Object
			part.Tokens = decodeTokens(d)
		}
	}
	return bad
}

func (st *wireToolState) decode(d *jsonscan.Decoder) (bad bool) {
	for k := range d.Object() {
		switch string(k) {
		case "status":
			st.Status = str(d)
		case "input":
			st.Input = driver.RawJSON(d, &bad)
		case "output":
			st.Output = driver.StrOrRaw(d)
		case "error":
			st.Error = driver.StrOrRaw(d)
		case "metadata":
			st.HasExit = false
			for k := range d.Object() {
				if string(k) == "exit" {
					var f float64
					f, st.HasExit = d.FloatOK()
					st.Exit = exitCode(f)
				}
			}
		}
	}
	return bad
}

// exitCode converts an exit status printed as a JSON number: truncated,
// clamped to the int32 range.
func exitCode(f float64) int {
	return int(max(min(math.Trunc(f), math.MaxInt32), math.MinInt32))
}

// decodeTokens reads step-finish tokens, which opencode prints as JSON
// numbers, into agentcli's convention: opencode's own split has output
// exclusive of reasoning; agentcli's OutputTokens includes it (see
// agentcli.Usage). Counts are clamped to [0, MaxInt64].
func decodeTokens(d *jsonscan.Decoder) agentcli.Usage {
	var u agentcli.Usage
	var out int64
	for k := range d.Object() {
		switch string(k) {
		case "input":
			u.InputTokens = driver.CountFloat(d.Float())
		case "output":
			out = driver.CountFloat(d.Float())
		case "reasoning":
			u.ReasoningTokens = driver.CountFloat(d.Float())
		case "cache":
			u.CacheReadTokens, u.CacheWriteTokens = 0, 0
			for k := range d.Object() {
				switch string(k) {
				case "read":
					u.CacheReadTokens = driver.CountFloat(d.Float())
				case "write":
					u.CacheWriteTokens = driver.CountFloat(d.Float())
				}
			}
		}
	}
	u.OutputTokens = driver.AddCount(out, u.ReasoningTokens)
	return u
}

// decodeError reads the `error` of an error line.
func decodeError(d *jsonscan.Decoder) apiError {
	var e apiError
	switch d.Kind() {
	case jsonscan.Null, jsonscan.Invalid:
		d.Skip()
		e.message = "unknown error"
		return e
	case jsonscan.String:
		e.message = str(d)
		return e
	case jsonscan.Object:
	default:
		e.message = string(d.Raw())
		return e
	}
	start := d.Offset()
	var dataMessage string
	for k := range d.Object() {
		switch string(k) {
		case "name":
			e.name = str(d)
		case "message":
			e.message = str(d)
		case "data":
			dataMessage = ""
			for k := range d.Object() {
				switch string(k) {
				case "message":
					dataMessage = str(d)
				case "statusCode":
					if c := d.Float(); c >= 100 && c <= 999 {
						e.status = int(c)
					}
				}
			}
		}
	}
	if dataMessage != "" {
		e.message = dataMessage
	}
	if e.name == "" && e.message == "" && d.Err() == nil {
		e.message = string(d.Span(start, d.Offset()))
	}
	return e
}

// apply appends the events of the decoded line w.
func (p *parser) apply(w *wireLine, line *driver.Line) {
	part := &w.Part
	sid := cmp.Or(w.SessionID, part.SessionID)
	if sid != "" {
		if p.sessionID == "" {
			p.sessionID = sid
		}
		if !p.inited {
			p.inited = true
			p.evs = append(p.evs, agentcli.Event{Kind: agentcli.EventInit, SessionID: sid})
		}
	}
	base := agentcli.Event{SessionID: sid, Raw: line.Raw()}
	if w.Type == "error" || w.Type == "done" {
		p.end(w, base)
		return
	}
	switch w.Type {
	case "step_start":
		p.step(part.MessageID, true)
		p.open = true
	case "text", "reasoning", "tool_use", "step_finish":
		p.step(part.MessageID, false)
		if p.part(w.Type, part, base) {
			return
		}
		fallthrough
	default:
		ev := base
		ev.Kind, ev.Raw = agentcli.EventUnknown, line.UnknownRaw()
		p.evs = append(p.evs, ev)
	}
}

// part appends the events of a part of the current step; it reports
// false for a part that is not model output (a synthetic text).
func (p *parser) part(typ string, part *wirePart, base agentcli.Event) bool {
	ev := base
	switch typ {
	case "text":
		if part.Synthetic || part.Ignored {
			return false
		}
		p.stepText = append(p.stepText, part.Text)
		ev.Kind, ev.Text = agentcli.EventText, part.Text
	case "reasoning":
		ev.Kind, ev.Text = agentcli.EventThinking, part.Text
	case "tool_use":
		p.toolUse(part, base)
		return true
	case "step_finish":
		p.open = false
		p.steps++
		p.stopReason = part.Reason
		p.lastFinish = base.Raw
		if part.HasCost {
			c := part.Cost
			if p.cost != nil {
				c = driver.AddCost(c, *p.cost)
			}
			p.cost = &c
		}
		if part.HasTokens {
			p.usage = p.usage.Add(part.Tokens)
		}
		u := p.usage
		ev.Kind, ev.Usage = agentcli.EventUsage, &u
	}
	p.evs = append(p.evs, ev)
	return true
}

// toolUse appends the tool use of a tool part and, once it completed or
// failed, its result.
func (p *parser) toolUse(part *wirePart, base agentcli.Event) {
	id := cmp.Or(part.CallID, part.ID)
	use := base
	use.Kind = agentcli.EventToolUse
	use.Tool = tools.Use(id, part.Tool, nil)
	p.evs = append(p.evs, use)
	if !part.HasState {
		return
	}
	st := &part.State
	if len(st.Input) > 0 && string(st.Input) != "null" {
		use.Tool.Input = st.Input
	}
	res := &agentcli.ToolResult{ID: id}
	switch st.Status {
	case "completed":
		res.Output = st.Output
	case "error":
		res.Output, res.IsError = st.Error, true
	default: // pending and running are never printed by `run`
		return
	}
	if st.HasExit {
		c := st.Exit
		res.ExitCode = &c
	}
	ev := base
	ev.Kind, ev.ToolResult = agentcli.EventToolResult, res
	p.evs = append(p.evs, ev)
}

// end notes an error line or the done line, which decide the outcome.
func (p *parser) end(w *wireLine, base agentcli.Event) {
	ev := base
	ev.Kind = agentcli.EventNotice
	if w.Type == "done" {
		p.done, p.doneRaw, p.doneWhy = true, base.Raw, w.Reason
		if len(w.Rejected) == 0 {
			return
		}
		ev.Text = "opencode rejected permission requests: " + strings.Join(w.Rejected, ", ")
		p.evs = append(p.evs, ev)
		return
	}
	e := w.Error
	if !w.HasError {
		e.message = "unknown error"
	}
	if len(p.errs) < maxErrors {
		p.errs = append(p.errs, e)
	}
	p.errorRaw = base.Raw
	ev.Text = e.String()
	p.evs = append(p.evs, ev)
}

// step notes that a part of message msg arrived. A step_start line (start)
// begins a new step; since each step of the agent loop is a new assistant
// message, so does a part with a new message id.
func (p *outcome) step(msg string, start bool) {
	if start || msg != "" && msg != p.stepMsg {
		p.stepMsg = msg
		p.stepText = nil
	}
}

// End implements driver.Parser.
//
// An error line makes the run a failure, whatever the exit status.
// Otherwise a non-zero exit is an *agentcli.ExitError (with Kind
// ErrSessionNotFound for "Session not found"), and an exit 0 is a success
// only if a done line was printed or at least one step finished and no step
// was left open; anything less is an *agentcli.NoResultError.
func (p *outcome) End(exit driver.Exit) driver.Outcome {
	res := &agentcli.Result{
		Text:           strings.Join(p.stepText, "\n"),
		SessionID:      p.sessionID,
		Usage:          p.usage,
		CostUSD:        p.cost,
		Turns:          p.steps,
		StopReason:     p.stopReason,
		TerminalReason: p.doneWhy,
		Raw:            p.doneRaw,
	}
	if res.Raw == nil {
		res.Raw = p.lastFinish
	}
	if len(p.errs) > 0 {
		first := p.errs[0]
		msgs := make([]string, 0, len(p.errs))
		for _, e := range p.errs {
			m := e.message
			if m == "" {
				m = e.name
			}
			if len(msgs) == 0 || msgs[len(msgs)-1] != m {
				msgs = append(msgs, m)
			}
		}
		res.Subtype = first.name
		res.Raw = p.errorRaw
		o := driver.Outcome{Result: res, Failed: true, Subtype: first.name, APIStatus: first.status, Message: strings.Join(msgs, "; ")}
		if first.name == "ProviderAuthError" {
			o.Kind = agentcli.ErrAuth
		}
		return o
	}
	if exit.Code != 0 || !p.done && (p.steps == 0 || p.open) {
		return driver.Outcome{}
	}
	return driver.Outcome{Result: res}
}

// String renders the error as "Name: message" (or whichever is known).
func (e apiError) String() string {
	s := e.message
	if e.name != "" {
		if s == "" {
			s = e.name
		} else {
			s = e.name + ": " + s
		}
	}
	return s
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// stripANSI removes terminal escape sequences; opencode colours its
// "Error:" prefix even when stderr is not a terminal.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansiRE.ReplaceAllString(s, "")
}
