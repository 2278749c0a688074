package agentclitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// post sends a JSON body and returns the response; the caller closes it.
func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string
	data string
}

// readSSE parses an event stream with "\n\n" or "\r\n\r\n" frame separators.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case line == "":
			if cur.data != "" || cur.name != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data += strings.TrimPrefix(line, "data: ")
		default:
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur.data != "" {
		t.Errorf("unterminated SSE frame %q", cur.data)
	}
	return out
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad JSON %q: %v", s, err)
	}
	return m
}

func TestAnthropicStream(t *testing.T) {
	s := NewServer(Turn{Thinking: "hmm, let me think", Text: "héllo wörld", Shell: "echo hi", Usage: &TurnUsage{InputTokens: 7, OutputTokens: 3}})
	defer s.Close()
	resp := post(t, s.URL()+"/v1/messages?beta=true", map[string]any{
		"model":  "claude-x",
		"stream": true,
		"system": []any{map[string]any{"type": "text", "text": "sys one"}, map[string]any{"type": "text", "text": "sys two"}},
		"tools":  []any{map[string]any{"name": "Bash"}, map[string]any{"name": "Read"}},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "reminder"},
				map[string]any{"type": "text", "text": "the prompt"},
			}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "out"}}},
			map[string]any{"role": "system", "content": "env block"},
		},
	})
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readSSE(t, resp.Body)
	var names []string
	var text, thinking, args, stop, toolName string
	var outTokens float64
	for _, e := range events {
		m := decode(t, e.data)
		if m["type"] != e.name {
			t.Errorf("event %q has data type %v", e.name, m["type"])
		}
		names = append(names, e.name)
		switch e.name {
		case "content_block_start":
			cb := m["content_block"].(map[string]any)
			if cb["type"] == "tool_use" {
				toolName = cb["name"].(string)
			}
		case "content_block_delta":
			d := m["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				text += d["text"].(string)
			case "thinking_delta":
				thinking += d["thinking"].(string)
			case "input_json_delta":
				args += d["partial_json"].(string)
			}
		case "message_delta":
			stop = m["delta"].(map[string]any)["stop_reason"].(string)
			outTokens = m["usage"].(map[string]any)["output_tokens"].(float64)
		}
	}
	if names[0] != "message_start" || names[len(names)-1] != "message_stop" || names[len(names)-2] != "message_delta" {
		t.Errorf("event order %v", names)
	}
	if text != "héllo wörld" || thinking != "hmm, let me think" {
		t.Errorf("text %q thinking %q", text, thinking)
	}
	if toolName != "Bash" || stop != "tool_use" || outTokens != 3 {
		t.Errorf("tool %q stop %q output tokens %v", toolName, stop, outTokens)
	}
	if a := decode(t, args); a["command"] != "echo hi" || a["description"] == "" {
		t.Errorf("tool args %v", a)
	}

	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r := reqs[0]
	if r.API != "anthropic" || r.Path != "/v1/messages" || r.Query != "beta=true" || r.Model != "claude-x" || !r.Stream || r.Utility {
		t.Errorf("recorded %+v", r)
	}
	if r.System != "sys one\nsys two" {
		t.Errorf("system %q", r.System)
	}
	want := []Message{{"user", "reminder"}, {"user", "the prompt"}, {"system", "env block"}}
	if fmt.Sprint(r.Messages) != fmt.Sprint(want) {
		t.Errorf("messages %v, want %v", r.Messages, want)
	}
	if len(r.ToolResults) != 1 || r.ToolResults[0] != (ModelToolResult{"toolu_1", "out"}) {
		t.Errorf("tool results %v", r.ToolResults)
	}
	if strings.Join(r.Tools, ",") != "Bash,Read" || r.LastUserText() != "the prompt" {
		t.Errorf("tools %v last user %q", r.Tools, r.LastUserText())
	}
}

