package codex

// The oracle: the encoding/json parser agentcli shipped before the
// single-pass one (parse.go), kept as it was (identifiers renamed) so
// that FuzzOracle can check the new parser against it.
//
// Differences by design, outside the oracle's domain (lineShape) and each
// pinned by a test in robust_test.go:
//   - Token counts are clamped to be non-negative and their sums saturate
//     (issue 7): the oracle subtracted a negative cached count into the
//     input count, and sums could wrap.
//   - A field of an unexpected type reads as absent; the oracle kept a
//     half-decoded value (exit_code "0" became a pointer to 0).
//   - Parts of a line no event keeps are not validated: a line that is
//     not valid JSON there still yields its events (json.Marshal(Event)
//     drops such a Raw). Tool inputs are built by agentcli and always
//     valid; arguments and actions kept as JSON are validated, as the
//     oracle did.
//   - Keys match exactly; the oracle matched them case-insensitively. A
//     repeated key: the last wins whole (the oracle merged objects); the
//     first "id" of a web_search item is still its id.
//   - Notices carry jsonscan's syntax errors, not encoding/json's.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/benchdata"
)

// lineShape is the oracle's domain: what its wire structs decode without
// a type error, keys spelled exactly and given once.
var lineShape = func() *backendtest.Shape {
	type m = map[string]*backendtest.Shape
	B, N := backendtest.Obj, backendtest.OrNull
	s, c := backendtest.StrNull, N(backendtest.Count)
	msg := N(B(m{"message": s}))
	item := &backendtest.Shape{Kinds: backendtest.KAny, Fields: m{
		"id":   {Kinds: backendtest.KStr | backendtest.KNull, Repeat: true},
		"type": s, "text": s, "message": s, "command": s, "aggregated_output": s, "status": s,
		"server": s, "tool": s, "prompt": s, "query": s, "sender_thread_id": s,
		"exit_code": backendtest.IntNull,
		"changes":   N(backendtest.Arr(N(B(m{"path": s, "kind": s})))),
		"arguments": backendtest.Any,
		"result": N(B(m{
			"content":            {Kinds: backendtest.KAny, Elem: &backendtest.Shape{Kinds: backendtest.KAny, Fields: m{"type": backendtest.Any, "text": backendtest.Any}}},
			"structured_content": backendtest.Any,
		})),
		"error":               msg,
		"receiver_thread_ids": N(backendtest.Arr(s)),
		"agents_states":       backendtest.Any,
		"action":              backendtest.Any,
		"items":               N(backendtest.Arr(N(B(m{"text": s, "completed": N(backendtest.Bool)})))),
	}}
	return &backendtest.Shape{Kinds: backendtest.KAny, Fields: m{
		"type": s, "thread_id": s, "message": s, "error": msg, "item": item,
		"usage": N(B(m{"input_tokens": c, "cached_input_tokens": c, "cache_write_input_tokens": c, "output_tokens": c, "reasoning_output_tokens": c})),
	}}
}()

// inDomain reports whether the oracle's answer for line is the reference.
func inDomain(line []byte) bool {
	return len(bytes.TrimSpace(line)) == 0 || backendtest.WellTyped(line, lineShape)
}

