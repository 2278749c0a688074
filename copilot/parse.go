package copilot

// The parser of `copilot --output-format=json` (copilot 1.0.102): one JSON
// object a line, {"type", "data", "id", "timestamp", "parentId",
// "ephemeral"}, and a last line {"type":"result", "sessionId", "exitCode",
// "usage"}. What each type becomes:
//
//	assistant.message_delta    EventTextDelta (data.deltaContent)
//	assistant.message          EventText (data.content, when not empty), then an
//	                           EventToolUse per data.toolRequests[] {toolCallId, name, arguments}
//	assistant.reasoning_delta  EventThinking, a delta (data.deltaContent)
//	assistant.reasoning        EventThinking, the block (data.content)
//	tool.execution_start       EventToolUse, for a call no message announced
//	tool.execution_complete    EventToolResult: data.result.content, or data.error.message
//	                           with IsError (success false); data.shellExecution.exitCode
//	assistant.turn_retry       EventRetry (data.reason)
//	session.error              EventNotice; it decides the outcome (below)
//	session.warning            EventNotice
//	session.mcp_server_status_changed, session.mcp_servers_loaded
//	                           an EventNotice for a server whose status is "failed", once
//	                           per server (mcpnotice.go)
//	model.call_failure         nothing; its errorMessage (the server's answer) joins the outcome's message
//	agentcli.session           the session id, which agentcli chose (--session-id) or resumes,
//	                           handed to the parser first (see prepare): copilot prints it only in
//	                           its last line. It is announced by an EventInit (with the requested
//	                           model) before the events of copilot's first line.
//	agentcli.usage_file        EventUsage: the usage file copilot wrote (see prepare), summed over models
//	result                     the end of the run
//
// Types copilot prints that carry nothing to normalize (the skills and MCP
// tools loaded, the user message, turn starts and ends, model call
// bookkeeping, shell output already in the tool result, background task
// changes) yield nothing; any other type is an EventUnknown, and a line
// that is not a JSON object an EventNotice. Events of a sub-agent (data
// with parentToolCallId) carry it as Event.Subagent.
//
// The parser is in the kit's one shape (driver.Lines): each line is read
// once, in a single pass (driver/jsonscan), into wireLine; Apply turns it
// into events; End decides the outcome. A field of data of an unexpected
// type reads as absent; data that is not an object (or null) makes the
// line a notice. Strings share the line's memory where the run lets them.
//
// The outcome: a run is a success when copilot printed its result line
// with exitCode 0, reported no session.error and exited 0. Result.Text is
// the content of the main thread's last assistant message that had any,
// Result.Model that message's model, Result.Turns the number of model
// turns (assistant.turn_start), Result.Usage the usage file's (summed over
// the session: a resumed run's is marked Cumulative). Otherwise a
// session.error or a non-zero exitCode is an *agentcli.ResultError whose
// Subtype is the errorType, APIStatus the statusCode and Message the
// error's message followed by the failed model call's errorMessage. No
// result line at all leaves the outcome to the runner (an ExitError whose
// stderr says why: an unknown session, a bad argument).

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// wireLine is one output line: the envelope, and the fields of data that
// the types above use.
type wireLine struct {
	Type string
	// The result line's fields.
	SessionID   string
	ExitCode    int
	HasExitCode bool
	// DataRaw is data as printed, for the usage file's line only: a view
	// valid until Apply returns.
	DataRaw []byte
	Data    wireData
}

// wireData holds the fields of data that the types above use.
type wireData struct {
	DeltaContent, Content, Model, ParentToolCallID string
	ToolRequests                                   []wireToolRequest
	ToolCallID, ToolName                           string
	Arguments                                      json.RawMessage
	Success, HasSuccess                            bool
	ResultContent                                  string
	Error                                          string // a tool's error message
	ShellExitCode                                  int
	HasShellExitCode                               bool
	Reason, ErrorType, Message                     string
	StatusCode                                     int
	ErrorMessage                                   string

	// session.mcp_server_status_changed and session.mcp_servers_loaded
	// (mcpnotice.go)
	ServerName, Status string
	Servers            []driver.MCPServerStatus
}

type wireToolRequest struct {
	ToolCallID, Name string
	Arguments        json.RawMessage
}