func TestAnthropicNonStreamAndUtility(t *testing.T) {
	s := NewServer(Turn{Text: "plain", Tool: &ToolCall{Name: "Read", Args: map[string]any{"file_path": "/x"}}})
	defer s.Close()
	// count_tokens is a utility call and consumes no turn.
	resp := post(t, s.URL()+"/v1/messages/count_tokens", map[string]any{"model": "m", "messages": []any{}})
	if n := decode(t, readAll(t, resp))["input_tokens"]; resp.StatusCode != 200 || n == nil {
		t.Fatalf("count_tokens: %d %v", resp.StatusCode, n)
	}
	resp = post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	m := decode(t, readAll(t, resp))
	if m["type"] != "message" || m["stop_reason"] != "tool_use" {
		t.Fatalf("message %v", m)
	}
	content := m["content"].([]any)
	if len(content) != 2 || content[0].(map[string]any)["text"] != "plain" {
		t.Fatalf("content %v", content)
	}
	tu := content[1].(map[string]any)
	if tu["name"] != "Read" || tu["id"] == "" || tu["input"].(map[string]any)["file_path"] != "/x" {
		t.Errorf("tool_use %v", tu)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || !reqs[0].Utility || reqs[1].Utility || reqs[1].Messages[0] != (Message{"user", "hi"}) {
		t.Errorf("requests %+v", reqs)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestResponsesStream(t *testing.T) {
	s := NewServer(Turn{Thinking: "plan", Text: "answer text", Shell: "ls -la"})
	defer s.Close()
	resp := post(t, s.URL()+"/v1/responses", map[string]any{
		"model":        "gpt-x",
		"instructions": "base instructions",
		"stream":       true,
		"tools":        []any{map[string]any{"type": "function", "name": "exec_command"}, map[string]any{"type": "web_search"}},
		"input": []any{
			map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "dev msg"}}},
			map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "do it"}}},
			map[string]any{"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
			map[string]any{"type": "function_call_output", "call_id": "c1", "output": "result text"},
		},
	})
	defer resp.Body.Close()
	events := readSSE(t, resp.Body)
	var text, reasoning string
	var doneItems []map[string]any
	var completed map[string]any
	for i, e := range events {
		m := decode(t, e.data)
		if m["type"] != e.name || m["sequence_number"] != float64(i) {
			t.Errorf("event %d %q: data %v", i, e.name, m)
		}
		switch e.name {
		case "response.output_text.delta":
			text += m["delta"].(string)
		case "response.reasoning_summary_text.delta":
			reasoning += m["delta"].(string)
		case "response.output_item.done":
			doneItems = append(doneItems, m["item"].(map[string]any))
		case "response.completed":
			completed = m["response"].(map[string]any)
		}
	}
	if events[0].name != "response.created" || events[len(events)-1].name != "response.completed" {
		t.Errorf("first %q last %q", events[0].name, events[len(events)-1].name)
	}
	if text != "answer text" || reasoning != "plan" {
		t.Errorf("text %q reasoning %q", text, reasoning)
	}
	if len(doneItems) != 3 || doneItems[0]["type"] != "reasoning" || doneItems[1]["type"] != "message" || doneItems[2]["type"] != "function_call" {
		t.Fatalf("items %v", doneItems)
	}
	fc := doneItems[2]
	if fc["name"] != "exec_command" || fc["call_id"] == "" || decode(t, fc["arguments"].(string))["cmd"] != "ls -la" {
		t.Errorf("function call %v", fc)
	}
	if completed["id"] == "" || completed["usage"].(map[string]any)["input_tokens"] != float64(10) {
		t.Errorf("completed %v", completed)
	}
	r := s.Requests()[0]
	if r.API != "responses" || r.System != "base instructions" || r.Model != "gpt-x" {
		t.Errorf("recorded %+v", r)
	}
	want := []Message{{"developer", "dev msg"}, {"user", "do it"}}
	if fmt.Sprint(r.Messages) != fmt.Sprint(want) {
		t.Errorf("messages %v", r.Messages)
	}
	if len(r.ToolResults) != 1 || r.ToolResults[0] != (ModelToolResult{"c1", "result text"}) {
		t.Errorf("tool results %v", r.ToolResults)
	}
	if strings.Join(r.Tools, ",") != "exec_command,web_search" {
		t.Errorf("tools %v", r.Tools)
	}
}

