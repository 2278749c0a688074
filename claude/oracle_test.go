package claude

// The oracle: the encoding/json parser agentcli shipped before the
// single-pass one (parse.go), kept as it was (identifiers renamed) so
// that FuzzOracle can check the new parser against it.
//
// Differences by design, outside the oracle's domain (lineShape) and each
// pinned by a test in parse_test.go:
//   - `"is_error": "true"` (a string) is an error (issue 7); the oracle
//     read it as success. Every boolean that decides success or failure
//     is read tolerantly.
//   - Token counts are clamped to be non-negative and costs to
//     [0, MaxFloat64] (issue 7); retry delays saturate.
//   - A line of nested arrays is not re-parsed level by level (issue 7:
//     2000 levels cost the oracle 9.5 s): an array inside the top-level
//     array of messages is a notice, like any element that is not an
//     object.
//   - A field of an unexpected type reads as absent; the oracle kept a
//     half-decoded value (a pointer to "" or a zero struct), and dropped a
//     whole content array when one element had an unexpected shape.
//   - Parts of a line no event keeps are not validated: a line that is
//     not valid JSON there still yields its events (json.Marshal(Event)
//     drops such a Raw). Tool inputs and the result line, which events
//     keep as JSON, are validated.
//   - Keys match exactly; the oracle matched them case-insensitively. A
//     repeated key: the last wins whole (the oracle merged objects).
//   - Notices carry jsonscan's syntax errors, not encoding/json's.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/benchdata"
)

// lineShape is the oracle's domain: what its wire structs decode without
// a type error, keys spelled exactly and given once.
var lineShape = func() *backendtest.Shape {
	B := backendtest.Obj
	s, n, c := backendtest.StrNull, backendtest.IntNull, backendtest.OrNull(backendtest.Count)
	block := &backendtest.Shape{Kinds: backendtest.KObj | backendtest.KNull}
	content := &backendtest.Shape{Kinds: backendtest.KStr | backendtest.KNull | backendtest.KArr, Elem: block}
	block.Fields = map[string]*backendtest.Shape{
		"type": s, "text": s, "thinking": s, "id": s, "name": s, "input": backendtest.Any,
		"tool_use_id": s, "content": content, "is_error": backendtest.OrNull(backendtest.Bool),
	}
	usage := backendtest.OrNull(B(map[string]*backendtest.Shape{
		"input_tokens": c, "output_tokens": c, "cache_creation_input_tokens": c, "cache_read_input_tokens": c,
		"output_tokens_details": backendtest.OrNull(B(map[string]*backendtest.Shape{"thinking_tokens": c})),
	}))
	fields := map[string]*backendtest.Shape{
		"type": s, "subtype": s, "session_id": s, "parent_tool_use_id": s,
		"message": backendtest.OrNull(B(map[string]*backendtest.Shape{"model": s, "content": content})),
		"event": backendtest.OrNull(B(map[string]*backendtest.Shape{
			"type":  s,
			"delta": backendtest.OrNull(B(map[string]*backendtest.Shape{"type": s, "text": s, "thinking": s})),
		})),
		"model": s, "claude_code_version": s, "is_api_error_message": backendtest.OrNull(backendtest.Bool),
		"error": backendtest.Any, "attempt": n, "max_retries": n, "retry_delay_ms": backendtest.OrNull(backendtest.Num),
		"error_status": n, "is_error": backendtest.OrNull(backendtest.Bool), "result": s, "num_turns": n,
		"total_cost_usd": backendtest.CostNull, "usage": usage,
		"modelUsage": backendtest.OrNull(B(nil)), "stop_reason": s, "terminal_reason": s, "api_error_status": n,
		"errors": backendtest.OrNull(backendtest.Arr(s)),
		"mcp_servers": backendtest.OrNull(&backendtest.Shape{Kinds: backendtest.KArr | backendtest.KObj, Elem: backendtest.OrNull(B(map[string]*backendtest.Shape{
			"name": s, "status": s,
		}))}),
	}
	limitShapes(fields, usage)
	elem := &backendtest.Shape{Kinds: backendtest.KAny &^ backendtest.KArr, Fields: fields}
	return &backendtest.Shape{Kinds: backendtest.KAny, Fields: fields, Elem: elem}
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
		f.Add(b, 0, "")
	}
	for _, n := range []string{"testdata/lines/stream-2.1.330.jsonl", mcpFailedLines} {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b, 1, "")
		}
	}
	limits, _ := filepath.Glob(filepath.Join("testdata", "limits", "*.jsonl"))
	for _, n := range limits {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b, 1, "")
		}
	}
	for i, l := range benchdata.Lines(benchdata.Claude, 64<<10) {
		if i < 40 {
			f.Add(l, 0, "")
		}
	}
	f.Add([]byte(`[{"type":"result","is_error":true},{"type":"x"},5,[1]]`), 1, "")
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"a"},null,{"text":"b","type":"text"}]}]}}`), 0, "")
	f.Add([]byte(`{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["a",null],"modelUsage":{"m":{},"m":{}},"usage":{"input_tokens":1,"output_tokens_details":{"thinking_tokens":2}}}`), 1, "x")
	f.Add([]byte(`{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":512.5,"error_status":529,"error":{"type":"overloaded"}}`), 0, "")
	f.Add([]byte(`{"type":"assistant","message":{"model":"<synthetic>","content":"API Error"},"session_id":"s","parent_tool_use_id":"t"}`), 0, "")
	// Escaped strings decoded in place on lines handed over for keeps
	// (ParseBorrowed): unknown events and blocks keep their line as
	// printed, a syntax error after such a string, a result line validated
	// as printed.
	for _, l := range []string{
		`{"type":"future","message":{"content":[{"type":"text","text":"a\nb \"q\""}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"future_block","text":"a\nb"},{"type":"text","text":"c\td"}]},"session_id":"s"}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"a\nb" "x"}]}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"a\nb","session_id":"s"}`,
	} {
		f.Add([]byte(l), 0, "")
	}
	f.Fuzz(func(t *testing.T, in []byte, code int, stderr string) {
		lines := backendtest.SplitLines(in)
		exit := driver.Exit{Code: code & 0xff, Stderr: stderr}
		all := backendtest.Parse(&spec, newParser(), lines, exit)
		if all.Result == nil && all.Err == nil {
			t.Fatal("End returned neither a result nor an error")
		}
		if err := backendtest.CheckEvents(all); err != nil {
			t.Fatal(err)
		}
		// Every way the kit hands lines to the parser: decoded ahead,
		// borrowed (Request.DropRaw), handed over for keeps.
		backendtest.CheckModes(t, &spec, func() driver.Parser { return newParser() }, lines, exit)
		var dom [][]byte
		for _, l := range lines {
			if inDomain(l) {
				dom = append(dom, l)
			}
		}
		want := backendtest.Parse(&spec, newOracleParser(), dom, exit)
		got := backendtest.Parse(&spec, newParser(), dom, exit)
		if d := backendtest.DiffRuns(want, got); d != "" {
			t.Fatalf("the new parser differs from the oracle on\n%s\n%s", bytes.Join(dom, []byte("\n")), d)
		}
	})
}