// ignored are the types copilot prints that carry nothing to normalize.
var ignored = map[string]bool{
	"session.skills_loaded": true, "session.mcp_server_tools_loaded": true, "session.tools_updated": true, "session.background_tasks_changed": true,
	"session.info": true, "session.mode_notice_delivered": true, "session.title_changed": true,
	"user.message": true, "assistant.turn_start": true, "assistant.turn_end": true, "assistant.idle": true,
	"assistant.message_start": true, "assistant.tool_call_delta": true, "model.call_start": true,
	"model.call_finished": true, "model.call_final_result": true, "tool.shell_output": true,
	"tool.execution_partial_result": true, "tool.execution_progress": true,
}

// sessionError is what a session.error said.
type sessionError struct {
	typ, message string
	status       int
}

// parser is the state of one run's parsing (see driver.LineParser).
type parser struct {
	// resumed: the run resumed a session (its usage covers the session).
	resumed bool
	// reqModel is the model the run asked for; session the id the run
	// was started with.
	reqModel, session string
	// started: a line of copilot's was read.
	started bool
	evs     []agentcli.Event
	// announced holds the ids of the tool calls an EventToolUse named.
	announced map[string]bool
	text      string // the main thread's last assistant text
	model     string
	turns     int
	retries   int
	usage     agentcli.Usage
	hasUsage  bool
	failure   string // the last failed model call's errorMessage
	serr      *sessionError
	result    bool // the result line was read
	// resultSession and resultCode are the result line's sessionId and
	// exitCode (0 when absent).
	resultSession string
	resultCode    int
	resultRaw     json.RawMessage
	// mcp reports the MCP servers that did not start (mcpnotice.go).
	mcp driver.MCPStartNotices
}

var _ driver.LineParser[wireLine] = (*parser)(nil)

// newParser returns the driver.Parser of one run that asked for model
// and resumed a session or not.
func newParser(model string, resumed bool) driver.Parser {
	return driver.Lines(Name, newState(model, resumed))
}

func newState(model string, resumed bool) *parser {
	return &parser{reqModel: model, resumed: resumed, announced: map[string]bool{}}
}

// errData: data is neither an object nor null.
var errData = errors.New("data is not an object")

// str reads a string that may share the line's memory ("" for any other
// value).
func str(d *jsonscan.Decoder) string {
	s, _ := d.UnsafeStr()
	return s
}

// Decode implements driver.Wire.
func (w *wireLine) Decode(d *jsonscan.Decoder) error {
	bad := false
	var start, end int
	for k := range d.Object() {
		switch string(k) {
		case "type":
			w.Type = d.Str()
		case "sessionId":
			w.SessionID = d.Str()
		case "exitCode":
			var c int64
			c, w.HasExitCode = d.IntOK()
			w.ExitCode = int(c)
		case "data":
			w.Data = wireData{}
			switch d.Kind() {
			case jsonscan.Object:
			case jsonscan.Null:
				d.Null()
				continue
			default:
				d.Skip()
				return errData
			}
			start = d.Offset()
			w.Data.decode(d, &bad)
			end = d.Offset()
		}
	}
	if w.Type == usageType && end > start {
		w.DataRaw = d.Span(start, end)
	}
	return driver.CheckJSON(d, bad, w.Type == "result")
}

// decode reads data.
func (x *wireData) decode(d *jsonscan.Decoder, bad *bool) {
	for k := range d.Object() {
		switch string(k) {
		case "deltaContent":
			x.DeltaContent = str(d)
		case "content":
			x.Content = str(d)
		case "model":
			x.Model = d.Str()
		case "parentToolCallId":
			x.ParentToolCallID = d.Str()
		case "toolRequests":
			x.ToolRequests = x.ToolRequests[:0]
			for range d.Array() {
				var tr wireToolRequest
				for k := range d.Object() {
					switch string(k) {
					case "toolCallId":
						tr.ToolCallID = d.Str()
					case "name":
						tr.Name = d.Str()
					case "arguments":
						tr.Arguments = driver.RawJSON(d, bad)
					}
				}
				x.ToolRequests = append(x.ToolRequests, tr)
			}
		case "toolCallId":
			x.ToolCallID = d.Str()
		case "toolName":
			x.ToolName = d.Str()
		case "arguments":
			x.Arguments = driver.RawJSON(d, bad)
		case "success":
			x.Success, x.HasSuccess = d.BoolOK()
		case "result":
			x.ResultContent = ""
			for k := range d.Object() {
				if string(k) == "content" {
					x.ResultContent = str(d)
				}
			}
		case "error":
			x.Error = driver.ErrorMessage(d)
		case "shellExecution":
			x.HasShellExitCode = false
			for k := range d.Object() {
				if string(k) == "exitCode" {
					var c int64
					c, x.HasShellExitCode = d.IntOK()
					x.ShellExitCode = int(c)
				}
			}
		case "reason":
			x.Reason = str(d)
		case "errorType":
			x.ErrorType = d.Str()
		case "message":
			x.Message = str(d)
		case "statusCode":
			x.StatusCode = int(d.Int())
		case "errorMessage":
			x.ErrorMessage = str(d)
		case "serverName":
			x.ServerName = str(d)
		case "status":
			x.Status = str(d)
		case "servers":
			x.Servers = driver.DecodeMCPServers(d, x.Servers)
		}
	}
}