func TestGemini(t *testing.T) {
	s := NewServer(Turn{Thinking: "thought", Text: "gemini says hi"}, Turn{Shell: "pwd"})
	defer s.Close()
	base := s.URL() + "/v1beta/models/"

	// The router call: schema-valid JSON, utility, no turn consumed.
	resp := post(t, base+"gemini-router:generateContent", map[string]any{
		"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "route me"}}}},
		"generationConfig": map[string]any{"responseMimeType": "application/json", "responseJsonSchema": map[string]any{
			"type": "OBJECT", "required": []any{"complexity_reasoning", "complexity_score"},
			"properties": map[string]any{
				"complexity_reasoning": map[string]any{"type": "STRING"},
				"complexity_score":     map[string]any{"type": "INTEGER"},
			},
		}},
	})
	gr := decode(t, readAll(t, resp))
	part := gr["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	var routed struct {
		Reasoning string `json:"complexity_reasoning"`
		Score     *int   `json:"complexity_score"`
	}
	if err := json.Unmarshal([]byte(part["text"].(string)), &routed); err != nil || routed.Score == nil || routed.Reasoning == "" {
		t.Fatalf("router answer %q: %v", part["text"], err)
	}

	resp = post(t, base+"gemini-pro:countTokens", map[string]any{"contents": []any{}})
	if n := decode(t, readAll(t, resp))["totalTokens"]; n == nil {
		t.Fatal("countTokens: no totalTokens")
	}

	resp = post(t, base+"gemini-pro:streamGenerateContent?alt=sse", map[string]any{
		"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": "be brief"}}},
		"tools":             []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "run_shell_command"}}}},
		"contents": []any{
			map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hello"}}},
			map[string]any{"role": "model", "parts": []any{map[string]any{"text": "earlier"}, map[string]any{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]any{}}}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"id": "fc1", "name": "run_shell_command", "response": map[string]any{"output": "shell out"}}}}},
		},
	})
	raw := readAll(t, resp)
	if !strings.HasSuffix(raw, "\r\n\r\n") || strings.Contains(raw, "event:") {
		t.Errorf("gemini frames not \\r\\n\\r\\n-terminated data lines: %q", raw)
	}
	var text, thought string
	var finish any
	for _, e := range readSSE(t, strings.NewReader(raw)) {
		m := decode(t, e.data)
		c := m["candidates"].([]any)[0].(map[string]any)
		finish = c["finishReason"]
		for _, p := range c["content"].(map[string]any)["parts"].([]any) {
			p := p.(map[string]any)
			if p["thought"] == true {
				thought += p["text"].(string)
			} else if s, ok := p["text"].(string); ok {
				text += s
			}
		}
		if m["modelVersion"] != "gemini-pro" || m["usageMetadata"] == nil {
			t.Errorf("frame %v", m)
		}
	}
	if text != "gemini says hi" || thought != "thought" || finish != "STOP" {
		t.Errorf("text %q thought %q finish %v", text, thought, finish)
	}

	// Non-streaming generateContent without a schema consumes the next turn.
	resp = post(t, base+"gemini-pro:generateContent", map[string]any{"contents": []any{}})
	gr = decode(t, readAll(t, resp))
	fc := gr["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionCall"].(map[string]any)
	if fc["name"] != "run_shell_command" || fc["args"].(map[string]any)["command"] != "pwd" {
		t.Errorf("function call %v", fc)
	}

	reqs := s.Requests()
	if len(reqs) != 4 || !reqs[0].Utility || !reqs[1].Utility || reqs[2].Utility || reqs[3].Utility {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[2]
	if r.API != "gemini" || r.Model != "gemini-pro" || !r.Stream || r.System != "be brief" || r.Query != "alt=sse" {
		t.Errorf("recorded %+v", r)
	}
	want := []Message{{"user", "hello"}, {"assistant", "earlier"}}
	if fmt.Sprint(r.Messages) != fmt.Sprint(want) || len(r.ToolResults) != 1 || r.ToolResults[0] != (ModelToolResult{"fc1", "shell out"}) {
		t.Errorf("messages %v results %v", r.Messages, r.ToolResults)
	}
}

