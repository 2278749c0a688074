package droid

// The parser of `droid exec --output-format stream-json` (0.225.2). It
// implements the plain driver.Parser seam (Line and End) with
// encoding/json; all of it is in this file so that it moves to another
// parser seam as a whole.
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
	"strconv"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

type line struct {
	Type       string          `json:"type"`
	Subtype    string          `json:"subtype"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Text       string          `json:"text"`
	ID         string          `json:"id"`
	ToolName   string          `json:"toolName"`
	ToolID     string          `json:"toolId"`
	Parameters json.RawMessage `json:"parameters"`
	IsError    bool            `json:"isError"`
	Value      json.RawMessage `json:"value"`
	Error      json.RawMessage `json:"error"`
	Source     string          `json:"source"`
	Message    string          `json:"message"`
	FinalText  *string         `json:"finalText"`
	NumTurns   int             `json:"numTurns"`
	Usage      *usage          `json:"usage"`
}

type usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CacheRead    int64 `json:"cache_read_input_tokens"`
	CacheWrite   int64 `json:"cache_creation_input_tokens"`
}

func (u *usage) usage() agentcli.Usage {
	return agentcli.Usage{
		InputTokens:      driver.Count(u.InputTokens),
		OutputTokens:     driver.Count(u.OutputTokens),
		CacheReadTokens:  driver.Count(u.CacheRead),
		CacheWriteTokens: driver.Count(u.CacheWrite),
	}
}

// parser turns droid's stream-json output into events.
type parser struct {
	sessionID, model, lastText string
	done                       bool // completion seen
	failed                     bool // error from source cli seen
	finalText                  *string
	turns                      int
	use                        *agentcli.Usage
	errs                       []string // the agent loop's errors
	cliErr                     string
	raw                        json.RawMessage
	evs                        []agentcli.Event
}

func newParser() *parser { return &parser{} }

// statusPrefix reads the HTTP status droid puts first in an API error
// ("400 Bad Request", "429 status code (no body)").
var statusPrefix = regexp.MustCompile(`^(\d{3})\b`)

// Line implements driver.Parser.
func (p *parser) Line(raw []byte) []agentcli.Event {
	clear(p.evs)
	p.evs = p.evs[:0]
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return nil
	}
	if t[0] != '{' {
		return append(p.evs, driver.NotObject(Name, raw))
	}
	var w line
	if err := json.Unmarshal(t, &w); err != nil {
		var loose map[string]json.RawMessage
		if json.Unmarshal(t, &loose) != nil {
			return append(p.evs, driver.Notice(Name, raw, err))
		}
		w = looseLine(loose)
	}
	if w.SessionID != "" {
		p.sessionID = w.SessionID
	}
	keep := append([]byte(nil), raw...)
	ev := agentcli.Event{SessionID: w.SessionID, Raw: keep}
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
		if len(input) == 0 || input[0] != '{' {
			input = json.RawMessage("{}")
		}
		ev.Kind, ev.Tool = agentcli.EventToolUse, tools.Use(w.ID, cmp.Or(w.ToolName, w.ToolID), input)
		return append(p.evs, ev)
	case "tool_result":
		out := valueText(w.Value)
		if w.IsError {
			out = cmp.Or(errorText(w.Error), out)
		}
		ev.Kind, ev.ToolResult = agentcli.EventToolResult, &agentcli.ToolResult{ID: w.ID, Output: out, IsError: w.IsError}
		return append(p.evs, ev)
	case "error":
		if w.Source == "cli" {
			p.failed, p.cliErr, p.raw = true, w.Message, keep
		} else {
			p.errs = append(p.errs, w.Message)
		}
		ev.Kind, ev.Text = agentcli.EventNotice, w.Message
		return append(p.evs, ev)
	case "completion":
		p.done, p.finalText, p.turns, p.raw = true, w.FinalText, w.NumTurns, keep
		if w.Usage != nil {
			u := w.Usage.usage()
			p.use = &u
			ev.Kind, ev.Usage = agentcli.EventUsage, &u
			return append(p.evs, ev)
		}
		return nil
	}
	ev.Kind = agentcli.EventUnknown
	return append(p.evs, ev)
}

// looseLine reads a line field by field, so that one of an unexpected
// type reads as absent.
func looseLine(m map[string]json.RawMessage) line {
	var w line
	for k, dst := range map[string]*string{"type": &w.Type, "subtype": &w.Subtype, "session_id": &w.SessionID,
		"model": &w.Model, "role": &w.Role, "text": &w.Text, "id": &w.ID, "toolName": &w.ToolName,
		"toolId": &w.ToolID, "source": &w.Source, "message": &w.Message} {
		_ = json.Unmarshal(m[k], dst)
	}
	w.Parameters, w.Value, w.Error = m["parameters"], m["value"], m["error"]
	_ = json.Unmarshal(m["isError"], &w.IsError)
	_ = json.Unmarshal(m["numTurns"], &w.NumTurns)
	var s string
	if json.Unmarshal(m["finalText"], &s) == nil && m["finalText"] != nil {
		w.FinalText = &s
	}
	var u usage
	if m["usage"] != nil && json.Unmarshal(m["usage"], &u) == nil {
		w.Usage = &u
	}
	return w
}

// valueText reads a tool result's value: a string, or JSON as it is.
func valueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// errorText reads a tool result's error {type, message}, or a string.
func errorText(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	return valueText(raw)
}

// End implements driver.Parser: a completion and exit status 0 is
// success; an error from source cli (or a completion with another exit
// status) is a *agentcli.ResultError; no terminal line at all is left to
// the runner.
func (p *parser) End(exit driver.Exit) driver.Outcome {
	if !p.done && !p.failed {
		return driver.Outcome{}
	}
	res := &agentcli.Result{SessionID: p.sessionID, Model: p.model, Turns: p.turns, Raw: p.raw, IsError: !p.done || exit.Code != 0}
	if p.finalText != nil {
		res.Text = *p.finalText
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
	msgs := append(append([]string(nil), p.errs...), p.cliErr)
	o.Message = strings.Join(slicesCompact(msgs), ": ")
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

// slicesCompact drops empty strings.
func slicesCompact(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