// FuzzOracle checks the single-pass parser against the oracle: on streams
// of lines inside the oracle's domain they must yield the same events,
// result and error; on anything at all the new parser must not panic, must
// decide, and must yield events json.Marshal can encode with sane usage.
func FuzzOracle(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "real", "*.stdout"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 0, "", false)
	}
	for i, l := range benchdata.Lines(benchdata.Codex, 64<<10) {
		if i < 40 {
			f.Add(l, 0, "", i%2 == 0)
		}
	}
	f.Add([]byte(`{"type":"item.completed","item":{"id":"item_6","type":"web_search","id":"ws_1","query":"q","action":{"type":"search", "q":"<a>"}}}`), 0, "", false)
	f.Add([]byte(`{"type":"error","message":"Reconnecting... 2/5 (unexpected status 502)"}`+"\n"+`{"type":"turn.failed","error":{"message":"x"}}`), 1, "boom", true)
	f.Add([]byte(`{"type":"item.updated","item":{"id":"item_7","type":"todo_list","items":[{"text":"a","completed":true},null]}}`), 0, "", true)
	f.Add([]byte(`{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"s","tool":"t","arguments":{"a":1},"result":{"content":[{"type":"text","text":"x"},null,{"type":"image"}],"structured_content":null},"error":null,"status":"completed"}}`), 0, "", false)
	f.Add([]byte(`{"type":"item.completed","item":{"id":"c","type":"collab_tool_call","tool":"spawn","prompt":"p","receiver_thread_ids":[],"agents_states":{"a":1},"status":"failed"}}`), 0, "", false)
	f.Add([]byte(`{"type":"item.completed","item":{"id":"f","type":"file_change","changes":[],"status":"completed"}}`), 0, "", false)
	// Escaped strings decoded in place on lines handed over for keeps
	// (ParseBorrowed): an unknown event keeps its line as printed, a
	// syntax error after such a string, a raw span holding one, a result
	// line validated as printed.
	for _, l := range []string{
		`{"type":"item.future","item":{"id":"i","type":"agent_message","text":"a\nb \"q\" \u0001"}}`,
		`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"a\nb" "x"}}`,
		`{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"s","tool":"t","arguments":{},"result":{"content":[{"type":"image","text":"a\nb"}]},"status":"completed"}}`,
		`{"type":"turn.failed","error":{"message":"a\nb"}}`,
	} {
		f.Add([]byte(l), 1, "", false)
	}
	f.Fuzz(func(t *testing.T, in []byte, code int, stderr string, resume bool) {
		req := &agentcli.Request{Model: "gpt-test"}
		if resume {
			req.SessionID = "01a20097-ba30-7780-86c4-391ca595925e"
		}
		lines := backendtest.SplitLines(in)
		exit := driver.Exit{Code: code & 0xff, Stderr: stderr}
		all := backendtest.Parse(&spec, newParser(req), lines, exit)
		if all.Result == nil && all.Err == nil {
			t.Fatal("End returned neither a result nor an error")
		}
		if err := backendtest.CheckEvents(all); err != nil {
			t.Fatal(err)
		}
		// Every way the kit hands lines to the parser: decoded ahead,
		// borrowed (Request.DropRaw), handed over for keeps.
		backendtest.CheckModes(t, &spec, func() driver.Parser { return newParser(req) }, lines, exit)
		var dom [][]byte
		for _, l := range lines {
			if inDomain(l) {
				dom = append(dom, l)
			}
		}
		want := backendtest.Parse(&spec, newOracleParser(req), dom, exit)
		got := backendtest.Parse(&spec, newParser(req), dom, exit)
		if d := backendtest.DiffRuns(want, got); d != "" {
			t.Fatalf("the new parser differs from the oracle on\n%s\n%s", bytes.Join(dom, []byte("\n")), d)
		}
	})
}

// Wire structs: the `codex exec --json` events (codex-rs/exec/src/
// exec_events.rs) that agentcli reads. Unknown fields are ignored, unknown
// event and item types are kept raw, and nothing depends on key order.

type oWireEvent struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"` // thread.started
	Usage    *oWireUsage     `json:"usage"`     // turn.completed
	Error    *oWireError     `json:"error"`     // turn.failed
	Message  string          `json:"message"`   // error
	Item     json.RawMessage `json:"item"`      // item.*
}

type oWireUsage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
	ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
}

type oWireError struct {
	Message string `json:"message"`
}

// wireItem is a ThreadItem: {id, type, ...details}. For web_search the
// details carry a second "id" (the search call id); see itemID.
type oWireItem struct {
	ID   string `json:"id"`
	Type string `json:"type"`

	// agent_message, reasoning
	Text string `json:"text"`
	// error
	Message string `json:"message"`
	// command_execution
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	// command_execution, file_change, mcp_tool_call, collab_tool_call
	Status string `json:"status"`
	// file_change
	Changes []wireChange `json:"changes"`
	// mcp_tool_call
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    *wireMCPResult  `json:"result"`
	Error     *oWireError     `json:"error"`
	// collab_tool_call
	Prompt            string          `json:"prompt"`
	ReceiverThreadIDs []string        `json:"receiver_thread_ids"`
	AgentsStates      json.RawMessage `json:"agents_states"`
	SenderThreadID    string          `json:"sender_thread_id"`
	// web_search
	Query  string          `json:"query"`
	Action json.RawMessage `json:"action"`
	// todo_list
	Items []oWireTodo `json:"items"`
}

