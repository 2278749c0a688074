package droid

// The parser of `droid exec --output-format stream-json` (0.225.2), in
// the kit's one parser shape (driver.Lines): each line is read once, in a
// single pass (driver/jsonscan), into wireLine; Apply turns it into
// events; End decides the outcome. A field of an unexpected type reads as
// absent. Strings share the line's memory where the run lets them.
//
// Lines:
//
//	{"type":"system","subtype":"init","cwd","session_id","tools","model","reasoning_effort"}
//	{"type":"message","role":"user"|"assistant","id","text","session_id"}
//	{"type":"tool_call","id","toolId","toolName","parameters","session_id"}
//	{"type":"tool_result","id","toolId","isError","value"|"error":{"type","message"},"session_id"}
//	{"type":"error","source":"agent_loop"|"cli","message","session_id"}
//	{"type":"completion","finalText","numTurns","durationMs","session_id",
//	 "usage":{"input_tokens","output_tokens","cache_read_input_tokens","cache_creation_input_tokens"}}
//
// The usage is in Anthropic's convention (streamjson.DecodeUsage).
//
// completion ends a successful run; an error from source "cli" ends a
// failed one (exit 1, no completion), after the agent loop's own error
// ("400 Bad Request", the HTTP status first, without the server's
// message). The user's own message is echoed; it is not model text. Other
// lines become EventUnknown, a line that is not a JSON object a notice.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
	"github.com/agentcli/agentcli/driver/streamjson"
)

// wireLine is one output line: the fields the types above use.
type wireLine struct {
	Type, Subtype, SessionID, Model string
	Role, Text                      string
	ID, ToolName, ToolID            string
	Parameters                      json.RawMessage
	IsError                         bool
	Value                           string // a tool result's value as text
	Error                           string // a tool result's error as text
	Source, Message                 string
	FinalText                       string
	HasFinalText                    bool
	NumTurns                        int
	Usage                           agentcli.Usage
	HasUsage                        bool
}

// parser is the state of one run's parsing (see driver.LineParser).
type parser struct {
	sessionID, model, lastText string
	done                       bool // completion seen
	failed                     bool // error from source cli seen
	finalText                  string
	hasFinalText               bool
	turns                      int
	use                        *agentcli.Usage
	errs                       []string // the agent loop's errors
	cliErr                     string
	raw                        json.RawMessage
	evs                        []agentcli.Event
}

var _ driver.LineParser[wireLine] = (*parser)(nil)

// newParser returns the driver.Parser of one run.
func newParser() driver.Parser { return driver.Lines(Name, &parser{}) }

// statusPrefix reads the HTTP status droid puts first in an API error
// ("400 Bad Request", "429 status code (no body)").
var statusPrefix = regexp.MustCompile(`^(\d{3})\b`)

// Decode implements driver.Wire.
func (w *wireLine) Decode(d *jsonscan.Decoder) error {
	bad := false
	for k := range d.Object() {
		switch string(k) {
		case "type":
			w.Type = d.Str()
		case "subtype":
			w.Subtype = d.Str()
		case "session_id":
			w.SessionID = d.Str()
		case "model":
			w.Model = d.Str()
		case "role":
			w.Role = d.Str()
		case "text":
			w.Text, _ = d.UnsafeStr()
		case "id":
			w.ID = d.Str()
		case "toolName":
			w.ToolName = d.Str()
		case "toolId":
			w.ToolID = d.Str()
		case "parameters":
			w.Parameters = nil
			if d.Kind() != jsonscan.Object {
				d.Skip()
				break
			}
			w.Parameters = driver.RawJSON(d, &bad)
		case "isError":
			w.IsError = d.Bool()
		case "value":
			w.Value = driver.StrOrRaw(d)
		case "error":
			w.Error = errorText(d)
		case "source":
			w.Source = d.Str()
		case "message":
			w.Message, _ = d.UnsafeStr()
		case "finalText":
			w.FinalText, w.HasFinalText = d.UnsafeStr()
		case "numTurns":
			w.NumTurns = int(d.Int())
		case "usage":
			w.HasUsage = d.Kind() == jsonscan.Object
			w.Usage = streamjson.DecodeUsage(d)
		}
	}
	return driver.CheckJSON(d, bad, w.Type == "completion" || w.Type == "error")
}