func TestChat(t *testing.T) {
	s := NewServer(Turn{Thinking: "reason", Text: "chat answer", Shell: "whoami"})
	defer s.Close()
	url := s.URL() + "/v1/chat/completions"
	// Title generation is answered automatically.
	resp := post(t, url, map[string]any{"model": "m", "stream": true, "messages": []any{
		map[string]any{"role": "system", "content": "You are a title generator. You output ONLY a thread title."},
		map[string]any{"role": "user", "content": "make a title"},
	}})
	var title string
	for _, e := range readSSE(t, resp.Body) {
		if e.data == "[DONE]" {
			continue
		}
		for _, c := range decode(t, e.data)["choices"].([]any) {
			if s, ok := c.(map[string]any)["delta"].(map[string]any)["content"].(string); ok {
				title += s
			}
		}
	}
	resp.Body.Close()
	if title != TitleText {
		t.Errorf("title %q", title)
	}

	resp = post(t, url, map[string]any{"model": "m", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "bash"}}},
		"messages": []any{
			map[string]any{"role": "system", "content": "sys"},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "q"}}},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c9", "type": "function", "function": map[string]any{"name": "bash", "arguments": "{}"}}}},
			map[string]any{"role": "tool", "tool_call_id": "c9", "content": "tool out"},
		}})
	defer resp.Body.Close()
	events := readSSE(t, resp.Body)
	if events[len(events)-1].data != "[DONE]" {
		t.Fatalf("last event %q", events[len(events)-1].data)
	}
	var text, reasoning, args, name, finish string
	var usage map[string]any
	for _, e := range events[:len(events)-1] {
		m := decode(t, e.data)
		if m["object"] != "chat.completion.chunk" {
			t.Errorf("object %v", m["object"])
		}
		if u, ok := m["usage"].(map[string]any); ok {
			usage = u
		}
		for _, c := range m["choices"].([]any) {
			c := c.(map[string]any)
			if f, ok := c["finish_reason"].(string); ok {
				finish = f
			}
			d := c["delta"].(map[string]any)
			if s, ok := d["content"].(string); ok {
				text += s
			}
			if s, ok := d["reasoning_content"].(string); ok {
				reasoning += s
			}
			if tcs, ok := d["tool_calls"].([]any); ok {
				f := tcs[0].(map[string]any)["function"].(map[string]any)
				if n, ok := f["name"].(string); ok {
					name = n
				}
				args += f["arguments"].(string)
			}
		}
	}
	if text != "chat answer" || reasoning != "reason" || name != "bash" || finish != "tool_calls" {
		t.Errorf("text %q reasoning %q tool %q finish %q", text, reasoning, name, finish)
	}
	if decode(t, args)["command"] != "whoami" || usage["total_tokens"] != float64(15) {
		t.Errorf("args %q usage %v", args, usage)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || !reqs[0].Utility || reqs[1].Utility {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[1]
	if r.API != "chat" || r.System != "sys" || fmt.Sprint(r.Messages) != fmt.Sprint([]Message{{"system", "sys"}, {"user", "q"}}) {
		t.Errorf("recorded %+v", r)
	}
	if len(r.ToolResults) != 1 || r.ToolResults[0] != (ModelToolResult{"c9", "tool out"}) {
		t.Errorf("tool results %v", r.ToolResults)
	}
}

func TestErrorStatus(t *testing.T) {
	cases := []struct {
		path string
		body any
		want string // a key path that must be in the error JSON
	}{
		{"/v1/messages", map[string]any{"stream": true}, `"type":"error"`},
		{"/v1/responses", map[string]any{"stream": true}, `"error":{`},
		{"/v1beta/models/g:streamGenerateContent?alt=sse", map[string]any{}, `"status":"INVALID_ARGUMENT"`},
		{"/v1/chat/completions", map[string]any{"stream": true}, `"error":{`},
	}
	for _, c := range cases {
		s := NewServer(Turn{Status: 400, Message: "nope"}, Turn{Status: 503, Body: "raw body"}, Turn{Text: "recovered"})
		resp := post(t, s.URL()+c.path, c.body)
		body := readAll(t, resp)
		if resp.StatusCode != 400 || !strings.Contains(body, `"nope"`) || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, body)
		}
		resp = post(t, s.URL()+c.path, c.body)
		if body := readAll(t, resp); resp.StatusCode != 503 || body != "raw body" {
			t.Errorf("%s: %d %q", c.path, resp.StatusCode, body)
		}
		resp = post(t, s.URL()+c.path, c.body)
		if body := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(body, "rec") {
			t.Errorf("%s: %d %q", c.path, resp.StatusCode, body)
		}
		s.Close()
	}
}

