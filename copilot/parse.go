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
//	model.call_failure         nothing; its errorMessage (the server's answer) joins the outcome's message
//	agentcli.session           the session id, which agentcli chose (--session-id) or resumes,
//	                           handed to the parser first (see prepare): copilot prints it only in
//	                           its last line. It is announced by an EventInit (with the requested
//	                           model) before the events of copilot's first line.
//	agentcli.usage_file        EventUsage: the usage file copilot wrote (see prepare), summed over models
//	result                     the end of the run
//
// Types copilot prints that carry nothing to normalize (the skills and MCP
// servers loaded, the user message, turn starts and ends, model call
// bookkeeping, shell output already in the tool result, background task
// changes) yield nothing; any other type is an EventUnknown, and a line
// that is not a JSON object an EventNotice. Events of a sub-agent (data
// with parentToolCallId) carry it as Event.Subagent.
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
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// wireLine is the envelope of one output line.
type wireLine struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
	// The result line's fields.
	SessionID string `json:"sessionId"`
	ExitCode  *int   `json:"exitCode"`
}

// wireData holds the fields of data that the types above use.
type wireData struct {
	DeltaContent     string `json:"deltaContent"`
	Content          string `json:"content"`
	Model            string `json:"model"`
	ParentToolCallID string `json:"parentToolCallId"`
	ToolRequests     []struct {
		ToolCallID string          `json:"toolCallId"`
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
	} `json:"toolRequests"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Arguments  json.RawMessage `json:"arguments"`
	Success    *bool           `json:"success"`
	Result     *struct {
		Content string `json:"content"`
	} `json:"result"`
	Error          json.RawMessage `json:"error"`
	ShellExecution *struct {
		ExitCode *int `json:"exitCode"`
	} `json:"shellExecution"`
	Reason       string `json:"reason"`
	ErrorType    string `json:"errorType"`
	Message      string `json:"message"`
	StatusCode   int    `json:"statusCode"`
	ErrorMessage string `json:"errorMessage"`
}

// ignored are the types copilot prints that carry nothing to normalize.
var ignored = map[string]bool{
	"session.skills_loaded": true, "session.mcp_servers_loaded": true, "session.mcp_server_status_changed": true,
	"session.mcp_server_tools_loaded": true, "session.tools_updated": true, "session.background_tasks_changed": true,
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

// parser reads one run's output. It implements driver.Parser.
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
	result    *wireLine
	resultRaw json.RawMessage
}

func newParser(model string, resumed bool) *parser {
	return &parser{reqModel: model, resumed: resumed, announced: map[string]bool{}}
}

// Line implements driver.Parser.
func (p *parser) Line(line []byte) []agentcli.Event {
	p.evs = p.evs[:0]
	var w wireLine
	if evs := driver.DecodeObject(Name, line, &w); evs != nil {
		return evs
	}
	raw := json.RawMessage(line)
	var d wireData
	if len(w.Data) > 0 && !bytes.Equal(w.Data, []byte("null")) {
		if err := json.Unmarshal(w.Data, &d); err != nil {
			return []agentcli.Event{driver.Notice(Name, line, err)}
		}
	}
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
		if d.DeltaContent != "" {
			ev := base
			ev.Kind, ev.Text = agentcli.EventTextDelta, d.DeltaContent
			add(ev)
		}
	case "assistant.message":
		if d.Content != "" {
			ev := base
			ev.Kind, ev.Text = agentcli.EventText, d.Content
			add(ev)
			if d.ParentToolCallID == "" {
				p.text = d.Content
			}
		}
		if d.Model != "" && d.ParentToolCallID == "" {
			p.model = d.Model
		}
		for _, tr := range d.ToolRequests {
			p.toolUse(base, tr.ToolCallID, tr.Name, tr.Arguments)
		}
	case "assistant.reasoning_delta":
		if d.DeltaContent != "" {
			ev := base
			ev.Kind, ev.Text, ev.Delta = agentcli.EventThinking, d.DeltaContent, true
			add(ev)
		}
	case "assistant.reasoning":
		if d.Content != "" {
			ev := base
			ev.Kind, ev.Text = agentcli.EventThinking, d.Content
			add(ev)
		}
	case "tool.execution_start":
		p.toolUse(base, d.ToolCallID, d.ToolName, d.Arguments)
	case "tool.execution_complete":
		tr := &agentcli.ToolResult{ID: d.ToolCallID, IsError: d.Success != nil && !*d.Success}
		if d.Result != nil {
			tr.Output = d.Result.Content
		}
		if msg := errorMessage(d.Error); msg != "" && (tr.Output == "" || tr.IsError) {
			tr.Output = msg
		}
		if d.ShellExecution != nil && d.ShellExecution.ExitCode != nil {
			c := *d.ShellExecution.ExitCode
			tr.ExitCode = &c
		}
		ev := base
		ev.Kind, ev.ToolResult = agentcli.EventToolResult, tr
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
	case sessionType:
		// Announced with copilot's first line (see init).
		p.session = w.SessionID
	case usageType:
		u, ok := fileUsage(w.Data)
		if !ok {
			ev := base
			ev.Kind = agentcli.EventUnknown
			add(ev)
			break
		}
		u.Cumulative = p.resumed
		p.usage, p.hasUsage = u, true
		ev := base
		ev.Kind, ev.Usage = agentcli.EventUsage, &u
		add(ev)
	case "result":
		// The end of the run; the runner's EventResult follows the exit.
		r := w
		p.result, p.resultRaw = &r, raw
	default:
		if !ignored[w.Type] {
			ev := base
			ev.Kind = agentcli.EventUnknown
			add(ev)
		}
	}
	return p.evs
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

// errorMessage returns the message of a tool's error ({"message", "code"},
// or a string).
func errorMessage(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
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

// End implements driver.Parser.
func (p *parser) End(exit driver.Exit) driver.Outcome {
	if p.result == nil && p.serr == nil {
		return driver.Outcome{} // the runner reports the exit (stderr says why)
	}
	res := &agentcli.Result{Text: p.text, Model: p.model, Turns: p.turns, Raw: p.resultRaw}
	res.SessionID = p.session
	if p.result != nil && p.result.SessionID != "" {
		res.SessionID = p.result.SessionID
	}
	if p.hasUsage {
		res.Usage = p.usage
	}
	code := exit.Code
	if p.result != nil && p.result.ExitCode != nil && *p.result.ExitCode != 0 {
		code = *p.result.ExitCode
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