type oWireTodo struct {
	Text      string `json:"text"`
	Completed bool   `json:"completed"`
}

// parser turns `codex exec --json` output into events. One parser serves one
// run.
type oracleParser struct {
	// resumed reports that the run resumes a thread: turn.completed usage
	// then covers the whole thread, not just this run.
	resumed bool
	// requested is the session id the run asked to resume.
	requested string
	model     string

	sessionID string
	lastText  string
	// started records tool items whose EventToolUse was emitted.
	started map[string]bool

	completed   bool // a turn.completed was seen
	usage       *oWireUsage
	completeRaw json.RawMessage
	failed      *string // turn.failed's message
	failedRaw   json.RawMessage
	lastError   string // the last top-level non-retry error event
}

func newOracleParser(req *agentcli.Request) *oracleParser {
	return &oracleParser{
		resumed:   req.SessionID != "",
		requested: req.SessionID,
		model:     req.Model,
		started:   map[string]bool{},
	}
}

// decode unmarshals line into v. A field of an unexpected type leaves the
// rest decoded; only malformed JSON is an error.
func oDecode(line []byte, v any) error {
	err := json.Unmarshal(line, v)
	var te *json.UnmarshalTypeError
	if err != nil && errors.As(err, &te) {
		return nil
	}
	return err
}

// Line implements driver.Parser.
func (p *oracleParser) Line(line []byte) []agentcli.Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var w oWireEvent
	if n := driver.DecodeObject(Name, line, &w); n != nil {
		return n
	}
	raw := json.RawMessage(line)
	base := agentcli.Event{Raw: raw}
	switch w.Type {
	case "thread.started":
		if w.ThreadID == "" {
			break
		}
		p.sessionID = w.ThreadID
		ev := base
		ev.Kind, ev.SessionID, ev.Model = agentcli.EventInit, w.ThreadID, p.model
		evs := []agentcli.Event{ev}
		if p.requested != "" && w.ThreadID != p.requested {
			// codex reads a resume argument that is not a UUID as a thread
			// name, and starts a new thread, silently, when no thread has
			// that name.
			n := base
			n.Kind = agentcli.EventNotice
			n.Text = "codex: resuming " + strconv.Quote(p.requested) + " runs thread " + w.ThreadID +
				"; codex treats a session id that is not a thread id as a thread name, and starts a new thread when none matches"
			evs = append(evs, n)
		}
		return evs
	case "turn.started":
		return nil
	case "turn.completed":
		p.completed = true
		p.completeRaw = raw
		if w.Usage == nil {
			return nil
		}
		// Usage is the thread's running total; the last turn.completed
		// holds the total of everything before it, so it replaces rather
		// than adds.
		p.usage = w.Usage
		ev := base
		ev.Kind = agentcli.EventUsage
		u := p.usageOf(w.Usage)
		ev.Usage = &u
		return []agentcli.Event{ev}
	case "turn.failed":
		msg := ""
		if w.Error != nil {
			msg = w.Error.Message
		}
		p.failed = &msg
		p.failedRaw = raw
		return nil
	case "error":
		if r := retryOf(w.Message); r != nil {
			ev := base
			ev.Kind, ev.Retry = agentcli.EventRetry, r
			return []agentcli.Event{ev}
		}
		// Not fatal by itself: the run fails only if turn.failed follows
		// (it usually repeats this message).
		p.lastError = w.Message
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, w.Message
		return []agentcli.Event{ev}
	case "item.started", "item.updated", "item.completed":
		if len(w.Item) > 0 && w.Item[0] == '{' {
			if evs, ok := p.item(w.Type, w.Item, base); ok {
				return evs
			}
		}
	}
	ev := base
	ev.Kind = agentcli.EventUnknown
	return []agentcli.Event{ev}
}