// Apply implements driver.LineParser.
func (p *parser) Apply(w *wireLine, line *driver.Line) []agentcli.Event {
	p.evs = p.evs[:0]
	raw := line.Raw()
	d := &w.Data
	base := agentcli.Event{Subagent: d.ParentToolCallID, Raw: raw}
	add := func(ev agentcli.Event) { p.evs = append(p.evs, ev) }
	if !p.started && w.Type != sessionType {
		// copilot's first line: the run has begun, in the session the
		// run was started with.
		p.started = true
		if p.session != "" {
			add(agentcli.Event{Kind: agentcli.EventInit, SessionID: p.session, Model: p.reqModel, Raw: raw})
		}
	}
	switch w.Type {
	case "assistant.message_delta":
		p.textEvent(base, agentcli.EventTextDelta, d.DeltaContent, false)
	case "assistant.message":
		p.message(base, d)
	case "assistant.reasoning_delta":
		p.textEvent(base, agentcli.EventThinking, d.DeltaContent, true)
	case "assistant.reasoning":
		p.textEvent(base, agentcli.EventThinking, d.Content, false)
	case "tool.execution_start":
		p.toolUse(base, d.ToolCallID, d.ToolName, d.Arguments)
	case "tool.execution_complete":
		ev := base
		ev.Kind, ev.ToolResult = agentcli.EventToolResult, toolResult(d)
		add(ev)
	case "assistant.turn_start":
		if d.ParentToolCallID == "" {
			p.turns++
		}
	case "assistant.turn_retry":
		p.retries++
		ev := base
		ev.Kind, ev.Retry = agentcli.EventRetry, &agentcli.Retry{Attempt: p.retries, Message: d.Reason}
		add(ev)
	case "model.call_failure":
		p.failure = d.ErrorMessage
	case "session.error":
		if d.ParentToolCallID == "" {
			p.serr = &sessionError{typ: d.ErrorType, message: d.Message, status: d.StatusCode}
		}
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, d.Message
		add(ev)
	case "session.warning":
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, d.Message
		add(ev)
	case "session.mcp_server_status_changed":
		p.mcpStatus(base, d.ServerName, d.Status, d.Error)
	case "session.mcp_servers_loaded":
		for _, s := range d.Servers {
			p.mcpStatus(base, s.Name, s.Status, s.Error)
		}
	case sessionType:
		// Announced with copilot's first line (see init).
		p.session = w.SessionID
	case usageType:
		add(p.usageEvent(base, w, line))
	case "result":
		p.resultLine(w, raw)
	default:
		if !ignored[w.Type] {
			ev := base
			ev.Kind, ev.Raw = agentcli.EventUnknown, line.UnknownRaw()
			add(ev)
		}
	}
	return p.evs
}

// message applies an assistant.message line: its text, and the tool
// calls it requests.
func (p *parser) message(base agentcli.Event, d *wireData) {
	p.textEvent(base, agentcli.EventText, d.Content, false)
	if d.Content != "" && d.ParentToolCallID == "" {
		p.text = d.Content
	}
	if d.Model != "" && d.ParentToolCallID == "" {
		p.model = d.Model
	}
	for _, tr := range d.ToolRequests {
		p.toolUse(base, tr.ToolCallID, tr.Name, tr.Arguments)
	}
}

// resultLine applies the result line, the end of the run; the runner's
// EventResult follows the exit.
func (p *parser) resultLine(w *wireLine, raw json.RawMessage) {
	p.result, p.resultSession, p.resultRaw = true, w.SessionID, raw
	p.resultCode = 0
	if w.HasExitCode {
		p.resultCode = w.ExitCode
	}
}

// toolResult is the result of a tool.execution_complete line.
func toolResult(d *wireData) *agentcli.ToolResult {
	tr := &agentcli.ToolResult{ID: d.ToolCallID, IsError: d.HasSuccess && !d.Success, Output: d.ResultContent}
	if d.Error != "" && (tr.Output == "" || tr.IsError) {
		tr.Output = d.Error
	}
	if d.HasShellExitCode {
		c := d.ShellExitCode
		tr.ExitCode = &c
	}
	return tr
}

