package qwen

// The parser of qwen's stream-json output (0.24.4), one-shot and live
// alike, in the kit's one parser shape (driver.Lines): each line is read
// once, in a single pass (driver/jsonscan), into wireLine; Apply turns it
// into events; End decides the outcome. A field of an unexpected type
// reads as absent. Strings share the line's memory where the run lets
// them.
//
// Lines (Claude Code's SDK message shapes, which qwen copies):
//
//	{"type":"system","subtype":"init","session_id","model","qwen_code_version","tools",
//	 "mcp_servers":[{"name","status"}],...}   (a server that did not start: a notice, mcpnotice.go)
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
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
	"github.com/agentcli/agentcli/driver/streamjson"
)

// wireLine is one output line: the fields the types above use.
type wireLine struct {
	Type, Subtype, SessionID string
	// ParentToolUseID is "" when absent or null.
	ParentToolUseID string
	Model, Version  string // system/init
	// Content is the message's blocks; MsgOutputTokens its usage's
	// output_tokens.
	Content         []wireBlock
	MsgOutputTokens int64
	Event           streamjson.StreamEvent
	HasEvent        bool // an object or null

	// result (Res.SessionID, Res.Subtype, Res.HasError and Res.Raw are
	// set by Apply); Res.Error is error.message, or error as a string
	Res streamjson.Result

	// system/init: mcp_servers (mcpnotice.go)
	MCPServers []driver.MCPServerStatus
}

type wireBlock = streamjson.Block

// toolBlocks makes the events of an assistant message's blocks: a tool
// use without input has the input {}.
var toolBlocks = streamjson.Blocks{Tools: tools, EmptyInput: json.RawMessage("{}")}

// parser is the state of one run's parsing (see driver.LineParser).
type parser struct {
	sessionID string
	model     string
	lastText  string
	result    *streamjson.Result // the result line, for End
	evs       []agentcli.Event
	// mcp reports the MCP servers that did not start (mcpnotice.go):
	// the session's, shared by its turns, in a live session.
	mcp *driver.MCPStartNotices
}

var _ driver.LineParser[wireLine] = (*parser)(nil)

// newParser returns the driver.Parser of one run.
func newParser() driver.Parser { return driver.Lines(Name, &parser{}) }

// apiError matches qwen's rendering of an API error, "[API Error: 400 Bad
// Request]" (the status is absent for errors without one).
var apiError = regexp.MustCompile(`^\[API Error: (?:(\d{3})\b)?`)

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
		case "parent_tool_use_id":
			w.ParentToolUseID = d.Str()
		case "model":
			w.Model = d.Str()
		case "qwen_code_version":
			w.Version = d.Str()
		case "mcp_servers":
			w.MCPServers = driver.DecodeMCPServers(d, w.MCPServers)
		case "message":
			w.Content, w.MsgOutputTokens = w.Content[:0], 0
			for k := range d.Object() {
				switch string(k) {
				case "content":
					w.Content = streamjson.DecodeContent(d, w.Content[:0], &bad)
				case "usage":
					w.MsgOutputTokens = 0
					for k := range d.Object() {
						if string(k) == "output_tokens" {
							w.MsgOutputTokens = d.Int()
						}
					}
				}
			}
		case "event":
			w.HasEvent = d.Kind() == jsonscan.Object || d.Kind() == jsonscan.Null
			w.Event.Decode(d)
		case "is_error":
			w.Res.IsError = d.Bool()
		case "result":
			w.Res.Text, w.Res.HasText = d.UnsafeStr()
		case "num_turns":
			w.Res.Turns = int(d.Int())
		case "usage":
			w.Res.HasUsage = d.Kind() == jsonscan.Object
			w.Res.Usage = decodeUsage(d)
		case "error":
			w.Res.Error = driver.ErrorMessage(d)
		case "structured_output":
			w.Res.Structured = driver.JSONValue(d)
		}
	}
	return driver.CheckJSON(d, bad, w.Type == "result")
}

