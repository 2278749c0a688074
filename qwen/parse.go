package qwen

// The parser of qwen's stream-json output (0.24.4), one-shot and live
// alike. It implements the plain driver.Parser seam (Line and End) with
// encoding/json; all of it is in this file so that it moves to another
// parser seam as a whole.
//
// Lines (Claude Code's SDK message shapes, which qwen copies):
//
//	{"type":"system","subtype":"init","session_id","model","qwen_code_version","tools",...}
//	{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text"}}}   (--include-partial-messages)
//	{"type":"assistant","message":{"model","content":[{"type":"text"|"thinking"|"tool_use",...}],"usage"}}
//	{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id","content","is_error"}]}}
//	{"type":"result","subtype":"success"|"error_during_execution"|...,"is_error","result","num_turns",
//	 "usage":{"input_tokens","output_tokens","cache_read_input_tokens","total_tokens"},"error":{"message"},
//	 "structured_output","permission_denials"}
//
// Other lines (stream_event goal_state, control messages the live
// session did not take, future types) become EventUnknown, and a line
// that is not a JSON object a notice. An API error arrives as an
// assistant message whose only text is "[API Error: STATUS ...]" (a
// notice here, not model text), then a result with is_error and
// error.message holding the same text, from which the HTTP status is read.

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

// line is the part of an output line the parser reads.
type line struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID string          `json:"parent_tool_use_id"`
	Model           string          `json:"model"`
	Version         string          `json:"qwen_code_version"`
	Message         json.RawMessage `json:"message"`
	Event           json.RawMessage `json:"event"`

	// result
	IsError          bool            `json:"is_error"`
	Result           *string         `json:"result"`
	NumTurns         int             `json:"num_turns"`
	Usage            *usage          `json:"usage"`
	Error            json.RawMessage `json:"error"`
	StructuredOutput json.RawMessage `json:"structured_output"`
}