// Wire structs: the subset of Claude Code's SDKMessage union that agentcli
// reads. Unknown fields are ignored and unknown line types are kept raw.
// Nothing depends on key order.

type oWireLine struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Message         *oWireMessage   `json:"message"`
	Event           *oWireStreamEvt `json:"event"`
	Model           string          `json:"model"`
	Version         string          `json:"claude_code_version"`
	MCPServers      json.RawMessage `json:"mcp_servers"`
	IsAPIErrorMsg   bool            `json:"is_api_error_message"`
	Error           json.RawMessage `json:"error"`

	// system/api_retry
	Attempt      int     `json:"attempt"`
	MaxRetries   int     `json:"max_retries"`
	RetryDelayMS float64 `json:"retry_delay_ms"`
	ErrorStatus  *int    `json:"error_status"`

	// result
	IsError        bool                       `json:"is_error"`
	Result         *string                    `json:"result"`
	NumTurns       int                        `json:"num_turns"`
	TotalCostUSD   *float64                   `json:"total_cost_usd"`
	Usage          *oWireUsage                `json:"usage"`
	ModelUsage     map[string]json.RawMessage `json:"modelUsage"`
	StopReason     *string                    `json:"stop_reason"`
	TerminalReason string                     `json:"terminal_reason"`
	APIErrorStatus *int                       `json:"api_error_status"`
	Errors         []string                   `json:"errors"`
}

type oWireMessage struct {
	Model   string       `json:"model"`
	Content oWireContent `json:"content"`
}

