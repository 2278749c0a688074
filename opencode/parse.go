package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/runner"
)

// Wire structs: the subset of `opencode run --format json` output that
// agentcli reads. Every line is an envelope {type, timestamp, sessionID,
// ...data}. Unknown fields are ignored and unknown line types are kept raw.
// Nothing depends on key order; a field of an unexpected type is dropped
// rather than losing the line.

type wireLine struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionID"`
	Part      *wirePart       `json:"part"`
	Error     json.RawMessage `json:"error"`
	// done (builds after 1.18.33)
	Reason   string   `json:"reason"`
	Rejected []string `json:"rejected"`
}

type wirePart struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionID"`
	MessageID string `json:"messageID"`
	Type      string `json:"type"`
	// text, reasoning
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
	// tool
	CallID string         `json:"callID"`
	Tool   string         `json:"tool"`
	State  *wireToolState `json:"state"`
	// step-finish
	Reason string          `json:"reason"`
	Cost   json.RawMessage `json:"cost"`
	Tokens *wireTokens     `json:"tokens"`
}

type wireToolState struct {
	Status   string          `json:"status"`
	Input    json.RawMessage `json:"input"`
	Output   json.RawMessage `json:"output"`
	Error    json.RawMessage `json:"error"`
	Metadata *struct {
		Exit json.RawMessage `json:"exit"`
	} `json:"metadata"`
}

type wireTokens struct {
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	Reasoning float64 `json:"reasoning"`
	Cache     struct {
		Read  float64 `json:"read"`
		Write float64 `json:"write"`
	} `json:"cache"`
}

// wireError is the `error` field of an error line: a NamedError
// {name, data{message, statusCode, providerID, ...}}. Errors returned by the
// prompt call itself may have other shapes; those are kept as raw text.
type wireError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
	Data    *struct {
		Message    string  `json:"message"`
		StatusCode float64 `json:"statusCode"`
		ProviderID string  `json:"providerID"`
	} `json:"data"`
}

// apiError is one error the CLI reported.
type apiError struct {
	name    string
	message string
	status  int
}

// parser turns `opencode run --format json` lines into events and decides
// the outcome of the run. opencode 1.18.33 prints no terminal event: the run
// succeeded when the CLI exited 0, reported no error and finished its last
// step.
type parser struct {
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

func newParser() *parser { return &parser{} }

// Line implements runner.Parser.
func (p *parser) Line(line []byte) []agentcli.Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var w wireLine
	if n := runner.DecodeObject(Name, line, &w); n != nil {
		return n
	}
	raw := json.RawMessage(line)
	sid := w.SessionID
	if sid == "" && w.Part != nil {
		sid = w.Part.SessionID
	}
	var evs []agentcli.Event
	if sid != "" {
		if p.sessionID == "" {
			p.sessionID = sid
		}
		if !p.inited {
			p.inited = true
			evs = append(evs, agentcli.Event{Kind: agentcli.EventInit, SessionID: sid})
		}
	}
	base := agentcli.Event{SessionID: sid, Raw: raw}
	part := w.Part
	if part == nil {
		part = &wirePart{}
	}
	switch w.Type {
	case "step_start":
		p.step(part.MessageID, true)
		p.open = true
		return evs
	case "text":
		p.step(part.MessageID, false)
		if part.Synthetic || part.Ignored {
			break // not model output
		}
		p.stepText = append(p.stepText, part.Text)
		ev := base
		ev.Kind, ev.Text = agentcli.EventText, part.Text
		return append(evs, ev)
	case "reasoning":
		p.step(part.MessageID, false)
		ev := base
		ev.Kind, ev.Text = agentcli.EventThinking, part.Text
		return append(evs, ev)
	case "tool_use":
		p.step(part.MessageID, false)
		id := part.CallID
		if id == "" {
			id = part.ID
		}
		use := base
		use.Kind = agentcli.EventToolUse
		use.Tool = tools.Use(id, part.Tool, nil)
		evs = append(evs, use)
		st := part.State
		if st == nil {
			return evs
		}
		if len(st.Input) > 0 && string(st.Input) != "null" {
			use.Tool.Input = st.Input
		}
		res := &agentcli.ToolResult{ID: id}
		switch st.Status {
		case "completed":
			res.Output = runner.RawString(st.Output)
		case "error":
			res.Output, res.IsError = runner.RawString(st.Error), true
		default: // pending and running are never printed by `run`
			return evs
		}
		var code float64
		if st.Metadata != nil && number(st.Metadata.Exit, &code) {
			c := int(code)
			res.ExitCode = &c
		}
		ev := base
		ev.Kind, ev.ToolResult = agentcli.EventToolResult, res
		return append(evs, ev)
	case "step_finish":
		p.step(part.MessageID, false)
		p.open = false
		p.steps++
		p.stopReason = part.Reason
		p.lastFinish = raw
		var c float64
		if number(part.Cost, &c) {
			if p.cost != nil {
				c += *p.cost
			}
			p.cost = &c
		}
		if t := part.Tokens; t != nil {
			// opencode's own split has output exclusive of reasoning;
			// agentcli's OutputTokens includes it (see agentcli.Usage).
			p.usage = p.usage.Add(agentcli.Usage{
				InputTokens:      int64(t.Input),
				OutputTokens:     int64(t.Output + t.Reasoning),
				ReasoningTokens:  int64(t.Reasoning),
				CacheReadTokens:  int64(t.Cache.Read),
				CacheWriteTokens: int64(t.Cache.Write),
			})
		}
		u := p.usage
		ev := base
		ev.Kind, ev.Usage = agentcli.EventUsage, &u
		return append(evs, ev)
	case "error":
		e := decodeError(w.Error)
		if len(p.errs) < maxErrors {
			p.errs = append(p.errs, e)
		}
		p.errorRaw = raw
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, e.String()
		return append(evs, ev)
	case "done":
		p.done, p.doneRaw, p.doneWhy = true, raw, w.Reason
		if len(w.Rejected) > 0 {
			ev := base
			ev.Kind = agentcli.EventNotice
			ev.Text = "opencode rejected permission requests: " + strings.Join(w.Rejected, ", ")
			return append(evs, ev)
		}
		return evs
	}
	ev := base
	ev.Kind = agentcli.EventUnknown
	return append(evs, ev)
}