// errorText reads a tool result's error {type, message}: its message, or
// else the error as driver.StrOrRaw reads it.
func errorText(d *jsonscan.Decoder) string {
	if d.Kind() != jsonscan.Object {
		return driver.StrOrRaw(d)
	}
	start := d.Offset()
	for k := range d.Object() {
		if string(k) == "message" {
			if m, _ := d.UnsafeStr(); m != "" {
				return m // the rest of the object is skipped
			}
		}
	}
	return string(bytes.Trim(d.Span(start, d.Offset()), " \t\r\n"))
}

// Apply implements driver.LineParser.
func (p *parser) Apply(w *wireLine, line *driver.Line) []agentcli.Event {
	p.evs = p.evs[:0]
	if w.SessionID != "" {
		p.sessionID = w.SessionID
	}
	ev := agentcli.Event{SessionID: w.SessionID, Raw: line.Raw()}
	switch w.Type {
	case "system":
		if w.Subtype == "init" {
			p.model = w.Model
			ev.Kind, ev.Model = agentcli.EventInit, w.Model
			return append(p.evs, ev)
		}
	case "message":
		switch w.Role {
		case "assistant":
			ev.Kind, ev.Text = agentcli.EventText, w.Text
			p.lastText = w.Text
			return append(p.evs, ev)
		case "user":
			return nil // the prompt, echoed
		}
	case "tool_call":
		input := w.Parameters
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		ev.Kind, ev.Tool = agentcli.EventToolUse, tools.Use(w.ID, cmp.Or(w.ToolName, w.ToolID), input)
		return append(p.evs, ev)
	case "tool_result":
		out := w.Value
		if w.IsError {
			out = cmp.Or(w.Error, out)
		}
		ev.Kind, ev.ToolResult = agentcli.EventToolResult, &agentcli.ToolResult{ID: w.ID, Output: out, IsError: w.IsError}
		return append(p.evs, ev)
	case "error":
		if w.Source == "cli" {
			p.failed, p.cliErr, p.raw = true, w.Message, ev.Raw
		} else {
			p.errs = append(p.errs, w.Message)
		}
		ev.Kind, ev.Text = agentcli.EventNotice, w.Message
		return append(p.evs, ev)
	case "completion":
		p.done, p.finalText, p.hasFinalText, p.turns, p.raw = true, w.FinalText, w.HasFinalText, w.NumTurns, ev.Raw
		if w.HasUsage {
			u := w.Usage
			p.use = &u
			ev.Kind, ev.Usage = agentcli.EventUsage, &u
			return append(p.evs, ev)
		}
		return nil
	}
	ev.Kind, ev.Raw = agentcli.EventUnknown, line.UnknownRaw()
	return append(p.evs, ev)
}

// End implements driver.LineParser: a completion and exit status 0 is
// success; an error from source cli (or a completion with another exit
// status) is a *agentcli.ResultError; no terminal line at all is left to
// the runner.
func (p *parser) End(exit driver.Exit) driver.Outcome {
	if !p.done && !p.failed {
		return driver.Outcome{}
	}
	res := &agentcli.Result{SessionID: p.sessionID, Model: p.model, Turns: p.turns, Raw: p.raw, IsError: !p.done || exit.Code != 0}
	if p.hasFinalText {
		res.Text = p.finalText
	} else if p.done {
		res.Text = p.lastText
	}
	if p.use != nil {
		res.Usage = *p.use
	}
	if p.done && exit.Code == 0 {
		return driver.Outcome{Result: res}
	}
	o := driver.Outcome{Result: res, Failed: true}
	msgs := append(slices.Clone(p.errs), p.cliErr)
	o.Message = strings.Join(slices.DeleteFunc(msgs, func(m string) bool { return m == "" }), ": ")
	for _, m := range p.errs {
		if s := statusPrefix.FindStringSubmatch(m); s != nil {
			o.APIStatus, _ = strconv.Atoi(s[1])
		}
	}
	if p.done {
		o.Message = cmp.Or(o.Message, "CLI exited with a non-zero status after a successful result")
	}
	return o
}