// wireContent is a message's content: a string or an array of blocks.
type oWireContent []oWireBlock

// UnmarshalJSON accepts both shapes and never fails: content of a shape
// from the future is dropped rather than losing the whole line.
func (c *oWireContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) == nil {
			*c = oWireContent{{Type: "text", Text: s}}
		}
		return nil
	}
	var blocks []oWireBlock
	if json.Unmarshal(b, &blocks) == nil {
		*c = blocks
	}
	return nil
}

type oWireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   *oWireContent   `json:"content"`
	IsError   bool            `json:"is_error"`
}

type oWireStreamEvt struct {
	Type  string `json:"type"`
	Delta *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
}

type oWireUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokensDetails      *struct {
		ThinkingTokens int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

// parser turns Claude Code output — one json result object, a json array of
// messages (--verbose), or stream-json lines — into events.
type oracleParser struct {
	sessionID string
	model     string
	result    *oWireLine
	resultRaw json.RawMessage
	lastText  string
	lim       oracleLimits
	// mcpSeen holds the MCP servers reported as not started.
	mcpSeen map[string]bool
}

func newOracleParser() *oracleParser { return &oracleParser{} }

// mcpNotices returns a notice for each server of an init line's
// mcp_servers that is "failed" or "needs-auth", once per run.
func (p *oracleParser) mcpNotices(list json.RawMessage, base agentcli.Event) []agentcli.Event {
	return backendtest.OracleMCPNotices(list, base, &p.mcpSeen, "failed", "needs-auth")
}

// Line implements driver.Parser.
func (p *oracleParser) Line(line []byte) []agentcli.Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] == '[' { // `--output-format json --verbose`: an array of messages
		var items []json.RawMessage
		if err := json.Unmarshal(line, &items); err != nil {
			return []agentcli.Event{driver.Notice(Name, line, err)}
		}
		var evs []agentcli.Event
		for _, it := range items {
			evs = append(evs, p.Line(it)...)
		}
		return evs
	}
	var w oWireLine
	if n := driver.DecodeObject(Name, line, &w); n != nil {
		return n
	}
	raw := json.RawMessage(line)
	if w.SessionID != "" {
		p.sessionID = w.SessionID
	}
	sub := ""
	if w.ParentToolUseID != nil {
		sub = *w.ParentToolUseID
	}
	base := agentcli.Event{SessionID: w.SessionID, Subagent: sub, Raw: raw}
	levs, own := p.lim.line(&w, line, base, p.model)
	if own {
		return levs
	}
	switch w.Type {
	case "system":
		switch w.Subtype {
		case "init":
			p.model = w.Model
			ev := base
			ev.Kind, ev.Model, ev.Version = agentcli.EventInit, w.Model, w.Version
			return append([]agentcli.Event{ev}, p.mcpNotices(w.MCPServers, base)...)
		case "api_retry":
			ev := base
			ev.Kind = agentcli.EventRetry
			ev.Retry = &agentcli.Retry{
				Attempt:    w.Attempt,
				MaxRetries: w.MaxRetries,
				Delay:      time.Duration(w.RetryDelayMS * float64(time.Millisecond)),
				Message:    driver.RawString(w.Error),
			}
			if w.ErrorStatus != nil {
				ev.Retry.Status = *w.ErrorStatus
			}
			return []agentcli.Event{ev}
		}
	case "assistant":
		if w.Message == nil {
			break
		}
		if w.IsAPIErrorMsg || w.Message.Model == "<synthetic>" {
			// The CLI's own rendering of an API error; the result line
			// carries the error. Surface the text as a notice, not as
			// model output.
			ev := base
			ev.Kind = agentcli.EventNotice
			ev.Text = oJoinText(w.Message.Content)
			return []agentcli.Event{ev}
		}
		var evs []agentcli.Event
		for _, b := range w.Message.Content {
			ev := base
			switch b.Type {
			case "text":
				ev.Kind, ev.Text = agentcli.EventText, b.Text
				if sub == "" {
					p.lastText = b.Text
				}
			case "thinking":
				ev.Kind, ev.Text = agentcli.EventThinking, b.Thinking
			case "tool_use", "server_tool_use":
				ev.Kind = agentcli.EventToolUse
				ev.Tool = tools.Use(b.ID, b.Name, b.Input)
			default: // redacted_thinking, web_search_tool_result, future blocks
				ev.Kind = agentcli.EventUnknown
			}
			evs = append(evs, ev)
		}
		return evs
	case "user":
		if w.Message == nil {
			break
		}
		var evs []agentcli.Event
		for _, b := range w.Message.Content {
			if b.Type != "tool_result" {
				continue
			}
			ev := base
			ev.Kind = agentcli.EventToolResult
			out := ""
			if b.Content != nil {
				out = oJoinText(*b.Content)
			}
			ev.ToolResult = &agentcli.ToolResult{ID: b.ToolUseID, Output: out, IsError: b.IsError}
			evs = append(evs, ev)
		}
		if len(evs) > 0 {
			return evs
		}
	case "stream_event":
		if w.Event == nil || w.Event.Type != "content_block_delta" || w.Event.Delta == nil {
			return nil // message_start, input_json_delta, …: nothing to normalize
		}
		ev := base
		switch w.Event.Delta.Type {
		case "text_delta":
			ev.Kind, ev.Text = agentcli.EventTextDelta, w.Event.Delta.Text
		case "thinking_delta":
			ev.Kind, ev.Text, ev.Delta = agentcli.EventThinking, w.Event.Delta.Thinking, true
		default:
			return nil
		}
		return []agentcli.Event{ev}
	case "result":
		p.result = &w
		p.resultRaw = raw
		if w.Usage != nil {
			ev := base
			ev.Kind = agentcli.EventUsage
			u := oUsageOf(w.Usage)
			ev.Usage = &u
			return append([]agentcli.Event{ev}, levs...)
		}
		return levs
	}
	ev := base
	ev.Kind = agentcli.EventUnknown
	return []agentcli.Event{ev}
}