// decodeUsage reads a result's usage in agentcli's convention:
// InputTokens exclude cache reads. qwen's input_tokens are the prompt
// tokens, cache reads included (the Chat Completions prompt_tokens).
// Counts are clamped to be non-negative.
func decodeUsage(d *jsonscan.Decoder) agentcli.Usage {
	u := streamjson.DecodeUsage(d)
	u.InputTokens = driver.SubCount(u.InputTokens, u.CacheReadTokens)
	return u
}

// Apply implements driver.LineParser.
func (p *parser) Apply(w *wireLine, line *driver.Line) []agentcli.Event {
	p.evs = p.evs[:0]
	if w.SessionID != "" {
		p.sessionID = w.SessionID
	}
	base := agentcli.Event{SessionID: w.SessionID, Subagent: w.ParentToolUseID, Raw: line.Raw()}
	known := true
	switch w.Type {
	case "system":
		known = w.Subtype == "init"
		if known {
			p.model = w.Model
			ev := base
			ev.Kind, ev.Model, ev.Version = agentcli.EventInit, w.Model, w.Version
			p.evs = append(p.evs, ev)
			p.evs = streamjson.MCPNotices(p.evs, &p.mcp, w.MCPServers, mcpFailed, base)
		}
	case "assistant":
		known = p.assistant(w, base, line)
	case "user":
		known = p.user(w, base)
	case "stream_event":
		known = w.HasEvent && w.Event.Type != "goal_state"
		if ev, ok := w.Event.DeltaEvent(base); ok {
			p.evs = append(p.evs, ev)
		}
	case "result":
		p.resultLine(w, base)
	default:
		known = false
	}
	if !known {
		ev := base
		ev.Kind, ev.Raw = agentcli.EventUnknown, line.UnknownRaw()
		p.evs = append(p.evs, ev)
	}
	return p.evs
}

// assistant appends the events of an assistant message, one per block;
// it reports false for a message without blocks.
func (p *parser) assistant(w *wireLine, base agentcli.Event, line *driver.Line) bool {
	blocks := w.Content
	if len(blocks) == 1 && blocks[0].Type == "text" && apiError.MatchString(blocks[0].Text) && w.MsgOutputTokens == 0 {
		// qwen's rendering of an API error; the result line carries the
		// error.
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, blocks[0].Text
		p.evs = append(p.evs, ev)
		return true
	}
	var last string
	var hasText bool
	p.evs, last, hasText = toolBlocks.Events(p.evs, blocks, base, line)
	if hasText && w.ParentToolUseID == "" {
		p.lastText = last
	}
	return len(blocks) > 0
}

// user appends the tool results of a user message; it reports false when
// there are none.
func (p *parser) user(w *wireLine, base agentcli.Event) bool {
	n := len(p.evs)
	p.evs = streamjson.ToolResults(p.evs, w.Content, base)
	return len(p.evs) > n
}

// resultLine keeps the result line for End, and appends its usage.
func (p *parser) resultLine(w *wireLine, base agentcli.Event) {
	r := w.Res
	r.SessionID, r.Subtype, r.HasError, r.Raw = w.SessionID, w.Subtype, r.Error != "", base.Raw
	p.result = &r
	if r.HasUsage {
		u := r.Usage
		ev := base
		ev.Kind, ev.Usage = agentcli.EventUsage, &u
		p.evs = append(p.evs, ev)
	}
}

// End implements driver.LineParser. Success is exit status 0 and a result with
// is_error false; anything else is an error, whose HTTP status is read
// from the error's message.
func (p *parser) End(exit driver.Exit) driver.Outcome {
	w := p.result
	if w == nil {
		return driver.Outcome{}
	}
	o := w.Outcome(exit, p.sessionID, p.model, p.lastText)
	if m := apiError.FindStringSubmatch(w.Error); o.Failed && m != nil && m[1] != "" {
		o.APIStatus, _ = strconv.Atoi(m[1])
	}
	return o
}
