package qwen

// The oracle: the encoding/json parser agentcli shipped before the
// single-pass one (parse.go), kept as it was (identifiers renamed) so
// that TestOracle and FuzzOracle can check the new parser against it.
//
// Differences by design, outside the oracle's domain (lineShape):
//   - A field of an unexpected type reads as absent, alone; the oracle
//     re-read such a line field by field, dropped a content block one of
//     whose fields had an unexpected type, and lost a whole usage object
//     for one count beyond int64 (now saturated).
//   - Parts of a line no event keeps are not validated: a line that is
//     not valid JSON there still yields its events. Tool inputs and the
//     result line, which events keep as JSON, are validated.
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

// line is the part of an output line the parser reads.
type oLine struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID string          `json:"parent_tool_use_id"`
	Model           string          `json:"model"`
	Version         string          `json:"qwen_code_version"`
	Message         json.RawMessage `json:"message"`
	Event           json.RawMessage `json:"event"`
	MCPServers      json.RawMessage `json:"mcp_servers"`

	// result
	IsError          bool            `json:"is_error"`
	Result           *string         `json:"result"`
	NumTurns         int             `json:"num_turns"`
	Usage            *oUsage         `json:"usage"`
	Error            json.RawMessage `json:"error"`
	StructuredOutput json.RawMessage `json:"structured_output"`
}

type oMessage struct {
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *oUsage         `json:"usage"`
}

type oBlock struct {
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

type oUsage struct {
	InputTokens     int64 `json:"input_tokens"`
	OutputTokens    int64 `json:"output_tokens"`
	CacheReadTokens int64 `json:"cache_read_input_tokens"`
	CacheWrite      int64 `json:"cache_creation_input_tokens"`
}

// agentcli's convention: InputTokens exclude cache reads. qwen's
// input_tokens are the prompt tokens, cache reads included (the Chat
// Completions prompt_tokens).
func (u *oUsage) usage() agentcli.Usage {
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

type oStreamEvent struct {
	Type  string `json:"type"`
	Delta struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
}

// result is what End needs of the result line.
type oResult struct {
	sessionID, subtype, text, errMsg string
	hasText, isError                 bool
	turns                            int
	usage                            *agentcli.Usage
	structured                       json.RawMessage
	raw                              json.RawMessage
}

// parser turns qwen's stream-json output into events.
type oracleParser struct {
	sessionID string
	model     string
	lastText  string
	result    *oResult
	evs       []agentcli.Event
	// mcpSeen holds the MCP servers reported as not started.
	mcpSeen map[string]bool
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
		// A field of an unexpected type: read what can be read.
		var loose map[string]json.RawMessage
		if json.Unmarshal(t, &loose) != nil {
			return append(p.evs, driver.Notice(Name, raw, err))
		}
		w = oLooseLine(loose)
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
		p.evs = append(p.evs, ev)
		// Each server that did not start ("disconnected", "failed"): a
		// notice, once per run.
		p.evs = append(p.evs, backendtest.OracleMCPNotices(w.MCPServers, base, &p.mcpSeen, "disconnected", "failed")...)
		return p.evs
	case "assistant":
		var m oMessage
		if json.Unmarshal(w.Message, &m) != nil {
			return unknown()
		}
		blocks := oDecodeBlocks(m.Content)
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
		var m oMessage
		if json.Unmarshal(w.Message, &m) != nil {
			return unknown()
		}
		for _, b := range oDecodeBlocks(m.Content) {
			if b.Type != "tool_result" {
				continue
			}
			ev := base
			ev.Kind = agentcli.EventToolResult
			ev.ToolResult = &agentcli.ToolResult{ID: b.ToolUseID, Output: oContentText(b.Content), IsError: b.IsError}
			p.evs = append(p.evs, ev)
		}
		if len(p.evs) == 0 {
			return unknown()
		}
		return p.evs
	case "stream_event":
		var e oStreamEvent
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
		r := &oResult{sessionID: w.SessionID, subtype: w.Subtype, isError: w.IsError, turns: w.NumTurns, raw: line}
		if w.Result != nil {
			r.text, r.hasText = *w.Result, true
		}
		r.errMsg = oErrorMessage(w.Error)
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

// oLooseLine reads the fields of a line one by one, so that one of an
// unexpected type reads as absent.
func oLooseLine(m map[string]json.RawMessage) oLine {
	var w oLine
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(m[k], &s)
		return s
	}
	w.Type, w.Subtype, w.SessionID, w.ParentToolUseID = str("type"), str("subtype"), str("session_id"), str("parent_tool_use_id")
	w.Model, w.Version = str("model"), str("qwen_code_version")
	w.Message, w.Event, w.Error, w.StructuredOutput = m["message"], m["event"], m["error"], m["structured_output"]
	w.MCPServers = m["mcp_servers"]
	_ = json.Unmarshal(m["is_error"], &w.IsError)
	_ = json.Unmarshal(m["num_turns"], &w.NumTurns)
	if r, ok := m["result"]; ok {
		var s string
		if json.Unmarshal(r, &s) == nil {
			w.Result = &s
		}
	}
	var u oUsage
	if json.Unmarshal(m["usage"], &u) == nil && m["usage"] != nil {
		w.Usage = &u
	}
	return w
}

// oDecodeBlocks reads a message's content: a string (one text block) or an
// array of blocks; elements that are not objects are left out.
func oDecodeBlocks(raw json.RawMessage) []oBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []oBlock{{Type: "text", Text: s}}
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil
	}
	out := make([]oBlock, 0, len(elems))
	for _, e := range elems {
		var b oBlock
		if json.Unmarshal(e, &b) == nil {
			out = append(out, b)
		}
	}
	return out
}