func TestRepeatAndDefault(t *testing.T) {
	s := NewServer(Turn{Status: 429, Repeat: 2}, Turn{Text: "after"})
	defer s.Close()
	var got []string
	for range 5 {
		resp := post(t, s.URL()+"/v1/messages", map[string]any{})
		body := readAll(t, resp)
		if resp.StatusCode != 200 {
			got = append(got, fmt.Sprint(resp.StatusCode))
			continue
		}
		got = append(got, decode(t, body)["content"].([]any)[0].(map[string]any)["text"].(string))
	}
	want := []string{"429", "429", "429", "after", DefaultText}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	s.Push(Turn{Status: 500, Repeat: -1})
	for range 3 {
		if resp := post(t, s.URL()+"/v1/messages", map[string]any{}); resp.StatusCode != 500 {
			t.Errorf("status %d, want 500 forever", resp.StatusCode)
		}
	}
	if s.Remaining() != 1 {
		t.Errorf("Remaining %d", s.Remaining())
	}
}

func TestStallReleasedByCancel(t *testing.T) {
	s := NewServer(Turn{Stall: true}, Turn{Text: "next"})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/v1/chat/completions", strings.NewReader(`{"stream":true}`))
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	select {
	case err := <-errc:
		t.Fatalf("stalled request returned early: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("stalled request succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not release the stalled request")
	}
	// The server still works and the stall consumed exactly one turn.
	resp := post(t, s.URL()+"/v1/chat/completions", map[string]any{})
	if body := readAll(t, resp); !strings.Contains(body, `"next"`) {
		t.Errorf("after stall: %s", body)
	}
}

// A Stall turn left over from a run that never reached the model cannot
// hang the next run silently: the stall runs out and the request fails with
// a message that says what happened.
func TestStallRunsOut(t *testing.T) {
	s := NewServer()
	defer s.Close()
	paths := []string{"/v1/messages", "/v1/responses", "/v1/chat/completions", "/v1beta/models/m:streamGenerateContent"}
	for range paths {
		s.Push(Turn{Stall: true, StallFor: 50 * time.Millisecond})
	}
	for _, path := range paths {
		resp := post(t, s.URL()+path, map[string]any{"stream": true})
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Stall turn") || !strings.Contains(body, "earlier run") {
			t.Errorf("%s: status %d body %s", path, resp.StatusCode, body)
		}
	}
}

func TestCloseReleasesStall(t *testing.T) {
	s := NewServer(Turn{Stall: true})
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a stalled request")
	}
	<-errc
	s.Close() // idempotent
	if _, err := http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(`{}`)); err == nil {
		t.Error("server still answers after Close")
	}
}

func TestLargePromptRecorded(t *testing.T) {
	s := NewServer()
	defer s.Close()
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	big = "--" + big[2:]
	resp := post(t, s.URL()+"/v1/messages", map[string]any{"stream": true, "messages": []any{map[string]any{"role": "user", "content": big}}})
	readAll(t, resp)
	r := s.Requests()[0]
	if r.LastUserText() != big {
		t.Errorf("recorded prompt of %d bytes, want %d intact", len(r.LastUserText()), len(big))
	}
	if len(r.Body) < 1<<20 || !json.Valid(r.Body) {
		t.Errorf("raw body of %d bytes", len(r.Body))
	}
}

func TestUnknownRoutesHarmless(t *testing.T) {
	s := NewServer(Turn{Text: "kept"})
	defer s.Close()
	req, _ := http.NewRequest("HEAD", s.URL()+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD /: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Get(s.URL() + "/v1/models")
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("GET /v1/models: %v %v", resp, err)
	}
	resp.Body.Close()
	if n := len(s.Requests()); n != 0 || s.Remaining() != 1 {
		t.Errorf("recorded %d requests, %d turns left", n, s.Remaining())
	}
}

func TestShellToolFollowsOfferedTools(t *testing.T) {
	s := NewServer(Turn{Shell: "true"})
	defer s.Close()
	// An Anthropic request that only offers "bash" gets a "bash" call.
	resp := post(t, s.URL()+"/v1/messages", map[string]any{"tools": []any{map[string]any{"name": "bash"}}})
	m := decode(t, readAll(t, resp))
	if tu := m["content"].([]any)[0].(map[string]any); tu["name"] != "bash" {
		t.Errorf("tool %v", tu)
	}
}

