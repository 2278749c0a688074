package agentclitest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicReq is the part of an Anthropic Messages request the server reads.
type anthropicReq struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Stream    bool            `json:"stream"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// anthropicBlock is one content block of a message.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// parseAnthropic fills the recorded fields of an Anthropic request. It
// tolerates any role, including "system" elements inside messages.
func parseAnthropic(rec *ModelRequest, body []byte) (anthropicReq, error) {
	var in anthropicReq
	if err := json.Unmarshal(body, &in); err != nil {
		return in, err
	}
	rec.Model = in.Model
	rec.Stream = in.Stream
	rec.System = textOf(in.System)
	for _, t := range in.Tools {
		rec.Tools = append(rec.Tools, t.Name)
	}
	for _, m := range in.Messages {
		if isNull(m.Content) {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			rec.Messages = append(rec.Messages, Message{Role: m.Role, Text: s})
			continue
		}
		var blocks []anthropicBlock
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			switch {
			case b.Type == "tool_result":
				rec.ToolResults = append(rec.ToolResults, ModelToolResult{CallID: b.ToolUseID, Output: textOf(b.Content)})
			case b.Type == "text" && b.Text != nil:
				rec.Messages = append(rec.Messages, Message{Role: m.Role, Text: *b.Text})
			}
		}
	}
	return in, nil
}

func anthropicError(status int, msg string) any {
	typ := "api_error"
	switch status {
	case 400, 413, 422:
		typ = "invalid_request_error"
	case 401:
		typ = "authentication_error"
	case 403:
		typ = "permission_error"
	case 404:
		typ = "not_found_error"
	case 429:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func (s *Server) handleAnthropicCount(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		return
	}
	rec := newRequest("anthropic", r, body)
	rec.Utility = true
	parseAnthropic(&rec, body) //nolint:errcheck // recorded as far as it parses
	s.take(rec)
	writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body)/4 + 1})
}

func (s *Server) handleAnthropic(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		return
	}
	rec := newRequest("anthropic", r, body)
	in, perr := parseAnthropic(&rec, body)
	if perr == nil && isModelProbe(in, rec) {
		// claude checks a model it does not know (set_model with a custom
		// name) with a one-token "Hi": a utility call.
		rec.Utility = true
		s.take(rec)
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "msg_agentclitest_probe", "type": "message", "role": "assistant", "model": in.Model,
			"content": []any{map[string]any{"type": "text", "text": "Hi"}}, "stop_reason": "max_tokens", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
		})
		return
	}
	t, seq := s.takeTurn(w, rec)
	if s.refuse(w, r, t, perr, anthropicError) {
		return
	}
	model := cmp.Or(in.Model, Model)
	u := t.usage()
	id := fmt.Sprintf("msg_agentclitest_%d", seq)
	call := t.call(seq, "toolu_agentclitest_", rec.Tools, shellArgs, "Bash")
	stop := "end_turn"
	if call != nil {
		stop = "tool_use"
	}
	usage := map[string]any{
		"input_tokens":                u.InputTokens,
		"output_tokens":               u.OutputTokens,
		"cache_creation_input_tokens": 0,
		"cache_read_input_tokens":     u.CachedTokens,
	}
	rep := anthropicReply{id: id, model: model, stop: stop, t: t, call: call, u: u}
	if !in.Stream {
		writeJSON(w, http.StatusOK, rep.message(usage))
		return
	}
	rep.stream(startSSE(w))
}

// anthropicReply is a scripted turn as a Messages API reply.
type anthropicReply struct {
	id, model, stop string
	t               Turn
	call            *ToolCall
	u               TurnUsage
}

// message is the reply as one JSON message.
func (a anthropicReply) message(usage map[string]any) map[string]any {
	var content []any
	if a.t.Thinking != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": a.t.Thinking, "signature": "agentclitest"})
	}
	if a.t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": a.t.Text})
	}
	if a.call != nil {
		content = append(content, map[string]any{"type": "tool_use", "id": a.call.ID, "name": a.call.Name, "input": a.call.Args})
	}
	if content == nil {
		content = []any{}
	}
	return map[string]any{
		"id": a.id, "type": "message", "role": "assistant", "model": a.model,
		"content": content, "stop_reason": a.stop, "stop_sequence": nil, "usage": usage,
	}
}

// stream sends the reply as the Messages API's server-sent events.
func (a anthropicReply) stream(ev *sse) {
	u := a.u
	send := func(name string, data map[string]any) {
		data["type"] = name
		ev.frame(name, data, "\n\n")
	}
	send("message_start", map[string]any{"message": map[string]any{
		"id": a.id, "type": "message", "role": "assistant", "model": a.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": u.InputTokens, "output_tokens": 1,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": u.CachedTokens,
		},
	}})
	send("ping", map[string]any{})
	idx := 0
	block := func(start map[string]any, deltas []map[string]any) {
		send("content_block_start", map[string]any{"index": idx, "content_block": start})
		for _, d := range deltas {
			send("content_block_delta", map[string]any{"index": idx, "delta": d})
		}
		send("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	if a.t.Thinking != "" {
		var ds []map[string]any
		for _, c := range chunks(a.t.Thinking) {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": "agentclitest"})
		block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds)
	}
	if a.t.Text != "" {
		var ds []map[string]any
		for _, c := range chunks(a.t.Text) {
			ds = append(ds, map[string]any{"type": "text_delta", "text": c})
		}
		block(map[string]any{"type": "text", "text": ""}, ds)
	}
	if call := a.call; call != nil {
		var ds []map[string]any
		for _, c := range chunks(argsJSON(call.Args)) {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": c})
		}
		block(map[string]any{"type": "tool_use", "id": call.ID, "name": call.Name, "input": map[string]any{}}, ds)
	}
	send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": a.stop, "stop_sequence": nil},
		"usage": map[string]any{
			"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": u.CachedTokens,
		},
	})
	send("message_stop", map[string]any{})
}

// isModelProbe reports claude's check of a model: max_tokens 1, not
// streamed, no tools, one user message "Hi".
func isModelProbe(in anthropicReq, rec ModelRequest) bool {
	return in.MaxTokens == 1 && !in.Stream && len(rec.Tools) == 0 && len(rec.Messages) == 1 &&
		rec.Messages[0].Role == "user" && rec.Messages[0].Text == "Hi"
}
