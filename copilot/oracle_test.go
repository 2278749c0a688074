package copilot

// The oracle: the encoding/json parser agentcli shipped before the
// single-pass one (parse.go), kept as it was (identifiers renamed) so
// that TestOracle and FuzzOracle can check the new parser against it.
//
// Differences by design, outside the oracle's domain (lineShape):
//   - A field of data of an unexpected type reads as absent; the oracle
//     made the whole line a notice. (data itself neither an object nor
//     null is still a notice.)
//   - A blank line yields nothing; the oracle made it a notice.
//   - Parts of a line no event keeps are not validated: a line that is
//     not valid JSON there still yields its events. Tool arguments and the
//     result line, which events keep as JSON, are validated.
//   - Keys match exactly; the oracle matched them case-insensitively. A
//     repeated key: the last wins whole.
//   - Notices carry jsonscan's syntax errors, not encoding/json's.

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// wireLine is the envelope of one output line.
type oWireLine struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
	// The result line's fields.
	SessionID string `json:"sessionId"`
	ExitCode  *int   `json:"exitCode"`
}

// wireData holds the fields of data that the types above use.
type oWireData struct {
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
	ServerName   string `json:"serverName"`
	Status       string `json:"status"`
	Servers      []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"servers"`
}

// sessionError is what a session.error said.
type oSessionError struct {
	typ, message string
	status       int
}

// parser reads one run's output. It implements driver.Parser.
type oracleParser struct {
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
	serr      *oSessionError
	result    *oWireLine
	resultRaw json.RawMessage
	// mcpSeen holds the MCP servers reported as not started.
	mcpSeen map[string]bool
}

// mcpFailed adds a notice for a server that failed, once per run.
func (p *oracleParser) mcpFailed(base agentcli.Event, name, status, detail string) {
	if status != "failed" || name == "" || p.mcpSeen[name] {
		return
	}
	if p.mcpSeen == nil {
		p.mcpSeen = map[string]bool{}
	}
	p.mcpSeen[name] = true
	base.Kind, base.Text, base.Raw = agentcli.EventNotice, driver.MCPStartNotice(name, status, detail), nil
	p.evs = append(p.evs, base)
}

func newOracleParser(model string, resumed bool) *oracleParser {
	return &oracleParser{reqModel: model, resumed: resumed, announced: map[string]bool{}}
}

// Line implements driver.Parser.
func (p *oracleParser) Line(line []byte) []agentcli.Event {
	p.evs = p.evs[:0]
	var w oWireLine
	if evs := driver.DecodeObject(Name, line, &w); evs != nil {
		return evs
	}
	raw := json.RawMessage(line)
	var d oWireData
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
		if msg := oErrorMessage(d.Error); msg != "" && (tr.Output == "" || tr.IsError) {
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
			p.serr = &oSessionError{typ: d.ErrorType, message: d.Message, status: d.StatusCode}
		}
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, d.Message
		add(ev)
	case "session.warning":
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, d.Message
		add(ev)
	case "session.mcp_server_status_changed":
		p.mcpFailed(base, d.ServerName, d.Status, oErrorMessage(d.Error))
	case "session.mcp_servers_loaded":
		for _, s := range d.Servers {
			p.mcpFailed(base, s.Name, s.Status, s.Error)
		}
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
func (p *oracleParser) toolUse(base agentcli.Event, id, name string, args json.RawMessage) {
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

// oErrorMessage returns the message of a tool's error ({"message", "code"},
// or a string).
func oErrorMessage(raw json.RawMessage) string {
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

// End implements driver.Parser.
func (p *oracleParser) End(exit driver.Exit) driver.Outcome {
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

// lineShape is the oracle's domain: what its wire structs decode without
// a type error, keys spelled exactly and given once.
var lineShape = func() *backendtest.Shape {
	B := backendtest.Obj
	s, n := backendtest.StrNull, backendtest.IntNull
	msg := &backendtest.Shape{Kinds: backendtest.KAny, Fields: map[string]*backendtest.Shape{"message": backendtest.Any}}
	data := B(map[string]*backendtest.Shape{
		"deltaContent": s, "content": s, "model": s, "parentToolCallId": s,
		"toolRequests": backendtest.OrNull(backendtest.Arr(backendtest.OrNull(B(map[string]*backendtest.Shape{
			"toolCallId": s, "name": s, "arguments": backendtest.Any,
		})))),
		"toolCallId": s, "toolName": s, "arguments": backendtest.Any, "success": backendtest.OrNull(backendtest.Bool),
		"result":         backendtest.OrNull(B(map[string]*backendtest.Shape{"content": s})),
		"error":          msg,
		"shellExecution": backendtest.OrNull(B(map[string]*backendtest.Shape{"exitCode": n})),
		"reason":         s, "errorType": s, "message": s, "statusCode": n, "errorMessage": s,
		"serverName": s, "status": s,
		"servers": backendtest.OrNull(backendtest.Arr(backendtest.OrNull(B(map[string]*backendtest.Shape{
			"name": s, "status": s, "error": s,
		})))),
	})
	return B(map[string]*backendtest.Shape{"type": s, "sessionId": s, "exitCode": n, "data": backendtest.OrNull(data)})
}()

// inDomain reports whether the oracle's answer for line is the reference
// (a blank line was a notice to the oracle; the kit skips it).
func inDomain(line []byte) bool { return backendtest.WellTyped(line, lineShape) }

// oracle checks the parser against the oracle, and in every way the kit
// hands it lines: on the transcripts of the real CLI and lines of every
// type with odd values (TestOracle), and on what the fuzzer makes of them
// (FuzzOracle).
func oracle(t testing.TB) *backendtest.Oracle {
	return &backendtest.Oracle{
		Spec: &spec, New: func() driver.Parser { return newParser("m", true) },
		Old: func() driver.Parser { return newOracleParser("m", true) }, InDomain: inDomain,
		Seeds: append(append(backendtest.Files(t, filepath.Join("testdata", "real", "*.stdout")), backendtest.Files(t, filepath.Join("testdata", "mcp-failed.jsonl"))...),
			backendtest.Seed{Stdout: `{"type":"session.mcp_server_status_changed","data":{"serverName":"a","status":"failed","error":{"message":"m"}}}` + "\n" +
				`{"type":"session.mcp_server_status_changed","data":{"serverName":"b","status":"needs-auth"}}` + "\n" +
				`{"type":"session.mcp_server_status_changed","data":{"serverName":null,"status":"failed"}}` + "\n" +
				`{"type":"session.mcp_servers_loaded","data":{"servers":[null,{"name":"a","status":"failed"},{"name":"c","status":"failed","error":null},{"name":"d","status":"connected"}]}}` + "\n" +
				`{"type":"session.mcp_servers_loaded","data":{"servers":null}}` + "\n" + `{"type":"result","sessionId":"s","exitCode":0}`},
			backendtest.Seed{Stdout: `{"type":"agentcli.session","sessionId":"s-1"}` + "\n" +
				`{"type":"assistant.message","data":{"content":"","model":"gpt","toolRequests":[{"toolCallId":"c1","name":"create","arguments":{"path":"/x"}},null,{"toolCallId":"c2","name":"bash","arguments":null}]}}` + "\n" +
				`{"type":"tool.execution_start","data":{"toolCallId":"c1","toolName":"create","arguments":{}}}` + "\n" +
				`{"type":"tool.execution_start","data":{"toolCallId":"c3","toolName":"view","arguments":{"path":"/r"},"parentToolCallId":"task-1"}}` + "\n" +
				`{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":false,"error":{"message":"denied","code":"x"},"result":{"content":"partial"}}}` + "\n" +
				`{"type":"tool.execution_complete","data":{"toolCallId":"c2","success":true,"error":"plain","result":{"content":""},"shellExecution":{"exitCode":3}}}` + "\n" +
				`{"type":"tool.execution_complete","data":{"toolCallId":"c3","success":null,"error":{"code":"x"},"shellExecution":{"exitCode":null}}}` + "\n" +
				`{"type":"assistant.message","data":{"content":"sub","parentToolCallId":"task-1","model":"other"}}` + "\n" +
				`{"type":"assistant.reasoning_delta","data":{"deltaContent":"hm"}}` + "\n" + `{"type":"assistant.reasoning","data":{"content":"hm"}}` + "\n" +
				`{"type":"assistant.turn_start","data":{}}` + "\n" + `{"type":"assistant.turn_start","data":{"parentToolCallId":"t"}}` + "\n" +
				`{"type":"assistant.turn_retry","data":{"reason":"r\n1"}}` + "\n" + `{"type":"session.warning","data":{"message":"careful"}}` + "\n" +
				`{"type":"agentcli.usage_file","data":{"modelMetrics":{"m":{"usage":{"inputTokens":100,"outputTokens":7,"cacheReadTokens":30}}}}}` + "\n" +
				`{"type":"agentcli.usage_file","data":{"x":1}}` + "\n" + `{"type":"agentcli.usage_file"}` + "\n" +
				`{"type":"session.future","data":{"a":"b\tc"}}` + "\n" + `{"type":"user.message","data":null}` + "\n" +
				`{"type":"result","sessionId":"s-2","exitCode":0}`},
			backendtest.Seed{Stdout: `{"type":"model.call_failure","data":{"errorMessage":"429 slow down"}}` + "\n" +
				`{"type":"session.error","data":{"errorType":"rate_limit","message":"Too many","statusCode":429}}` + "\n" +
				`{"type":"session.error","data":{"errorType":"x","message":"sub","parentToolCallId":"t"}}` + "\n" +
				`{"type":"result","exitCode":1}`, Exit: 1},
			backendtest.Seed{Stdout: `{"type":"session.error","data":{"errorType":"authentication","message":"no auth"}}` + "\n" + `[1]` + "\n" + `not json` + "\n" + `{"type":"x","data":"str"}`, Exit: 1},
			backendtest.Seed{Stdout: `{"type":"result","sessionId":"s","exitCode":0}`, Exit: 2},
		),
	}
}

func TestOracle(t *testing.T) { oracle(t).Test(t) }

func FuzzOracle(f *testing.F) { oracle(f).Fuzz(f) }