// step notes that a part of message msg arrived. A step_start line (start)
// begins a new step; since each step of the agent loop is a new assistant
// message, so does a part with a new message id.
func (p *parser) step(msg string, start bool) {
	if start || msg != "" && msg != p.stepMsg {
		p.stepMsg = msg
		p.stepText = nil
	}
}

// End implements runner.Parser.
//
// An error line makes the run a *agentcli.ResultError, whatever the exit
// status. Otherwise a non-zero exit is a *agentcli.ExitError (with Kind
// ErrSessionNotFound for "Session not found"), and an exit 0 is a success
// only if a done line was printed or at least one step finished and no step
// was left open; anything less is a *agentcli.NoResultError.
func (p *parser) End(exit runner.Exit) (*agentcli.Result, error) {
	exit.Stderr = stripANSI(exit.Stderr)
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
		res.IsError = true
		res.Subtype = first.name
		res.Raw = p.errorRaw
		re := &agentcli.ResultError{
			Subtype:   first.name,
			APIStatus: first.status,
			Message:   strings.Join(msgs, "; "),
			ExitCode:  exit.Code,
			Result:    res,
		}
		switch {
		case first.name == "ProviderAuthError":
			re.Kind = agentcli.ErrAuth
		case first.status != 0:
			re.Kind = runner.ClassifyStatus(first.status)
		}
		return res, re
	}
	if exit.Code != 0 {
		return nil, &agentcli.ExitError{Code: exit.Code, Stderr: exit.Stderr}
	}
	if !p.done && (p.steps == 0 || p.open) {
		return nil, nil
	}
	return res, nil
}

func decodeError(r json.RawMessage) apiError {
	var e apiError
	r = bytes.TrimSpace(r)
	if len(r) == 0 || string(r) == "null" {
		e.message = "unknown error"
		return e
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		e.message = s
		return e
	}
	var w wireError
	if err := json.Unmarshal(r, &w); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			e.message = string(r)
			return e
		}
	}
	e.name = w.Name
	e.message = w.Message
	if w.Data != nil {
		if w.Data.Message != "" {
			e.message = w.Data.Message
		}
		if c := w.Data.StatusCode; c >= 100 && c <= 999 {
			e.status = int(c)
		}
	}
	if e.name == "" && e.message == "" {
		e.message = string(r)
	}
	return e
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

// number decodes r into f if r is a JSON number.
func number(r json.RawMessage, f *float64) bool {
	r = bytes.TrimSpace(r)
	if len(r) == 0 || r[0] == 'n' {
		return false
	}
	return json.Unmarshal(r, f) == nil
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