// End implements driver.Parser. Success is exit status 0 and a result with
// is_error false; anything else is an error.
// End implements driver.Parser: the oracle's end, its result and error
// read back into an Outcome.
func (p *oracleParser) End(exit driver.Exit) driver.Outcome {
	return p.lim.outcome(backendtest.OutcomeOf(p.end(exit)))
}

func (p *oracleParser) end(exit driver.Exit) (*agentcli.Result, error) {
	w := p.result
	if w == nil {
		return nil, nil
	}
	res := &agentcli.Result{
		SessionID:      cmp.Or(w.SessionID, p.sessionID),
		IsError:        w.IsError,
		CostUSD:        w.TotalCostUSD,
		Turns:          w.NumTurns,
		Model:          p.model,
		Subtype:        w.Subtype,
		TerminalReason: w.TerminalReason,
		Raw:            p.resultRaw,
	}
	if w.Result != nil {
		res.Text = *w.Result
	} else if !w.IsError {
		res.Text = p.lastText
	}
	if w.StopReason != nil {
		res.StopReason = *w.StopReason
	}
	if w.Usage != nil {
		res.Usage = oUsageOf(w.Usage)
	}
	if len(w.ModelUsage) == 1 {
		for m := range w.ModelUsage {
			res.Model = m
		}
	}
	if !w.IsError && exit.Code == 0 {
		return res, nil
	}
	re := &agentcli.ResultError{
		TerminalReason: w.TerminalReason,
		ExitCode:       exit.Code,
		Result:         res,
	}
	if w.Subtype != "success" {
		// An API error arrives as subtype "success" with is_error set;
		// the subtype says nothing about the error then.
		re.Subtype = w.Subtype
	}
	if w.APIErrorStatus != nil {
		re.APIStatus = *w.APIErrorStatus
	}
	switch {
	case len(w.Errors) > 0:
		re.Message = strings.Join(w.Errors, "; ")
	case w.IsError && w.Result != nil:
		re.Message = *w.Result
	case !w.IsError:
		re.Message = "CLI exited with a non-zero status after a successful result"
	}
	return res, re
}

// usageOf converts Anthropic usage, which already follows agentcli's
// convention: input_tokens excludes cache reads and writes, and
// output_tokens includes thinking.
func oUsageOf(u *oWireUsage) agentcli.Usage {
	r := agentcli.Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
	if u.OutputTokensDetails != nil {
		r.ReasoningTokens = u.OutputTokensDetails.ThinkingTokens
	}
	return r
}

func oJoinText(c oWireContent) string {
	var b strings.Builder
	for _, blk := range c {
		if blk.Type == "text" {
			b.WriteString(blk.Text)
		}
	}
	return b.String()
}