// usageEvent is the event of the usage line w: its usage (remembered for
// the result), or the line kept as unknown when it cannot be read.
func (p *parser) usageEvent(base agentcli.Event, w *wireLine, line *driver.Line) agentcli.Event {
	u, ok := fileUsage(w.DataRaw)
	if !ok {
		base.Kind, base.Raw = agentcli.EventUnknown, line.UnknownRaw()
		return base
	}
	u.Cumulative = p.resumed
	p.usage, p.hasUsage = u, true
	base.Kind, base.Usage = agentcli.EventUsage, &u
	return base
}

// textEvent appends an event of kind with text (a delta or not), when
// there is text.
func (p *parser) textEvent(base agentcli.Event, kind agentcli.EventKind, text string, delta bool) {
	if text != "" {
		ev := base
		ev.Kind, ev.Text, ev.Delta = kind, text, delta
		p.evs = append(p.evs, ev)
	}
}

// toolUse announces a tool call once.
func (p *parser) toolUse(base agentcli.Event, id, name string, args json.RawMessage) {
	if id == "" || p.announced[id] {
		return
	}
	p.announced[id] = true
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	ev := base
	ev.Kind, ev.Tool = agentcli.EventToolUse, tools.Use(id, name, args)
	p.evs = append(p.evs, ev)
}

// fileUsage sums the token counts of copilot's usage file over its models
// (modelMetrics.MODEL.usage), in agentcli's convention: InputTokens
// without the cached input.
func fileUsage(raw json.RawMessage) (agentcli.Usage, bool) {
	var f struct {
		ModelMetrics map[string]struct {
			Usage struct {
				InputTokens      int64 `json:"inputTokens"`
				OutputTokens     int64 `json:"outputTokens"`
				CacheReadTokens  int64 `json:"cacheReadTokens"`
				CacheWriteTokens int64 `json:"cacheWriteTokens"`
				ReasoningTokens  int64 `json:"reasoningTokens"`
			} `json:"usage"`
		} `json:"modelMetrics"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || f.ModelMetrics == nil {
		return agentcli.Usage{}, false
	}
	var u agentcli.Usage
	for _, m := range f.ModelMetrics {
		x := m.Usage
		u = u.Add(agentcli.Usage{
			InputTokens:      driver.SubCount(driver.SubCount(driver.Count(x.InputTokens), driver.Count(x.CacheReadTokens)), driver.Count(x.CacheWriteTokens)),
			OutputTokens:     driver.Count(x.OutputTokens),
			CacheReadTokens:  driver.Count(x.CacheReadTokens),
			CacheWriteTokens: driver.Count(x.CacheWriteTokens),
			ReasoningTokens:  driver.Count(x.ReasoningTokens),
		})
	}
	return driver.ClampUsage(u), true
}

// End implements driver.LineParser.
func (p *parser) End(exit driver.Exit) driver.Outcome {
	if !p.result && p.serr == nil {
		return driver.Outcome{} // the runner reports the exit (stderr says why)
	}
	res := &agentcli.Result{Text: p.text, Model: p.model, Turns: p.turns, Raw: p.resultRaw}
	res.SessionID = p.session
	if p.resultSession != "" {
		res.SessionID = p.resultSession
	}
	if p.hasUsage {
		res.Usage = p.usage
	}
	code := exit.Code
	if p.resultCode != 0 {
		code = p.resultCode
	}
	if p.serr == nil && code == 0 && exit.Code == 0 {
		return driver.Outcome{Result: res}
	}
	res.IsError = true
	re := driver.Outcome{Result: res, Failed: true}
	switch {
	case p.serr != nil:
		re.Subtype, re.APIStatus, re.Message = p.serr.typ, p.serr.status, p.serr.message
		if f := strings.TrimSpace(p.failure); f != "" && !strings.Contains(re.Message, f) {
			re.Message = strings.TrimSpace(re.Message + ": " + f)
		}
		switch p.serr.typ {
		case "authentication":
			re.Kind = agentcli.ErrAuth
		case "rate_limit":
			re.Kind = agentcli.ErrRateLimited
		}
		if re.APIStatus != 0 {
			re.TerminalReason = "api_error"
		}
	default:
		re.Message = "copilot exited with a non-zero status after its result"
		if strings.TrimSpace(exit.Stderr) != "" {
			re.Message = exit.Stderr
		}
	}
	res.Subtype, res.TerminalReason = re.Subtype, re.TerminalReason
	return re
}
