package codex

import (
	"cmp"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// Each `codex exec --json` event (codex-rs/exec/src/exec_events.rs) is read
// once, in a single pass (driver/jsonscan), straight into wireEvent and
// its wireItem, under the wire's own field names. Unknown fields are
// ignored, unknown event and item types are kept raw, and nothing depends
// on key order: a line is decoded whole before its type is looked at. A
// field of an unexpected type reads as absent. Strings share the line's
// memory when they hold no escapes (the line is kept as Event.Raw anyway).

type wireEvent struct {
	Type     string
	ThreadID string    // thread.started
	Usage    wireUsage // turn.completed
	HasUsage bool
	Error    string // turn.failed: error.message
	HasError bool
	Message  string   // error
	Item     wireItem // item.*
	HasItem  bool
}

type wireUsage struct {
	InputTokens           int64
	CachedInputTokens     int64
	CacheWriteInputTokens int64
	OutputTokens          int64
	ReasoningOutputTokens int64
}

// wireItem is a ThreadItem: {id, type, ...details}. For web_search the
// details carry a second "id" (the search call id): FirstID is the item's.
type wireItem struct {
	ID      string // the last "id", as encoding/json would keep it
	FirstID string // the first "id"
	Type    string

	// agent_message, reasoning
	Text string
	// error
	Message string
	// command_execution
	Command          string
	AggregatedOutput string
	ExitCode         int
	HasExitCode      bool
	// command_execution, file_change, mcp_tool_call, collab_tool_call
	Status string
	// file_change
	Changes []wireChange
	// mcp_tool_call
	Server       string
	Tool         string
	Arguments    []byte
	Result       mcpResult
	HasResult    bool
	Error        string // error.message
	HasError     bool
	Prompt       string // collab_tool_call
	ReceiverIDs  []string
	AgentsStates []byte
	// web_search
	Query  string
	Action []byte
	// todo_list
	Items []wireTodo
}

type wireChange struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// wireMCPResult is an MCP tool call's result as the app-server protocol
// of live sessions carries it (decoded with encoding/json, see mcpText).
type wireMCPResult struct {
	Content           json.RawMessage `json:"content"`
	StructuredContent json.RawMessage `json:"structured_content"`
}

// mcpResult is an mcp_tool_call item's result.
type mcpResult struct {
	Content           []byte
	StructuredContent []byte
	// Text is the text of the content's "text" blocks, joined with
	// newlines; TextOK reports that content was an array of blocks of
	// which at least one is a "text" block.
	Text   string
	TextOK bool
}

type wireTodo struct {
	Text      string
	Completed bool
}

// parser is the state of one run's parsing of `codex exec --json` output,
// which it turns into events (see driver.LineParser).
type parser struct {
	evs []agentcli.Event

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
	usage       *wireUsage
	completeRaw json.RawMessage
	failed      *string // turn.failed's message
	failedRaw   json.RawMessage
	lastError   string // the last top-level non-retry error event
}

// newParser returns the driver.Parser of one run of req.
func newParser(req *agentcli.Request) driver.Parser { return driver.Lines(Name, newState(req)) }

func newState(req *agentcli.Request) *parser {
	return &parser{
		resumed:   req.SessionID != "",
		requested: req.SessionID,
		model:     req.Model,
		started:   map[string]bool{},
	}
}

// decode unmarshals line into v with encoding/json (the app-server
// protocol of live sessions uses it). A field of an unexpected type leaves
// the rest decoded; only malformed JSON is an error.
func decode(line []byte, v any) error {
	err := json.Unmarshal(line, v)
	var te *json.UnmarshalTypeError
	if err != nil && errors.As(err, &te) {
		return nil
	}
	return err
}

// str reads a string that may share the line's memory ("" for any other
// value).
func str(d *jsonscan.Decoder) string {
	s, _ := d.UnsafeStr()
	return s
}

var _ driver.LineParser[wireEvent] = (*parser)(nil)

// Apply implements driver.LineParser.
func (p *parser) Apply(w *wireEvent, line *driver.Line) []agentcli.Event {
	p.evs = p.evs[:0]
	p.apply(w, line)
	return p.evs
}

// Decode implements driver.Wire.
func (w *wireEvent) Decode(d *jsonscan.Decoder) error {
	w.decode(d)
	// The line may become Result.Raw, which must be valid JSON; other
	// lines are not validated where no event reads them.
	return driver.CheckJSON(d, false, w.Type == "turn.completed" || w.Type == "turn.failed")
}

// decode reads the object at the decoder's position into w, which is
// zero.
func (w *wireEvent) decode(d *jsonscan.Decoder) {
	for k := range d.Object() {
		switch string(k) {
		case "type":
			w.Type = str(d)
		case "thread_id":
			w.ThreadID = str(d)
		case "usage":
			w.HasUsage = d.Kind() == jsonscan.Object
			w.Usage = wireUsage{}
			for k := range d.Object() {
				switch string(k) {
				case "input_tokens":
					w.Usage.InputTokens = driver.Count(d.Int())
				case "cached_input_tokens":
					w.Usage.CachedInputTokens = driver.Count(d.Int())
				case "cache_write_input_tokens":
					w.Usage.CacheWriteInputTokens = driver.Count(d.Int())
				case "output_tokens":
					w.Usage.OutputTokens = driver.Count(d.Int())
				case "reasoning_output_tokens":
					w.Usage.ReasoningOutputTokens = driver.Count(d.Int())
				}
			}
		case "error":
			w.Error, w.HasError = errorMessage(d)
		case "message":
			w.Message = str(d)
		case "item":
			w.HasItem = d.Kind() == jsonscan.Object
			w.Item.decode(d)
		}
	}
}

// errorMessage reads {"message": …}; ok is false for null or a value that
// is not an object.
func errorMessage(d *jsonscan.Decoder) (msg string, ok bool) {
	ok = d.Kind() == jsonscan.Object
	for k := range d.Object() {
		if string(k) == "message" {
			msg = str(d)
		}
	}
	return msg, ok
}

func (it *wireItem) decode(d *jsonscan.Decoder) {
	*it = wireItem{}
	ids := 0
	for k := range d.Object() {
		switch string(k) {
		case "id":
			id, ok := d.UnsafeStr()
			if ids == 0 {
				it.FirstID = id
			}
			ids++
			if ok {
				it.ID = id
			}
		case "type":
			it.Type = str(d)
		case "text":
			it.Text = str(d)
		case "message":
			it.Message = str(d)
		case "command":
			it.Command = str(d)
		case "aggregated_output":
			it.AggregatedOutput = str(d)
		case "exit_code":
			n, ok := d.IntOK()
			it.ExitCode, it.HasExitCode = int(n), ok
		case "status":
			it.Status = str(d)
		case "changes":
			it.Changes = decodeChanges(d)
		case "server":
			it.Server = str(d)
		case "tool":
			it.Tool = str(d)
		case "arguments":
			it.Arguments = d.Raw()
		case "result":
			it.HasResult = d.Kind() == jsonscan.Object
			it.Result.decode(d)
		case "error":
			it.Error, it.HasError = errorMessage(d)
		case "prompt":
			it.Prompt = str(d)
		case "receiver_thread_ids":
			it.ReceiverIDs = driver.Strings(d)
		case "agents_states":
			it.AgentsStates = d.Raw()
		case "query":
			it.Query = str(d)
		case "action":
			it.Action = d.Raw()
		case "items":
			it.Items = decodeTodos(d)
		}
	}
}

// decodeChanges reads a file change's changes: nil for null or a value
// that is not an array.
func decodeChanges(d *jsonscan.Decoder) []wireChange {
	var cs []wireChange
	if d.Kind() == jsonscan.Array {
		cs = []wireChange{}
	}
	for range d.Array() {
		var c wireChange
		for k := range d.Object() {
			switch string(k) {
			case "path":
				c.Path = str(d)
			case "kind":
				c.Kind = str(d)
			}
		}
		cs = append(cs, c)
	}
	return cs
}

// decodeTodos reads a plan's items.
func decodeTodos(d *jsonscan.Decoder) []wireTodo {
	var items []wireTodo
	for range d.Array() {
		var t wireTodo
		for k := range d.Object() {
			switch string(k) {
			case "text":
				t.Text = str(d)
			case "completed":
				t.Completed = d.LooseBool()
			}
		}
		items = append(items, t)
	}
	return items
}

// decode reads an MCP tool call's result.
func (r *mcpResult) decode(d *jsonscan.Decoder) {
	*r = mcpResult{}
	for k := range d.Object() {
		switch string(k) {
		case "content":
			r.decodeContent(d)
		case "structured_content":
			r.StructuredContent = d.Raw()
		}
	}
}

// decodeContent reads an MCP result's content: its JSON text, and the
// text of its "text" blocks.
func (r *mcpResult) decodeContent(d *jsonscan.Decoder) {
	switch d.Kind() {
	case jsonscan.Array:
	default: // null, or not blocks: no text
		r.Content = d.Raw()
		return
	}
	start := d.Offset()
	ok := true
	var parts []string
	for range d.Array() {
		switch d.Kind() {
		case jsonscan.Object:
		case jsonscan.Null:
			continue
		default:
			ok = false
			continue
		}
		var typ, text string
		for k := range d.Object() {
			switch string(k) {
			case "type", "text":
				var s string
				switch d.Kind() {
				case jsonscan.String:
					s = str(d)
				case jsonscan.Null:
				default:
					ok = false
				}
				if string(k) == "type" {
					typ = s
				} else {
					text = s
				}
			}
		}
		if typ == "text" {
			parts = append(parts, text)
		}
	}
	if d.Err() != nil {
		return
	}
	if ok && len(parts) > 0 {
		r.Text, r.TextOK = strings.Join(parts, "\n"), true
		return // the raw content is read only when there is no text
	}
	r.Content = d.Span(start, d.Offset())
}

// apply appends the events of the decoded line w.
func (p *parser) apply(w *wireEvent, line *driver.Line) {
	raw := line.Raw()
	base := agentcli.Event{Raw: raw}
	switch w.Type {
	case "thread.started":
		if w.ThreadID == "" {
			break
		}
		p.sessionID = w.ThreadID
		ev := base
		ev.Kind, ev.SessionID, ev.Model = agentcli.EventInit, w.ThreadID, p.model
		p.evs = append(p.evs, ev)
		if p.requested != "" && w.ThreadID != p.requested {
			// codex reads a resume argument that is not a UUID as a thread
			// name, and starts a new thread, silently, when no thread has
			// that name.
			n := base
			n.Kind = agentcli.EventNotice
			n.Text = "codex: resuming " + strconv.Quote(p.requested) + " runs thread " + w.ThreadID +
				"; codex treats a session id that is not a thread id as a thread name, and starts a new thread when none matches"
			p.evs = append(p.evs, n)
		}
		return
	case "turn.started":
		return
	case "turn.completed":
		p.completed = true
		p.completeRaw = raw
		if !w.HasUsage {
			return
		}
		// Usage is the thread's running total; the last turn.completed
		// holds the total of everything before it, so it replaces rather
		// than adds.
		u := w.Usage
		p.usage = &u
		ev := base
		ev.Kind = agentcli.EventUsage
		eu := p.usageOf(&u)
		ev.Usage = &eu
		p.evs = append(p.evs, ev)
		return
	case "turn.failed":
		msg := w.Error
		p.failed = &msg
		p.failedRaw = raw
		return
	case "error":
		if r := retryOf(w.Message); r != nil {
			ev := base
			ev.Kind, ev.Retry = agentcli.EventRetry, r
			p.evs = append(p.evs, ev)
			return
		}
		// Not fatal by itself: the run fails only if turn.failed follows
		// (it usually repeats this message).
		p.lastError = w.Message
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, w.Message
		p.evs = append(p.evs, ev)
		return
	case "item.started", "item.updated", "item.completed":
		if w.HasItem && p.item(w.Type == "item.completed", &w.Item, base) {
			return
		}
	}
	ev := base
	ev.Kind = agentcli.EventUnknown
	ev.Raw = line.UnknownRaw()
	p.evs = append(p.evs, ev)
}

// item normalizes one item.* event. It reports false for item types it
// does not know (the caller keeps the line as EventUnknown).
func (p *parser) item(done bool, it *wireItem, base agentcli.Event) bool {
	if it.Type == "web_search" {
		// The flattened details repeat "id"; the item id is the first.
		it.ID = it.FirstID
	}
	switch it.Type {
	case "agent_message", "reasoning", "error":
		p.message(done, it, base)
		return true
	case "command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search":
	case "todo_list":
		if done {
			break
		}
		// Every plan update is a new TodoWrite with the whole list,
		// under the item's id.
		p.started[it.ID] = true
		ev := base
		ev.Kind, ev.Tool = agentcli.EventToolUse, p.toolUse(it)
		p.evs = append(p.evs, ev)
		return true
	default:
		return false
	}
	p.toolEvents(base, it, done)
	return true
}

// message appends the event of an agent message, reasoning or error
// item: the text of one that completed, an error's notice at once.
func (p *parser) message(done bool, it *wireItem, base agentcli.Event) {
	ev := base
	switch it.Type {
	case "agent_message":
		if !done {
			return
		}
		ev.Kind, ev.Text = agentcli.EventText, it.Text
		p.lastText = it.Text
	case "reasoning":
		if !done || it.Text == "" {
			return
		}
		ev.Kind, ev.Text = agentcli.EventThinking, it.Text
	case "error":
		ev.Kind, ev.Text = agentcli.EventNotice, it.Message
		if m := rerouteRe.FindStringSubmatch(it.Message); m != nil {
			p.model = m[1]
		}
	}
	p.evs = append(p.evs, ev)
}

// toolUse returns the tool use of a tool item of a type item knows.
func (p *parser) toolUse(it *wireItem) *agentcli.ToolUse {
	switch it.Type {
	case "command_execution":
		return named(it, agentcli.ToolNameBash, commandInput(it.Command))
	case "file_change":
		return named(it, fileChangeTool(it.Changes), changesInput(it.Changes))
	case "mcp_tool_call":
		args := it.Arguments
		if len(args) == 0 || !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		return tools.Use(it.ID, "mcp__"+it.Server+"__"+it.Tool, args)
	case "collab_tool_call":
		input := map[string]any{"tool": it.Tool, "prompt": it.Prompt, "receiver_thread_ids": it.ReceiverIDs}
		return tools.Use(it.ID, it.Type, marshal(input))
	case "web_search":
		input := map[string]any{"query": it.Query}
		if len(it.Action) > 0 && json.Valid(it.Action) {
			input["action"] = json.RawMessage(it.Action)
		}
		return tools.Use(it.ID, it.Type, marshal(input))
	}
	// todo_list
	return tools.Use(it.ID, it.Type, todosInput(it.Items))
}

// named is the ToolUse of a tool item under the canonical name name
// rather than the one derived from the item type (as tools.Use would
// build it, without looking the type up).
func named(it *wireItem, name string, input json.RawMessage) *agentcli.ToolUse {
	return &agentcli.ToolUse{ID: it.ID, Name: name, RawName: it.Type, Kind: driver.KindOf(name), Input: input}
}

// toolResult returns the tool result of a tool item of a type item knows.
func toolResult(it *wireItem) *agentcli.ToolResult {
	switch it.Type {
	case "web_search", "todo_list":
		return &agentcli.ToolResult{ID: it.ID}
	case "command_execution":
		// One allocation for the result and its exit code.
		r := &struct {
			res  agentcli.ToolResult
			code int
		}{res: agentcli.ToolResult{ID: it.ID, IsError: failedStatus(it.Status), Output: it.AggregatedOutput}}
		if it.HasExitCode {
			r.code = it.ExitCode
			r.res.ExitCode = &r.code
			r.res.IsError = r.res.IsError || r.code != 0
		}
		return &r.res
	}
	res := &agentcli.ToolResult{ID: it.ID, IsError: failedStatus(it.Status)}
	switch it.Type {
	case "file_change":
		var out []string
		for _, c := range it.Changes {
			out = append(out, c.Kind+" "+c.Path)
		}
		res.Output = strings.Join(out, "\n")
	case "mcp_tool_call":
		switch {
		case it.HasError:
			res.Output, res.IsError = it.Error, true
		case it.HasResult:
			res.Output = it.Result.text()
		}
	case "collab_tool_call":
		if len(it.AgentsStates) > 0 && string(it.AgentsStates) != "null" {
			res.Output = string(it.AgentsStates)
		}
	}
	return res
}

// toolEvents emits the tool use when the item starts and the result when it
// completes; an item seen only completed yields both. Updates of an item
// already announced yield nothing. Each is built only when emitted.
func (p *parser) toolEvents(base agentcli.Event, it *wireItem, done bool) {
	id := it.ID
	if !p.started[id] || id == "" {
		p.started[id] = true
		ev := base
		ev.Kind, ev.Tool = agentcli.EventToolUse, p.toolUse(it)
		p.evs = append(p.evs, ev)
	}
	if done {
		delete(p.started, id)
		ev := base
		ev.Kind, ev.ToolResult = agentcli.EventToolResult, toolResult(it)
		p.evs = append(p.evs, ev)
	}
}

// End implements driver.Parser. Success is exit status 0 with a
// turn.completed and no turn.failed.
func (p *parser) End(exit driver.Exit) driver.Outcome {
	if p.failed == nil && !p.completed {
		return driver.Outcome{}
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
		return driver.Outcome{Result: res}
	}
	o := driver.Outcome{Result: res, Failed: true}
	if p.failed != nil {
		res.Raw = p.failedRaw
		res.Text = ""
		o.Message = cmp.Or(*p.failed, p.lastError)
	} else {
		o.Message = cmp.Or(p.lastError, "CLI exited with a non-zero status after turn.completed")
	}
	o.APIStatus = apiStatusOf(o.Message)
	return o
}

// usageOf converts codex usage (counts already clamped) to agentcli's
// convention: codex's input_tokens includes the cached and cache-write
// tokens, which agentcli counts apart; its output_tokens already includes
// reasoning.
func (p *parser) usageOf(u *wireUsage) agentcli.Usage {
	return agentcli.Usage{
		InputTokens:      driver.SubCount(u.InputTokens, driver.AddCount(u.CachedInputTokens, u.CacheWriteInputTokens)),
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CachedInputTokens,
		CacheWriteTokens: u.CacheWriteInputTokens,
		ReasoningTokens:  u.ReasoningOutputTokens,
		Cumulative:       p.resumed,
	}
}

var (
	// The counter of "Reconnecting... 2/5 (unexpected status 502 ...)".
	retryCountRe = regexp.MustCompile(`^(\d+)/(\d+)`)
	// "unexpected status 401 Unauthorized", "last status: 429 Too Many Requests".
	statusRe = regexp.MustCompile(`\bstatus:? ([1-5]\d\d)\b`)
	// "model rerouted: gpt-a -> gpt-b (...)"
	rerouteRe = regexp.MustCompile(`model rerouted: \S+ -> ([^\s(]+)`)
)

// retryOf parses a top-level error event that announces a retry, or
// returns nil.
func retryOf(msg string) *agentcli.Retry {
	rest, ok := strings.CutPrefix(msg, "Reconnecting...")
	if !ok {
		return nil
	}
	r := &agentcli.Retry{}
	rest = strings.TrimSpace(rest)
	if m := retryCountRe.FindStringSubmatch(rest); m != nil {
		r.Attempt, _ = strconv.Atoi(m[1])
		r.MaxRetries, _ = strconv.Atoi(m[2])
		rest = strings.TrimSpace(rest[len(m[0]):])
	}
	// "(cause)" alone is unwrapped; "waiting for network (cause)" is kept.
	if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
		rest = rest[1 : len(rest)-1]
	}
	r.Message = rest
	r.Status = apiStatusOf(rest)
	return r
}