// item normalizes one item.* event. ok is false for item types it does not
// know (the caller keeps the line as EventUnknown).
func (p *oracleParser) item(phase string, raw json.RawMessage, base agentcli.Event) (evs []agentcli.Event, ok bool) {
	var it oWireItem
	if oDecode(raw, &it) != nil {
		return nil, false
	}
	if it.Type == "web_search" {
		// The flattened details repeat "id"; encoding/json keeps the last
		// one, but the item id is the first.
		it.ID = oFirstID(raw)
	}
	done := phase == "item.completed"
	switch it.Type {
	case "agent_message":
		if !done {
			return nil, true
		}
		ev := base
		ev.Kind, ev.Text = agentcli.EventText, it.Text
		p.lastText = it.Text
		return []agentcli.Event{ev}, true
	case "reasoning":
		if !done || it.Text == "" {
			return nil, true
		}
		ev := base
		ev.Kind, ev.Text = agentcli.EventThinking, it.Text
		return []agentcli.Event{ev}, true
	case "error":
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, it.Message
		if m := rerouteRe.FindStringSubmatch(it.Message); m != nil {
			p.model = m[1]
		}
		return []agentcli.Event{ev}, true
	case "command_execution":
		use := p.toolUse(it, agentcli.ToolNameBash, oJSONObject("command", it.Command))
		res := &agentcli.ToolResult{
			ID:       it.ID,
			Output:   it.AggregatedOutput,
			ExitCode: it.ExitCode,
			IsError:  (it.ExitCode != nil && *it.ExitCode != 0) || failedStatus(it.Status),
		}
		return p.toolEvents(base, it.ID, done, use, res), true
	case "file_change":
		name := oFileChangeTool(it.Changes)
		input := map[string]any{"changes": it.Changes}
		if len(it.Changes) == 1 {
			input["file_path"] = it.Changes[0].Path
		}
		use := p.toolUse(it, name, oMarshal(input))
		var out []string
		for _, c := range it.Changes {
			out = append(out, c.Kind+" "+c.Path)
		}
		res := &agentcli.ToolResult{ID: it.ID, Output: strings.Join(out, "\n"), IsError: failedStatus(it.Status)}
		return p.toolEvents(base, it.ID, done, use, res), true
	case "mcp_tool_call":
		rawName := "mcp__" + it.Server + "__" + it.Tool
		args := it.Arguments
		if len(args) == 0 || !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		use := tools.Use(it.ID, rawName, args)
		res := &agentcli.ToolResult{ID: it.ID, IsError: failedStatus(it.Status)}
		switch {
		case it.Error != nil:
			res.Output, res.IsError = it.Error.Message, true
		case it.Result != nil:
			res.Output = oMCPText(it.Result)
		}
		return p.toolEvents(base, it.ID, done, use, res), true
	case "collab_tool_call":
		input := map[string]any{"tool": it.Tool, "prompt": it.Prompt, "receiver_thread_ids": it.ReceiverThreadIDs}
		use := p.toolUse(it, "", oMarshal(input))
		res := &agentcli.ToolResult{ID: it.ID, IsError: failedStatus(it.Status)}
		if len(it.AgentsStates) > 0 && string(it.AgentsStates) != "null" {
			res.Output = string(it.AgentsStates)
		}
		return p.toolEvents(base, it.ID, done, use, res), true
	case "web_search":
		input := map[string]any{"query": it.Query}
		if len(it.Action) > 0 && json.Valid(it.Action) {
			input["action"] = it.Action
		}
		use := p.toolUse(it, "", oMarshal(input))
		res := &agentcli.ToolResult{ID: it.ID}
		return p.toolEvents(base, it.ID, done, use, res), true
	case "todo_list":
		type todo struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		}
		todos := make([]todo, 0, len(it.Items))
		for _, t := range it.Items {
			st := "pending"
			if t.Completed {
				st = "completed"
			}
			todos = append(todos, todo{Content: t.Text, Status: st})
		}
		use := p.toolUse(it, "", oMarshal(map[string]any{"todos": todos}))
		if !done {
			// Every plan update is a new TodoWrite with the whole list,
			// under the item's id.
			p.started[it.ID] = true
			ev := base
			ev.Kind, ev.Tool = agentcli.EventToolUse, use
			return []agentcli.Event{ev}, true
		}
		res := &agentcli.ToolResult{ID: it.ID}
		return p.toolEvents(base, it.ID, done, use, res), true
	}
	return nil, false
}

// toolUse builds the ToolUse of a tool item. name, if not "", overrides the
// canonical name derived from the item type.
func (p *oracleParser) toolUse(it oWireItem, name string, input json.RawMessage) *agentcli.ToolUse {
	use := tools.Use(it.ID, it.Type, input)
	if name != "" {
		use.Name, use.Kind = name, driver.KindOf(name)
	}
	return use
}