func TestConcurrentUse(t *testing.T) {
	const n = 40
	s := NewServer()
	defer s.Close()
	for i := range n {
		s.Push(Turn{Text: fmt.Sprintf("turn-%02d", i)})
	}
	paths := []string{"/v1/messages", "/v1/responses", "/v1beta/models/g:generateContent", "/v1/chat/completions"}
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(s.URL()+paths[i%4], "application/json", strings.NewReader(`{"model":"m"}`))
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			i := bytes.Index(b, []byte("turn-"))
			if i < 0 {
				t.Errorf("no turn text in %s", b)
				return
			}
			mu.Lock()
			got = append(got, string(b[i:i+7]))
			mu.Unlock()
			_ = s.Requests()
		}()
	}
	wg.Wait()
	sort.Strings(got)
	for i := range n {
		if i >= len(got) || got[i] != fmt.Sprintf("turn-%02d", i) {
			t.Fatalf("each turn should be served exactly once; got %v", got)
		}
	}
	if len(s.Requests()) != n {
		t.Errorf("%d requests recorded", len(s.Requests()))
	}
}

func TestWire(t *testing.T) {
	s := NewServer()
	defer s.Close()
	envOf := func(w *Wiring) map[string]string {
		m := map[string]string{}
		for _, kv := range w.Env {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		return m
	}
	for _, cli := range []string{"claude", "codex", "gemini", "opencode"} {
		home := t.TempDir()
		w, err := s.Wire(cli, home)
		if err != nil {
			t.Fatalf("%s: %v", cli, err)
		}
		env := envOf(w)
		if env["HOME"] != home || !strings.HasPrefix(env["TMPDIR"], home) || !strings.HasPrefix(env["XDG_CONFIG_HOME"], home) {
			t.Errorf("%s: env %v", cli, env)
		}
		if st, err := os.Stat(w.Dir); err != nil || !st.IsDir() || !strings.HasPrefix(w.Dir, home) {
			t.Errorf("%s: Dir %q: %v", cli, w.Dir, err)
		}
		if st, err := os.Stat(env["TMPDIR"]); err != nil || !st.IsDir() {
			t.Errorf("%s: TMPDIR: %v", cli, err)
		}
		switch cli {
		case "claude":
			if env["ANTHROPIC_BASE_URL"] != s.URL() || env["CLAUDE_CODE_MAX_RETRIES"] != "0" || env["CLAUDE_CONFIG_DIR"] == "" {
				t.Errorf("claude env %v", env)
			}
		case "codex":
			cfg, err := os.ReadFile(filepath.Join(env["CODEX_HOME"], "config.toml"))
			if err != nil || !strings.Contains(string(cfg), `base_url = "`+s.URL()+`/v1"`) ||
				!strings.Contains(string(cfg), "request_max_retries = 0") || env["AGENTCLITEST_API_KEY"] == "" {
				t.Errorf("codex config %s: %v", cfg, err)
			}
		case "gemini":
			b, err := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
			var st struct {
				Security struct{ Auth struct{ SelectedType string } }
				General  struct{ MaxAttempts int }
			}
			if err != nil || json.Unmarshal(b, &st) != nil || st.Security.Auth.SelectedType != "gemini-api-key" || st.General.MaxAttempts != 1 {
				t.Errorf("gemini settings %s: %v", b, err)
			}
			if env["GOOGLE_GEMINI_BASE_URL"] != s.URL() {
				t.Errorf("gemini env %v", env)
			}
		case "opencode":
			var cfg struct {
				Model      string
				SmallModel string `json:"small_model"`
				Provider   map[string]struct {
					Options struct{ BaseURL string }
				}
			}
			if err := json.Unmarshal([]byte(env["OPENCODE_CONFIG_CONTENT"]), &cfg); err != nil ||
				cfg.Provider["agentclitest"].Options.BaseURL != s.URL()+"/v1" || cfg.SmallModel != cfg.Model || env["OPENCODE_PURE"] != "1" {
				t.Errorf("opencode config %+v: %v", cfg, err)
			}
		}
	}
	if _, err := s.Wire("cursor", t.TempDir()); err == nil {
		t.Error("unknown CLI accepted")
	}
}

func TestChunks(t *testing.T) {
	for _, s := range []string{"", "a", "ab", "héllo", "日本語のテキスト"} {
		c := chunks(s)
		if strings.Join(c, "") != s || len(c) > 3 {
			t.Errorf("chunks(%q) = %q", s, c)
		}
	}
}

// TestResponsesNamespace: the functions of a namespace tool (codex's MCP
// servers) are offered as "<namespace>__<function>", and a call by that
// name goes out as the function in its namespace, in the added and the
// done item alike.
func TestResponsesNamespace(t *testing.T) {
	s := NewServer(Turn{Tool: &ToolCall{Name: "mcp__docs__search", Args: map[string]any{"q": "x"}}})
	defer s.Close()
	resp := post(t, s.URL()+"/v1/responses", map[string]any{
		"model":  "gpt-x",
		"stream": true,
		"tools": []any{
			map[string]any{"type": "function", "name": "exec_command"},
			map[string]any{"type": "namespace", "name": "mcp__docs", "tools": []any{
				map[string]any{"type": "function", "name": "search"}, map[string]any{"type": "function", "name": "fetch"},
			}},
		},
		"input": "find x",
	})
	defer resp.Body.Close()
	var items []map[string]any
	for _, e := range readSSE(t, resp.Body) {
		m := decode(t, e.data)
		if e.name == "response.output_item.added" || e.name == "response.output_item.done" {
			items = append(items, m["item"].(map[string]any))
		}
	}
	if len(items) != 2 {
		t.Fatalf("items %v", items)
	}
	for _, it := range items {
		if it["type"] != "function_call" || it["namespace"] != "mcp__docs" || it["name"] != "search" {
			t.Errorf("item %v; want the function search in namespace mcp__docs", it)
		}
	}
	if got := strings.Join(s.Requests()[0].Tools, ","); got != "exec_command,mcp__docs__search,mcp__docs__fetch" {
		t.Errorf("tools %s", got)
	}
}

// Factory Droid's shell tool is Execute, whose summary and risk level are
// required; its session-title call (no tools) is a utility call, and the
// same wording with tools offered is not.
func TestDroidShapes(t *testing.T) {
	s := NewServer(Turn{Shell: "echo hi"}, Turn{Text: "main"})
	defer s.Close()
	url := s.URL() + "/v1/chat/completions"
	title := func(tools []any) ModelRequest {
		body := map[string]any{"model": "m", "stream": true, "max_tokens": 32, "messages": []any{
			map[string]any{"role": "system", "content": "You are a helper that generates concise session titles."},
			map[string]any{"role": "user", "content": "hi"},
		}}
		if tools != nil {
			body["tools"] = tools
		}
		resp := post(t, url, body)
		readAll(t, resp)
		r := s.Requests()
		return r[len(r)-1]
	}
	if r := title(nil); !r.Utility {
		t.Errorf("droid's title call is not a utility call: %+v", r)
	}
	if s.Remaining() != 2 {
		t.Fatalf("the title call took a turn: %d left", s.Remaining())
	}
	var call map[string]any
	var name, args string
	resp := post(t, url, map[string]any{"model": "m", "stream": true,
		"tools":    []any{map[string]any{"type": "function", "function": map[string]any{"name": "Execute"}}},
		"messages": []any{map[string]any{"role": "user", "content": "run"}}})
	for _, e := range readSSE(t, resp.Body) {
		if e.data == "[DONE]" {
			continue
		}
		for _, c := range decode(t, e.data)["choices"].([]any) {
			for _, tc := range asSlice(c.(map[string]any)["delta"].(map[string]any)["tool_calls"]) {
				if f, ok := tc.(map[string]any)["function"].(map[string]any); ok {
					if n, ok := f["name"].(string); ok {
						name += n
					}
					if a, ok := f["arguments"].(string); ok {
						args += a
					}
				}
			}
		}
	}
	resp.Body.Close()
	if err := json.Unmarshal([]byte(args), &call); err != nil || name != "Execute" {
		t.Fatalf("tool call %q %q: %v", name, args, err)
	}
	if call["command"] != "echo hi" || call["summary"] == "" || call["riskLevel"] != "medium" || call["riskLevelReason"] == nil {
		t.Errorf("Execute call %v", call)
	}
	if r := title([]any{map[string]any{"type": "function", "function": map[string]any{"name": "Execute"}}}); r.Utility {
		t.Error("a request that offers tools is not a title call")
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
