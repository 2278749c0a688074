package agentclitest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// TitleText is the answer the server gives to opencode's title-generation
// calls (Chat Completions requests whose system prompt mentions a "title
// generator"). Such calls are utility calls and consume no scripted turn.
const TitleText = "Agentclitest session"

// chatReq is the part of a Chat Completions request the server reads.
type chatReq struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func parseChat(rec *ModelRequest, body []byte) (chatReq, error) {
	var in chatReq
	if err := json.Unmarshal(body, &in); err != nil {
		return in, err
	}
	rec.Model = in.Model
	rec.Stream = in.Stream
	for _, t := range in.Tools {
		rec.Tools = append(rec.Tools, t.Function.Name)
	}
	var system []string
	for _, m := range in.Messages {
		if m.Role == "tool" {
			rec.ToolResults = append(rec.ToolResults, ModelToolResult{CallID: m.ToolCallID, Output: textOf(m.Content)})
			continue
		}
		if isNull(m.Content) {
			continue // assistant message with tool calls only
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			if m.Role == "user" {
				s = stripDatetime(s)
			}
			if m.Role == "system" {
				system = append(system, s)
			}
			rec.Messages = append(rec.Messages, Message{Role: m.Role, Text: s})
			continue
		}
		var parts []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		json.Unmarshal(m.Content, &parts) //nolint:errcheck // null content (tool calls only)
		for _, p := range parts {
			if p.Text != nil {
				if m.Role == "user" {
					*p.Text = stripDatetime(*p.Text)
				}
				if m.Role == "system" {
					system = append(system, *p.Text)
				}
				rec.Messages = append(rec.Messages, Message{Role: m.Role, Text: *p.Text})
			}
		}
	}
	rec.System = strings.Join(system, "\n")
	return in, nil
}

// stripDatetime removes the <current_datetime> element (and the blank
// line after it) that copilot puts before every user message, so that
// Message.Text is what the user wrote; ModelRequest.Body keeps it.
func stripDatetime(s string) string {
	const open, end = "<current_datetime>", "</current_datetime>\n\n"
	if !strings.HasPrefix(s, open) {
		return s
	}
	if i := strings.Index(s, end); i >= 0 && i < 100 {
		return s[i+len(end):]
	}
	return s
}

// isTitleCall reports whether a chat request is a session-title
// generation: opencode's, or Factory Droid's ("You are a helper that
// generates concise session titles", no tools).
func isTitleCall(rec ModelRequest) bool {
	s := strings.ToLower(rec.System)
	return strings.Contains(s, "title generator") || strings.Contains(s, "generate a title") ||
		strings.Contains(s, "generate a short title") ||
		strings.Contains(s, "generates concise session titles") && len(rec.Tools) == 0
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		return
	}
	rec := newRequest("chat", r, body)
	in, perr := parseChat(&rec, body)
	rec.Utility = perr == nil && isTitleCall(rec)
	t, seq := s.takeTurn(w, rec)
	if rec.Utility {
		t = Turn{Text: TitleText}
	}
	if s.refuse(w, r, t, perr, openaiError) {
		return
	}
	model := cmp.Or(in.Model, Model)
	u := t.usage()
	id := fmt.Sprintf("chatcmpl-agentclitest-%d", seq)
	created := time.Now().Unix()
	call := t.call(seq, "call_agentclitest_", rec.Tools, shellArgs, "bash")
	finish := "stop"
	if call != nil {
		finish = "tool_calls"
	}
	usage := map[string]any{
		"prompt_tokens":             u.InputTokens,
		"completion_tokens":         u.OutputTokens,
		"total_tokens":              u.InputTokens + u.OutputTokens,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedTokens},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
	}
	if !in.Stream {
		msg := map[string]any{"role": "assistant", "content": t.Text}
		if t.Thinking != "" {
			msg["reasoning_content"] = t.Thinking
		}
		if call != nil {
			msg["tool_calls"] = []any{map[string]any{"id": call.ID, "type": "function",
				"function": map[string]any{"name": call.Name, "arguments": argsJSON(call.Args)}}}
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	ev := startSSE(w)
	chunk := func(delta map[string]any, fin any) {
		ev.frame("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}},
		}, "\n\n")
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, c := range chunks(t.Thinking) {
		chunk(map[string]any{"reasoning_content": c}, nil)
	}
	for _, c := range chunks(t.Text) {
		chunk(map[string]any{"content": c}, nil)
	}
	if call != nil {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": call.ID, "type": "function",
			"function": map[string]any{"name": call.Name, "arguments": ""}}}}, nil)
		for _, c := range chunks(argsJSON(call.Args)) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
				"function": map[string]any{"arguments": c}}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	ev.frame("", map[string]any{
		"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
		"choices": []any{}, "usage": usage,
	}, "\n\n")
	ev.frame("", "[DONE]", "\n\n")
}