// toolEvents emits the tool use when the item starts and the result when it
// completes; an item seen only completed yields both. Updates of an item
// already announced yield nothing.
func (p *oracleParser) toolEvents(base agentcli.Event, id string, done bool, use *agentcli.ToolUse, res *agentcli.ToolResult) []agentcli.Event {
	var evs []agentcli.Event
	if !p.started[id] || id == "" {
		p.started[id] = true
		ev := base
		ev.Kind, ev.Tool = agentcli.EventToolUse, use
		evs = append(evs, ev)
	}
	if done {
		delete(p.started, id)
		ev := base
		ev.Kind, ev.ToolResult = agentcli.EventToolResult, res
		evs = append(evs, ev)
	}
	return evs
}

// End implements driver.Parser. Success is exit status 0 with a
// turn.completed and no turn.failed.
// End implements driver.Parser: the oracle's end, its result and error
// read back into an Outcome.
func (p *oracleParser) End(exit driver.Exit) driver.Outcome {
	return backendtest.OutcomeOf(p.end(exit))
}

func (p *oracleParser) end(exit driver.Exit) (*agentcli.Result, error) {
	if p.failed == nil && !p.completed {
		return nil, nil
	}
	res := &agentcli.Result{
		Text:      p.lastText,
		SessionID: cmp.Or(p.sessionID, p.requested),
		Model:     p.model,
		Raw:       p.completeRaw,
	}
	if p.usage != nil {
		res.Usage = p.usageOf(p.usage)
	}
	if p.failed == nil && exit.Code == 0 {
		return res, nil
	}
	res.IsError = true
	re := &agentcli.ResultError{ExitCode: exit.Code, Result: res}
	if p.failed != nil {
		res.Raw = p.failedRaw
		res.Text = ""
		re.Message = cmp.Or(*p.failed, p.lastError)
	} else {
		re.Message = cmp.Or(p.lastError, "CLI exited with a non-zero status after turn.completed")
	}
	re.APIStatus = apiStatusOf(re.Message)
	return res, re
}

// usageOf converts codex usage to agentcli's convention: codex's
// input_tokens includes the cached and cache-write tokens, which agentcli
// counts apart; its output_tokens already includes reasoning.
func (p *oracleParser) usageOf(u *oWireUsage) agentcli.Usage {
	return agentcli.Usage{
		InputTokens:      max(0, u.InputTokens-u.CachedInputTokens-u.CacheWriteInputTokens),
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CachedInputTokens,
		CacheWriteTokens: u.CacheWriteInputTokens,
		ReasoningTokens:  u.ReasoningOutputTokens,
		Cumulative:       p.resumed,
	}
}

// fileChangeTool names a file_change: Write when every change adds a file,
// Delete when every change deletes one, Edit otherwise.
func oFileChangeTool(cs []wireChange) string {
	if len(cs) == 0 {
		return agentcli.ToolNameEdit
	}
	all := func(kind string) bool {
		for _, c := range cs {
			if c.Kind != kind {
				return false
			}
		}
		return true
	}
	switch {
	case all("add"):
		return agentcli.ToolNameWrite
	case all("delete"):
		return agentcli.ToolNameDelete
	}
	return agentcli.ToolNameEdit
}

// mcpText renders an MCP tool result: its text content blocks joined with
// newlines; else its structured content; else its raw content JSON.
func oMCPText(r *wireMCPResult) string {
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(r.Content, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		return string(r.StructuredContent)
	}
	if len(r.Content) > 0 && string(r.Content) != "null" && string(r.Content) != "[]" {
		return string(r.Content)
	}
	return ""
}

// firstID returns the value of the first "id" key of a JSON object when it
// is a string, scanning tokens so that a later duplicate key cannot win.
func oFirstID(obj []byte) string {
	d := json.NewDecoder(bytes.NewReader(obj))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return ""
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return ""
		}
		if key == "id" {
			var s string
			json.Unmarshal(v, &s) //nolint:errcheck // not a string: no id
			return s
		}
	}
	return ""
}

func oJSONObject(key, val string) json.RawMessage {
	return oMarshal(map[string]string{key: val})
}

func oMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}