// apiStatusOf recovers the HTTP status behind a codex error message, or
// returns 0. codex (codex-rs/core client and CodexErr) words API errors as:
//
//	HTTP 400          the raw response body, e.g. {"error":{"type":"invalid_request_error",...}}
//	HTTP 500          "We're currently experiencing high demand, which may cause temporary errors."
//	other statuses    "unexpected status 401 Unauthorized: ...", "exceeded retry limit, last status: 429 ..."
func apiStatusOf(msg string) int {
	if n := statusOf(msg); n != 0 {
		return n
	}
	m := strings.TrimSpace(msg)
	switch {
	case strings.Contains(m, "currently experiencing high demand"), strings.EqualFold(m, "Internal server error"):
		return 500
	case strings.HasPrefix(m, "{"):
		var body struct {
			Error *struct {
				Type    any `json:"type"`
				Message any `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(m), &body) == nil && body.Error != nil && (body.Error.Type != nil || body.Error.Message != nil) {
			return 400
		}
	}
	return 0
}

// statusOf finds an HTTP status in a codex error message, or returns 0.
func statusOf(msg string) int {
	if m := statusRe.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func failedStatus(s string) bool { return s == "failed" || s == "declined" }

// fileChangeTool names a file_change: Write when every change adds a file,
// Delete when every change deletes one, Edit otherwise.
func fileChangeTool(cs []wireChange) string {
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

// text renders an MCP tool result: its text content blocks joined with
// newlines; else its structured content; else its raw content JSON.
func (r *mcpResult) text() string {
	if r.TextOK {
		return r.Text
	}
	return mcpRaw(r.Content, r.StructuredContent)
}

// mcpText renders an MCP tool result (see mcpResult.text) decoded with
// encoding/json.
func mcpText(r *wireMCPResult) string {
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
	return mcpRaw(r.Content, r.StructuredContent)
}

// mcpRaw renders an MCP tool result without text blocks: its structured
// content, else its raw content JSON.
func mcpRaw(content, structured []byte) string {
	if len(structured) > 0 && string(structured) != "null" {
		return string(structured)
	}
	if len(content) > 0 && string(content) != "null" && string(content) != "[]" {
		return string(content)
	}
	return ""
}

// The tool inputs agentcli builds for codex's items are written byte for
// byte as json.Marshal writes the equivalent Go values (maps sort their
// keys), without its reflection.

// commandInput is the tool input of a command: {"command": cmd}.
func commandInput(cmd string) json.RawMessage {
	b := make([]byte, 0, len(cmd)+jsonSlack+14)
	b = append(b, `{"command":`...)
	b = appendJSON(b, cmd)
	return append(b, '}')
}

// jsonSlack is the room the tool inputs leave for the escapes of each
// string they write (appendJSON), so that a string with a few escapes,
// such as a command's "2>&1" (\u0026), does not make them grow.
const jsonSlack = 16

// changesInput is the tool input of a file change: {"changes": [{"path",
// "kind"}...]}, plus "file_path" when it changes one file.
func changesInput(cs []wireChange) json.RawMessage {
	n := 16
	for _, c := range cs {
		n += len(c.Path) + len(c.Kind) + 2*jsonSlack + 21
	}
	if len(cs) == 1 {
		n += len(cs[0].Path) + jsonSlack + 14
	}
	b := append(make([]byte, 0, n), `{"changes":`...)
	if cs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"path":`...)
			b = appendJSON(b, c.Path)
			b = append(b, `,"kind":`...)
			b = appendJSON(b, c.Kind)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(cs) == 1 {
		b = append(b, `,"file_path":`...)
		b = appendJSON(b, cs[0].Path)
	}
	return append(b, '}')
}

// todosInput is the tool input of a plan update: {"todos": [{"content",
// "status"}...]}, status "completed" or "pending".
func todosInput(items []wireTodo) json.RawMessage {
	n := 12
	for _, t := range items {
		n += len(t.Text) + jsonSlack + 35
	}
	b := append(make([]byte, 0, n), `{"todos":[`...)
	for i, t := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"content":`...)
		b = appendJSON(b, t.Text)
		if t.Completed {
			b = append(b, `,"status":"completed"}`...)
		} else {
			b = append(b, `,"status":"pending"}`...)
		}
	}
	return append(b, "]}"...)
}

// appendJSON appends s as a JSON string, escaped as json.Marshal escapes
// it: the escapes \", \\, \b, \f, \n, \r and \t, \u00XX for the
// other control characters and for <, > and &, \ufffd for each byte of
// invalid UTF-8, and \u2028 and \u2029.
func appendJSON(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	run := 0 // start of the bytes not yet copied
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[run:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			run = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, s[run:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[run:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += n
			continue
		}
		i += n
		run = i
	}
	b = append(b, s[run:]...)
	return append(b, '"')
}

// jsonSafe marks the ASCII bytes json.Marshal writes as they are.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range "\"\\<>&" {
		t[c] = false
	}
	return t
}()

func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}