// oContentText reads a tool result's content as text: a string, or the
// text blocks of an array, joined.
func oContentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var sb strings.Builder
	for _, b := range oDecodeBlocks(raw) {
		if b.Type == "text" {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// oErrorMessage reads a result's error: {"message": ...} or a string.
func oErrorMessage(raw json.RawMessage) string {
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
func (p *oracleParser) End(exit driver.Exit) driver.Outcome {
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

// lineShape is the oracle's domain: what its wire structs decode without
// a type error, keys spelled exactly and given once.
var lineShape = func() *backendtest.Shape {
	B := backendtest.Obj
	s, n, c := backendtest.StrNull, backendtest.IntNull, backendtest.OrNull(backendtest.Count)
	b := backendtest.OrNull(backendtest.Bool)
	block := &backendtest.Shape{Kinds: backendtest.KObj | backendtest.KNull}
	content := &backendtest.Shape{Kinds: backendtest.KStr | backendtest.KNull | backendtest.KArr, Elem: block}
	block.Fields = map[string]*backendtest.Shape{
		"type": s, "text": s, "thinking": s, "id": s, "name": s, "input": backendtest.Any,
		"tool_use_id": s, "content": content, "is_error": b,
	}
	usage := backendtest.OrNull(B(map[string]*backendtest.Shape{
		"input_tokens": c, "output_tokens": c, "cache_read_input_tokens": c, "cache_creation_input_tokens": c,
	}))
	return B(map[string]*backendtest.Shape{
		"type": s, "subtype": s, "session_id": s, "parent_tool_use_id": s, "model": s, "qwen_code_version": s,
		"message": backendtest.OrNull(B(map[string]*backendtest.Shape{"model": s, "content": content, "usage": usage})),
		"event": backendtest.OrNull(B(map[string]*backendtest.Shape{
			"type":  s,
			"delta": backendtest.OrNull(B(map[string]*backendtest.Shape{"type": s, "text": s, "thinking": s})),
		})),
		"is_error": b, "result": s, "num_turns": n, "usage": usage,
		"error":             backendtest.OrNull(&backendtest.Shape{Kinds: backendtest.KStr | backendtest.KObj, Fields: map[string]*backendtest.Shape{"message": s}}),
		"structured_output": backendtest.Any,
		"mcp_servers": backendtest.OrNull(&backendtest.Shape{Kinds: backendtest.KArr | backendtest.KObj, Elem: backendtest.OrNull(B(map[string]*backendtest.Shape{
			"name": s, "status": s,
		}))}),
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
			backendtest.Seed{Stdout: `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"run_shell_command","input":{"command":"ls"}},null,5,{"type":"future"}]},"session_id":"s","parent_tool_use_id":"p"}` + "\n" +
				`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},null,"x",{"text":"b","type":"text"}],"is_error":true}]}}` + "\n" +
				`{"type":"user","message":{"content":"just text"}}` + "\n" +
				`{"type":"assistant","message":"not an object"}` + "\n" +
				`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u","name":"x","input":null}]}}`},
			backendtest.Seed{Stdout: `{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"a\nb"}}}` + "\n" +
				`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"hm"}}}` + "\n" +
				`{"type":"stream_event","event":{"type":"goal_state"}}` + "\n" +
				`{"type":"stream_event","event":null}` + "\n" + `{"type":"stream_event"}` + "\n" +
				`{"type":"stream_event","event":{"type":"message_start"}}` + "\n" +
				`{"type":"result","subtype":"success","is_error":false,"num_turns":2,"session_id":"s","structured_output":{"a":1},"usage":{"input_tokens":9,"output_tokens":2,"cache_read_input_tokens":4}}`},
			backendtest.Seed{Stdout: `{"type":"assistant","message":{"content":[{"type":"text","text":"[API Error: 429 Too Many]"}],"usage":{"output_tokens":0}}}` + "\n" +
				`{"type":"result","subtype":"error_during_execution","is_error":true,"error":{"message":"[API Error: 429 Too Many]"}}`, Exit: 1},
			backendtest.Seed{Stdout: `{"type":"result","subtype":"success","is_error":true,"result":"boom","error":"plain"}` + "\n" + `[1]` + "\n" + `not json` + "\n" + `{"type":"system","subtype":"other"}`},
			backendtest.Seed{Stdout: `{"type":"result","subtype":"success","is_error":false,"result":null,"structured_output":null}`, Exit: 3},
		),
	}
}

func TestOracle(t *testing.T) { oracle(t).Test(t) }

func FuzzOracle(f *testing.F) { oracle(f).Fuzz(f) }
