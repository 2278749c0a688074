package claude

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/runner"
)

// Wire structs: the subset of Claude Code's SDKMessage union that agentcli
// reads. Unknown fields are ignored and unknown line types are kept raw.
// Nothing depends on key order.

type wireLine struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Message         *wireMessage    `json:"message"`
	Event           *wireStreamEvt  `json:"event"`
	Model           string          `json:"model"`
	Version         string          `json:"claude_code_version"`
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
	Usage          *wireUsage                 `json:"usage"`
	ModelUsage     map[string]json.RawMessage `json:"modelUsage"`
	StopReason     *string                    `json:"stop_reason"`
	TerminalReason string                     `json:"terminal_reason"`
	APIErrorStatus *int                       `json:"api_error_status"`
	Errors         []string                   `json:"errors"`
	// With --json-schema: the answer's value.
	StructuredOutput json.RawMessage `json:"structured_output"`
}

type wireMessage struct {
	Model   string      `json:"model"`
	Content wireContent `json:"content"`
}

// wireContent is a message's content: a string or an array of blocks.
type wireContent []wireBlock

// UnmarshalJSON accepts both shapes and never fails: content of a shape
// from the future is dropped rather than losing the whole line.
func (c *wireContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) == nil {
			*c = wireContent{{Type: "text", Text: s}}
		}
		return nil
	}
	var blocks []wireBlock
	if json.Unmarshal(b, &blocks) == nil {
		*c = blocks
	}
	return nil
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   *wireContent    `json:"content"`
	IsError   bool            `json:"is_error"`
}

type wireStreamEvt struct {
	Type  string `json:"type"`
	Delta *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
}

type wireUsage struct {
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
type parser struct {
	sessionID string
	model     string
	result    *wireLine
	resultRaw json.RawMessage
	lastText  string
}

func newParser() *parser { return &parser{} }

// Line implements runner.Parser.
func (p *parser) Line(line []byte) []agentcli.Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] == '[' { // `--output-format json --verbose`: an array of messages
		var items []json.RawMessage
		if err := json.Unmarshal(line, &items); err != nil {
			return []agentcli.Event{runner.Notice(Name, line, err)}
		}
		var evs []agentcli.Event
		for _, it := range items {
			evs = append(evs, p.Line(it)...)
		}
		return evs
	}
	var w wireLine
	if n := runner.DecodeObject(Name, line, &w); n != nil {
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
	switch w.Type {
	case "system":
		switch w.Subtype {
		case "init":
			p.model = w.Model
			ev := base
			ev.Kind, ev.Model, ev.Version = agentcli.EventInit, w.Model, w.Version
			return []agentcli.Event{ev}
		case "api_retry":
			ev := base
			ev.Kind = agentcli.EventRetry
			ev.Retry = &agentcli.Retry{
				Attempt:    w.Attempt,
				MaxRetries: w.MaxRetries,
				Delay:      time.Duration(w.RetryDelayMS * float64(time.Millisecond)),
				Message:    runner.RawString(w.Error),
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
			ev.Text = joinText(w.Message.Content)
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
				out = joinText(*b.Content)
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
			u := usageOf(w.Usage)
			ev.Usage = &u
			return []agentcli.Event{ev}
		}
		return nil
	}
	ev := base
	ev.Kind = agentcli.EventUnknown
	return []agentcli.Event{ev}
}

// End implements runner.Parser. Success is exit status 0 and a result with
// is_error false; anything else is an error.
func (p *parser) End(exit runner.Exit) (*agentcli.Result, error) {
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
	if len(w.StructuredOutput) > 0 && string(w.StructuredOutput) != "null" {
		res.StructuredOutput = w.StructuredOutput
	}
	if w.Usage != nil {
		res.Usage = usageOf(w.Usage)
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
func usageOf(u *wireUsage) agentcli.Usage {
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

func joinText(c wireContent) string {
	var b strings.Builder
	for _, blk := range c {
		if blk.Type == "text" {
			b.WriteString(blk.Text)
		}
	}
	return b.String()
}