type message struct {
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *usage          `json:"usage"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type usage struct {
	InputTokens     int64 `json:"input_tokens"`
	OutputTokens    int64 `json:"output_tokens"`
	CacheReadTokens int64 `json:"cache_read_input_tokens"`
	CacheWrite      int64 `json:"cache_creation_input_tokens"`
}

// agentcli's convention: InputTokens exclude cache reads. qwen's
// input_tokens are the prompt tokens, cache reads included (the Chat
// Completions prompt_tokens).
func (u *usage) usage() agentcli.Usage {
	in := u.InputTokens - u.CacheReadTokens
	if in < 0 {
		in = 0
	}
	return agentcli.Usage{
		InputTokens:      driver.Count(in),
		OutputTokens:     driver.Count(u.OutputTokens),
		CacheReadTokens:  driver.Count(u.CacheReadTokens),
		CacheWriteTokens: driver.Count(u.CacheWrite),
	}
}

type streamEvent struct {
	Type  string `json:"type"`
	Delta struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
}

// result is what End needs of the result line.
type result struct {
	sessionID, subtype, text, errMsg string
	hasText, isError                 bool
	turns                            int
	usage                            *agentcli.Usage
	structured                       json.RawMessage
	raw                              json.RawMessage
}

// parser turns qwen's stream-json output into events.
type parser struct {
	sessionID string
	model     string
	lastText  string
	result    *result
	evs       []agentcli.Event
}

func newParser() *parser { return &parser{} }

// apiError matches qwen's rendering of an API error, "[API Error: 400 Bad
// Request]" (the status is absent for errors without one).
var apiError = regexp.MustCompile(`^\[API Error: (?:(\d{3})\b)?`)

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
		// A field of an unexpected type: read what can be read.
		var loose map[string]json.RawMessage
		if json.Unmarshal(t, &loose) != nil {
			return append(p.evs, driver.Notice(Name, raw, err))
		}
		w = looseLine(loose)
	}
	if w.SessionID != "" {
		p.sessionID = w.SessionID
	}
	line := append([]byte(nil), raw...)
	base := agentcli.Event{SessionID: w.SessionID, Subagent: w.ParentToolUseID, Raw: line}
	unknown := func() []agentcli.Event {
		ev := base
		ev.Kind = agentcli.EventUnknown
		return append(p.evs, ev)
	}
	switch w.Type {
	case "system":
		if w.Subtype != "init" {
			return unknown()
		}
		p.model = w.Model
		ev := base
		ev.Kind, ev.Model, ev.Version = agentcli.EventInit, w.Model, w.Version
		return append(p.evs, ev)
	case "assistant":
		var m message
		if json.Unmarshal(w.Message, &m) != nil {
			return unknown()
		}
		blocks := decodeBlocks(m.Content)
		if len(blocks) == 1 && blocks[0].Type == "text" && apiError.MatchString(blocks[0].Text) && (m.Usage == nil || m.Usage.OutputTokens == 0) {
			// qwen's rendering of an API error; the result line carries
			// the error.
			ev := base
			ev.Kind, ev.Text = agentcli.EventNotice, blocks[0].Text
			return append(p.evs, ev)
		}
		for _, b := range blocks {
			ev := base
			switch b.Type {
			case "text":
				ev.Kind, ev.Text = agentcli.EventText, b.Text
				if w.ParentToolUseID == "" {
					p.lastText = b.Text
				}
			case "thinking":
				ev.Kind, ev.Text = agentcli.EventThinking, b.Thinking
			case "tool_use":
				input := b.Input
				if len(input) == 0 {
					input = json.RawMessage("{}")
				}
				ev.Kind, ev.Tool = agentcli.EventToolUse, tools.Use(b.ID, b.Name, input)
			default:
				ev.Kind = agentcli.EventUnknown
			}
			p.evs = append(p.evs, ev)
		}
		if len(blocks) == 0 {
			return unknown()
		}
		return p.evs
	case "user":
		var m message
		if json.Unmarshal(w.Message, &m) != nil {
			return unknown()
		}
		for _, b := range decodeBlocks(m.Content) {
			if b.Type != "tool_result" {
				continue
			}
			ev := base
			ev.Kind = agentcli.EventToolResult
			ev.ToolResult = &agentcli.ToolResult{ID: b.ToolUseID, Output: contentText(b.Content), IsError: b.IsError}
			p.evs = append(p.evs, ev)
		}
		if len(p.evs) == 0 {
			return unknown()
		}
		return p.evs
	case "stream_event":
		var e streamEvent
		if json.Unmarshal(w.Event, &e) != nil {
			return unknown()
		}
		if e.Type != "content_block_delta" {
			if e.Type == "goal_state" {
				return unknown()
			}
			return nil // message_start, content_block_start/stop, ...: nothing to normalize
		}
		ev := base
		switch e.Delta.Type {
		case "text_delta":
			ev.Kind, ev.Text = agentcli.EventTextDelta, e.Delta.Text
		case "thinking_delta":
			ev.Kind, ev.Text, ev.Delta = agentcli.EventThinking, e.Delta.Thinking, true
		default:
			return nil
		}
		return append(p.evs, ev)
	case "result":
		r := &result{sessionID: w.SessionID, subtype: w.Subtype, isError: w.IsError, turns: w.NumTurns, raw: line}
		if w.Result != nil {
			r.text, r.hasText = *w.Result, true
		}
		r.errMsg = errorMessage(w.Error)
		if len(w.StructuredOutput) > 0 && string(w.StructuredOutput) != "null" {
			r.structured = w.StructuredOutput
		}
		p.result = r
		if w.Usage != nil {
			u := w.Usage.usage()
			r.usage = &u
			ev := base
			ev.Kind, ev.Usage = agentcli.EventUsage, &u
			return append(p.evs, ev)
		}
		return nil
	}
	return unknown()
}

// looseLine reads the fields of a line one by one, so that one of an
// unexpected type reads as absent.
func looseLine(m map[string]json.RawMessage) line {
	var w line
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(m[k], &s)
		return s
	}
	w.Type, w.Subtype, w.SessionID, w.ParentToolUseID = str("type"), str("subtype"), str("session_id"), str("parent_tool_use_id")
	w.Model, w.Version = str("model"), str("qwen_code_version")
	w.Message, w.Event, w.Error, w.StructuredOutput = m["message"], m["event"], m["error"], m["structured_output"]
	_ = json.Unmarshal(m["is_error"], &w.IsError)
	_ = json.Unmarshal(m["num_turns"], &w.NumTurns)
	if r, ok := m["result"]; ok {
		var s string
		if json.Unmarshal(r, &s) == nil {
			w.Result = &s
		}
	}
	var u usage
	if json.Unmarshal(m["usage"], &u) == nil && m["usage"] != nil {
		w.Usage = &u
	}
	return w
}

// decodeBlocks reads a message's content: a string (one text block) or an
// array of blocks; elements that are not objects are left out.
func decodeBlocks(raw json.RawMessage) []block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil
	}
	out := make([]block, 0, len(elems))
	for _, e := range elems {
		var b block
		if json.Unmarshal(e, &b) == nil {
			out = append(out, b)
		}
	}
	return out
}

// contentText reads a tool result's content as text: a string, or the
// text blocks of an array, joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var sb strings.Builder
	for _, b := range decodeBlocks(raw) {
		if b.Type == "text" {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// errorMessage reads a result's error: {"message": ...} or a string.
func errorMessage(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// End implements driver.Parser. Success is exit status 0 and a result with
// is_error false; anything else is an error.
func (p *parser) End(exit driver.Exit) driver.Outcome {
	w := p.result
	if w == nil {
		return driver.Outcome{}
	}
	res := &agentcli.Result{
		SessionID: cmp.Or(w.sessionID, p.sessionID),
		IsError:   w.isError,
		Turns:     w.turns,
		Model:     p.model,
		Subtype:   w.subtype,
		Raw:       w.raw,
	}
	switch {
	case w.hasText:
		res.Text = w.text
	case !w.isError:
		res.Text = p.lastText
	}
	if w.usage != nil {
		res.Usage = *w.usage
	}
	if w.structured != nil && json.Valid(w.structured) {
		res.StructuredOutput = w.structured
	}
	if !w.isError && exit.Code == 0 {
		return driver.Outcome{Result: res}
	}
	o := driver.Outcome{Result: res, Failed: true, Message: w.errMsg}
	if w.subtype != "success" {
		o.Subtype = w.subtype
	}
	if m := apiError.FindStringSubmatch(w.errMsg); m != nil && m[1] != "" {
		o.APIStatus, _ = strconv.Atoi(m[1])
	}
	switch {
	case o.Message == "" && w.isError && w.hasText:
		o.Message = w.text
	case o.Message == "" && !w.isError:
		o.Message = "CLI exited with a non-zero status after a successful result"
	}
	return o
}
