package droid

// The oracle: the encoding/json parser agentcli shipped before the
// single-pass one (parse.go), kept as it was (identifiers renamed) so
// that TestOracle and FuzzOracle can check the new parser against it.
//
// Differences by design, outside the oracle's domain (lineShape):
//   - A field of an unexpected type reads as absent, alone; the oracle
//     re-read such a line field by field and then dropped a whole object
//     (usage) when one of its fields had an unexpected type, and read a
//     null usage as zero usage.
//   - Parts of a line no event keeps are not validated: a line that is
//     not valid JSON there still yields its events. Tool inputs and the
//     lines Result.Raw keeps (completion, error) are validated.
//   - Keys match exactly; the oracle matched them case-insensitively. A
//     repeated key: the last wins whole.
//   - Notices carry jsonscan's syntax errors, not encoding/json's.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

type oLine struct {
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
	Usage      *oUsage         `json:"usage"`
}

type oUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CacheRead    int64 `json:"cache_read_input_tokens"`
	CacheWrite   int64 `json:"cache_creation_input_tokens"`
}

func (u *oUsage) usage() agentcli.Usage {
	return agentcli.Usage{
		InputTokens:      driver.Count(u.InputTokens),
		OutputTokens:     driver.Count(u.OutputTokens),
		CacheReadTokens:  driver.Count(u.CacheRead),
		CacheWriteTokens: driver.Count(u.CacheWrite),
	}
}

// parser turns droid's stream-json output into events.
type oracleParser struct {
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

func newOracleParser() *oracleParser { return &oracleParser{} }

// Line implements driver.Parser.
func (p *oracleParser) Line(raw []byte) []agentcli.Event {
	clear(p.evs)
	p.evs = p.evs[:0]
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return nil
	}
	if t[0] != '{' {
		return append(p.evs, driver.NotObject(Name, raw))
	}
	var w oLine
	if err := json.Unmarshal(t, &w); err != nil {
		var loose map[string]json.RawMessage
		if json.Unmarshal(t, &loose) != nil {
			return append(p.evs, driver.Notice(Name, raw, err))
		}
		w = oLooseLine(loose)
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
		out := oValueText(w.Value)
		if w.IsError {
			out = cmp.Or(oErrorText(w.Error), out)
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

// oLooseLine reads a line field by field, so that one of an unexpected
// type reads as absent.
func oLooseLine(m map[string]json.RawMessage) oLine {
	var w oLine
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
	var u oUsage
	if m["usage"] != nil && json.Unmarshal(m["usage"], &u) == nil {
		w.Usage = &u
	}
	return w
}

// oValueText reads a tool result's value: a string, or JSON as it is.
func oValueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// oErrorText reads a tool result's error {type, message}, or a string.
func oErrorText(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	return oValueText(raw)
}

// End implements driver.Parser: a completion and exit status 0 is
// success; an error from source cli (or a completion with another exit
// status) is a *agentcli.ResultError; no terminal line at all is left to
// the runner.
func (p *oracleParser) End(exit driver.Exit) driver.Outcome {
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
	o.Message = strings.Join(oCompact(msgs), ": ")
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

// oCompact drops empty strings.
func oCompact(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// lineShape is the oracle's domain: what its wire structs decode without
// a type error, keys spelled exactly and given once.
var lineShape = func() *backendtest.Shape {
	s, n, c := backendtest.StrNull, backendtest.IntNull, backendtest.OrNull(backendtest.Count)
	return backendtest.Obj(map[string]*backendtest.Shape{
		"type": s, "subtype": s, "session_id": s, "model": s, "role": s, "text": s, "id": s,
		"toolName": s, "toolId": s, "parameters": backendtest.Any, "isError": backendtest.OrNull(backendtest.Bool),
		"value": backendtest.Any, "error": backendtest.Any, "source": s, "message": s, "finalText": s, "numTurns": n,
		"usage": backendtest.Obj(map[string]*backendtest.Shape{
			"input_tokens": c, "output_tokens": c, "cache_read_input_tokens": c, "cache_creation_input_tokens": c,
		}),
	})
}()

// inDomain reports whether the oracle's answer for line is the reference.
func inDomain(line []byte) bool {
	return len(bytes.TrimSpace(line)) == 0 || backendtest.WellTyped(line, lineShape)
}

// oracle checks the parser against the oracle, and in every way the kit
// hands it lines: on the transcripts of the real CLI and lines of every
// type with odd values (TestOracle), and on what the fuzzer makes of them
// (FuzzOracle).
func oracle(t testing.TB) *backendtest.Oracle {
	return &backendtest.Oracle{
		Spec: &spec, New: newParser, Old: func() driver.Parser { return newOracleParser() }, InDomain: inDomain,
		Seeds: append(backendtest.Files(t, filepath.Join("testdata", "*.jsonl")),
			backendtest.Seed{Stdout: `{"type":"tool_call","id":"c","toolName":"Execute","parameters":{"command":"ls"}}` + "\n" +
				`{"type":"tool_result","id":"c","isError":true,"error":{"type":"x","message":"denied"},"value":"v"}` + "\n" +
				`{"type":"tool_result","id":"d","isError":true,"error":{"type":"x"}}` + "\n" +
				`{"type":"tool_result","id":"e","isError":false,"value":{"a":[1,2]}}` + "\n" +
				`{"type":"tool_result","id":"f","isError":true,"error":"plain"}` + "\n" +
				`{"type":"tool_call","id":"g","toolId":"Read","parameters":[1]}`},
			backendtest.Seed{Stdout: `{"type":"message","role":"assistant","text":"a\nb \"q\" é","session_id":"s"}` + "\n" +
				`{"type":"error","source":"agent_loop","message":"429 status code (no body)"}` + "\n" +
				`{"type":"completion","finalText":null,"numTurns":3,"session_id":"s2"}`},
			backendtest.Seed{Stdout: `{"type":"completion","finalText":"x","usage":{"input_tokens":3,"output_tokens":4,"cache_read_input_tokens":5,"cache_creation_input_tokens":6}}`, Exit: 2},
			backendtest.Seed{Stdout: `{"type":"system","subtype":"other"}` + "\n" + `{"type":"message","role":"narrator"}` + "\n" + `[1]` + "\n" + `not json` + "\n" + `{"type":"future","text":"a\tb"}`},
			backendtest.Seed{Stdout: `{"type":"error","source":"cli","message":"Exec failed","session_id":"s"}`, Exit: 1},
		),
	}
}

func TestOracle(t *testing.T) { oracle(t).Test(t) }

func FuzzOracle(f *testing.F) { oracle(f).Fuzz(f) }
