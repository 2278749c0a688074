package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// parseAll feeds out (stdout) to a parser for req, line by line.
func parseAll(req *agentcli.Request, out string) (driver.Parser, []agentcli.Event) {
	p := newParser(req)
	var evs []agentcli.Event
	for _, l := range strings.Split(out, "\n") {
		evs = append(evs, p.Line([]byte(l))...)
	}
	return p, evs
}

// strip drops Raw and Err so events compare by content; it also checks that
// every event kept its line.
func strip(t *testing.T, evs []agentcli.Event) []agentcli.Event {
	t.Helper()
	out := make([]agentcli.Event, len(evs))
	for i, ev := range evs {
		if len(ev.Raw) == 0 {
			t.Errorf("event %d (%s) has no Raw line", i, ev.Kind)
		}
		ev.Raw, ev.Err = nil, nil
		out[i] = ev
	}
	return out
}

func intp(n int) *int { return &n }

const metadataWarning = "Model metadata for `agentclitest-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."

// TestRealTranscripts parses output captured from the real codex 0.169.0
// (testdata/real, see its README) and checks every event and the outcome.
func TestRealTranscripts(t *testing.T) {
	usage := func(in, out int64, cum bool) *agentcli.Usage {
		return &agentcli.Usage{InputTokens: in, OutputTokens: out, Cumulative: cum}
	}
	warn := agentcli.Event{Kind: agentcli.EventNotice, Text: metadataWarning}
	cases := []struct {
		name    string
		session string // the session the run resumed
		events  func(sess string) []agentcli.Event
		text    string
		usage   agentcli.Usage
		check   func(t *testing.T, res *agentcli.Result, err error)
	}{
		{name: "text", text: "Hello from agentclitest.", usage: *usage(10, 5, false),
			events: func(s string) []agentcli.Event {
				return []agentcli.Event{{Kind: agentcli.EventInit, SessionID: s}, warn,
					{Kind: agentcli.EventText, Text: "Hello from agentclitest."},
					{Kind: agentcli.EventUsage, Usage: usage(10, 5, false)}}
			}},
		{name: "dashprompt", text: "Hello from agentclitest.", usage: *usage(10, 5, false),
			events: func(s string) []agentcli.Event {
				return []agentcli.Event{{Kind: agentcli.EventInit, SessionID: s}, warn,
					{Kind: agentcli.EventText, Text: "Hello from agentclitest."},
					{Kind: agentcli.EventUsage, Usage: usage(10, 5, false)}}
			}},
		{name: "thinking", text: "Hello from agentclitest.", usage: *usage(10, 5, false),
			events: func(s string) []agentcli.Event {
				return []agentcli.Event{{Kind: agentcli.EventInit, SessionID: s}, warn,
					{Kind: agentcli.EventThinking, Text: "The user wants a greeting; keep it short."},
					{Kind: agentcli.EventText, Text: "Hello from agentclitest."},
					{Kind: agentcli.EventUsage, Usage: usage(10, 5, false)}}
			}},
		{name: "tool", text: "The command printed conformance.", usage: *usage(20, 10, false),
			events: func(s string) []agentcli.Event {
				return []agentcli.Event{{Kind: agentcli.EventInit, SessionID: s}, warn,
					{Kind: agentcli.EventToolUse, Tool: &agentcli.ToolUse{ID: "item_1", Name: "Bash", RawName: "command_execution",
						Kind: agentcli.ToolExecute, Input: json.RawMessage(`{"command":"/bin/bash -lc 'echo conformance'"}`)}},
					{Kind: agentcli.EventToolResult, ToolResult: &agentcli.ToolResult{ID: "item_1", Output: "conformance\n", ExitCode: intp(0)}},
					{Kind: agentcli.EventText, Text: "The command printed conformance."},
					{Kind: agentcli.EventUsage, Usage: usage(20, 10, false)}}
			}},
		{name: "resume-1", text: "I will remember apple.", usage: *usage(10, 5, false),
			events: func(s string) []agentcli.Event {
				return []agentcli.Event{{Kind: agentcli.EventInit, SessionID: s}, warn,
					{Kind: agentcli.EventText, Text: "I will remember apple."},
					{Kind: agentcli.EventUsage, Usage: usage(10, 5, false)}}
			}},
		{name: "resume-2", session: "01a20097-ba30-7780-86c4-391ca595925e", text: "The word was apple.",
			// Thread-cumulative: resume-1's 10/5 plus this turn's 10/5.
			usage: *usage(20, 10, true),
			events: func(s string) []agentcli.Event {
				return []agentcli.Event{{Kind: agentcli.EventInit, SessionID: s}, warn,
					{Kind: agentcli.EventText, Text: "The word was apple."},
					{Kind: agentcli.EventUsage, Usage: usage(20, 10, true)}}
			}},
		{name: "error400",
			events: func(s string) []agentcli.Event {
				msg := `{"error":{"code":null,"message":"agentclitest says no","param":null,"type":"invalid_request_error"}}` + "\n"
				return []agentcli.Event{{Kind: agentcli.EventInit, SessionID: s}, warn,
					{Kind: agentcli.EventNotice, Text: msg}}
			},
			check: func(t *testing.T, res *agentcli.Result, err error) {
				var re *agentcli.ResultError
				if !errors.As(err, &re) || !errors.Is(err, agentcli.ErrResult) || re.ExitCode != 1 ||
					!strings.Contains(re.Message, "agentclitest says no") || re.Kind != nil || re.APIStatus != 400 {
					t.Fatalf("err = %#v; want a ResultError with the API's message", err)
				}
				if res == nil || !res.IsError || res.Text != "" || !strings.Contains(string(res.Raw), "turn.failed") {
					t.Fatalf("result = %+v", res)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := backendtest.ReadTranscript(t, c.name)
			out, stderr, code := tr.Stdout, tr.Stderr, tr.Exit
			var started struct {
				ThreadID string `json:"thread_id"`
			}
			json.Unmarshal([]byte(strings.SplitN(string(out), "\n", 2)[0]), &started) //nolint:errcheck
			if started.ThreadID == "" {
				t.Fatal("transcript does not start with thread.started")
			}
			p, evs := parseAll(&agentcli.Request{SessionID: c.session}, string(out))
			if d := cmp.Diff(c.events(started.ThreadID), strip(t, evs)); d != "" {
				t.Fatalf("events (-want +got):\n%s", d)
			}
			res, err := spec.End(p, driver.Exit{Code: code, Stderr: string(stderr)})
			if c.check != nil {
				c.check(t, res, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != c.text || res.SessionID != started.ThreadID || res.Usage != c.usage || res.IsError {
				t.Fatalf("result %+v; want text %q session %s usage %+v", res, c.text, started.ThreadID, c.usage)
			}
			if !strings.Contains(string(res.Raw), `"turn.completed"`) {
				t.Fatalf("Raw = %s", res.Raw)
			}
		})
	}
}

// Lines below were printed by the real codex 0.169.0 against agentclitest
// (HTTP 401 and 429 answers, retries with stream_max_retries=3) unless
// marked [SRC]: shapes from exec_events.rs that were not produced live.

func TestRetryThenSuccess(t *testing.T) {
	out := `{"type":"thread.started","thread_id":"01a20097-413c-79a2-85e4-ecaf66dee512"}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/3 (We’re currently experiencing high demand, which may cause temporary errors.)"}
{"type":"error","message":"Reconnecting... 2/3 (unexpected status 502 Bad Gateway: Bad Gateway, url: http://127.0.0.1:36213/v1/responses)"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"ok after retry"}}
{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":0}}`
	p, evs := parseAll(&agentcli.Request{}, out)
	var retries []agentcli.Retry
	for _, ev := range evs {
		if ev.Kind == agentcli.EventRetry {
			retries = append(retries, *ev.Retry)
		}
	}
	want := []agentcli.Retry{
		{Attempt: 1, MaxRetries: 3, Status: 500, Message: "We’re currently experiencing high demand, which may cause temporary errors."},
		{Attempt: 2, MaxRetries: 3, Status: 502, Message: "unexpected status 502 Bad Gateway: Bad Gateway, url: http://127.0.0.1:36213/v1/responses"},
	}
	if d := cmp.Diff(want, retries); d != "" {
		t.Fatalf("retries (-want +got):\n%s", d)
	}
	res, err := spec.End(p, driver.Exit{})
	if err != nil || res.Text != "ok after retry" {
		t.Fatalf("retries must not end the run: %v %+v", err, res)
	}
	// "waiting for network" retries carry no counter.
	r := retryOf("Reconnecting... waiting for network (Connection failed: error sending request)")
	if r == nil || r.Attempt != 0 || r.Message != "waiting for network (Connection failed: error sending request)" {
		t.Fatalf("retry = %+v", r)
	}
}

func TestFailures(t *testing.T) {
	const started = `{"type":"thread.started","thread_id":"01a20097-3031-7cb0-a55d-5a2c6d71fed9"}
{"type":"turn.started"}
`
	cases := []struct {
		name   string
		out    string
		exit   driver.Exit
		req    agentcli.Request
		status int
		kind   error
		msg    string
		exitE  bool // want *ExitError rather than *ResultError
	}{
		{name: "400", exit: driver.Exit{Code: 1}, status: 400, msg: "Bad Request",
			out: started + `{"type":"error","message":"{\"error\":{\"code\":null,\"message\":\"Bad Request\",\"param\":null,\"type\":\"invalid_request_error\"}}\n"}
{"type":"turn.failed","error":{"message":"{\"error\":{\"code\":null,\"message\":\"Bad Request\",\"param\":null,\"type\":\"invalid_request_error\"}}\n"}}`},
		{name: "401", exit: driver.Exit{Code: 1}, status: 401, kind: agentcli.ErrAuth, msg: "401 Unauthorized",
			out: started + `{"type":"error","message":"unexpected status 401 Unauthorized: Unauthorized, url: http://127.0.0.1:45885/v1/responses"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Unauthorized, url: http://127.0.0.1:45885/v1/responses"}}`},
		{name: "429", exit: driver.Exit{Code: 1}, status: 429, kind: agentcli.ErrRateLimited, msg: "Too Many Requests",
			out: started + `{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}
{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}`},
		{name: "500", exit: driver.Exit{Code: 1}, status: 500, msg: "high demand",
			out: started + `{"type":"error","message":"We’re currently experiencing high demand, which may cause temporary errors."}
{"type":"turn.failed","error":{"message":"We’re currently experiencing high demand, which may cause temporary errors."}}`},
		{name: "rate limit by code [SRC]", exit: driver.Exit{Code: 1}, kind: agentcli.ErrRateLimited, msg: "rate_limit_exceeded",
			out: started + `{"type":"turn.failed","error":{"message":"Rate limit reached (rate_limit_exceeded)"}}`},
		{name: "turn.failed without message falls back to the error event", exit: driver.Exit{Code: 1}, msg: "boom",
			out: started + `{"type":"error","message":"boom"}
{"type":"turn.failed","error":{}}`},
		{name: "turn.failed wins over exit 0", exit: driver.Exit{Code: 0}, msg: "x",
			out: started + `{"type":"turn.failed","error":{"message":"x"}}`},
		{name: "non-zero exit after turn.completed", exit: driver.Exit{Code: 1}, msg: "stream disconnected",
			out: started + `{"type":"error","message":"stream disconnected"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"partial"}}
{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`},
		{name: "unknown resume id", exitE: true, kind: agentcli.ErrSessionNotFound, msg: "no rollout found",
			req:  agentcli.Request{SessionID: "01a20096-0000-7000-8000-000000000000"},
			exit: driver.Exit{Code: 1, Stderr: "Error: thread/resume: thread/resume failed: no rollout found for thread id 01a20096-0000-7000-8000-000000000000 (code -32600)\n"}},
		{name: "crash mid-turn", exitE: true, msg: "panicked",
			out:  started + `{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","status":"in_progress"}}`,
			exit: driver.Exit{Code: 101, Stderr: "thread 'main' panicked at src/x.rs:1:1\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := parseAll(&c.req, c.out)
			res, err := spec.End(p, c.exit)
			if c.exitE {
				var ee *agentcli.ExitError
				if !errors.As(err, &ee) || ee.Code != c.exit.Code || !errors.Is(err, agentcli.ErrExit) || res != nil {
					t.Fatalf("err = %v; want *ExitError code %d", err, c.exit.Code)
				}
				if ee.Kind != c.kind || !strings.Contains(ee.Stderr, c.msg) {
					t.Fatalf("ExitError kind %v stderr %q; want %v, %q", ee.Kind, ee.Stderr, c.kind, c.msg)
				}
				return
			}
			var re *agentcli.ResultError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v; want *ResultError", err)
			}
			if re.APIStatus != c.status || re.Kind != c.kind || !strings.Contains(re.Message, c.msg) || re.ExitCode != c.exit.Code {
				t.Fatalf("ResultError %+v; want status %d kind %v message ~%q", re, c.status, c.kind, c.msg)
			}
			if c.kind != nil && !errors.Is(err, c.kind) {
				t.Fatalf("errors.Is(err, %v) = false", c.kind)
			}
			if res == nil || !res.IsError || res.SessionID != "01a20097-3031-7cb0-a55d-5a2c6d71fed9" || re.Result != res {
				t.Fatalf("result %+v", res)
			}
		})
	}
	t.Run("exit 0 without turn.completed", func(t *testing.T) {
		p, _ := parseAll(&agentcli.Request{}, started)
		_, err := spec.End(p, driver.Exit{})
		if !errors.Is(err, agentcli.ErrNoResult) || errors.Is(err, agentcli.ErrExit) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestItems covers every item type with the shapes of exec_events.rs [SRC].
func TestAPIStatusOf(t *testing.T) {
	for msg, want := range map[string]int{
		"unexpected status 401 Unauthorized: Unauthorized, url: http://127.0.0.1:1/v1/responses": 401,
		"exceeded retry limit, last status: 429 Too Many Requests":                               429,
		"We’re currently experiencing high demand, which may cause temporary errors.":            500,
		"We're currently experiencing high demand, which may cause temporary errors.":            500,
		"Internal server error": 500,
		`{"error":{"message":"nope","type":"invalid_request_error"}}` + "\n": 400,
		`{"detail":"x"}`: 0,
		"Quota exceeded. Check your plan and billing details.": 0,
		"stream disconnected before completion":                0,
		"status 12345":                                         0,
	} {
		if got := apiStatusOf(msg); got != want {
			t.Errorf("apiStatusOf(%q) = %d; want %d", msg, got, want)
		}
	}
}

func TestItems(t *testing.T) {
	out := `{"type":"thread.started","thread_id":"th-1"}
{"type":"item.completed","item":{"id":"item_3","type":"reasoning","text":"**Planning the fix**\nI'll inspect the failing test first."}}
{"type":"item.started","item":{"id":"item_4","type":"file_change","changes":[{"path":"/repo/src/main.rs","kind":"update"}],"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_4","type":"file_change","changes":[{"path":"/repo/src/main.rs","kind":"update"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_8","type":"file_change","changes":[{"path":"/repo/new.txt","kind":"add"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_9","type":"file_change","changes":[{"path":"/repo/a","kind":"delete"},{"path":"/repo/b","kind":"delete"}],"status":"failed"}}
{"type":"item.completed","item":{"id":"item_10","type":"file_change","changes":[{"path":"/repo/a","kind":"add"},{"path":"/repo/b","kind":"update"}],"status":"completed"}}
{"type":"item.started","item":{"id":"item_5","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"tokio"},"result":null,"error":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_5","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"tokio"},"result":{"content":[{"type":"text","text":"found it"}],"structured_content":null},"error":null,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_11","type":"mcp_tool_call","server":"db","tool":"query","arguments":{},"result":null,"error":{"message":"connection refused"},"status":"failed"}}
{"type":"item.started","item":{"id":"item_6","type":"web_search","id":"ws_123","query":"","action":{"type":"other"}}}
{"type":"item.completed","item":{"id":"item_6","type":"web_search","id":"ws_123","query":"rust serde flatten","action":{"type":"search","query":"rust serde flatten"}}}
{"type":"item.started","item":{"id":"item_7","type":"todo_list","items":[{"text":"Reproduce bug","completed":false}]}}
{"type":"item.updated","item":{"id":"item_7","type":"todo_list","items":[{"text":"Reproduce bug","completed":true},{"text":"Write fix","completed":false}]}}
{"type":"item.started","item":{"id":"item_12","type":"command_execution","command":"false","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.updated","item":{"id":"item_12","type":"command_execution","command":"false","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_12","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}
{"type":"item.completed","item":{"id":"item_13","type":"command_execution","command":"rm -rf /","aggregated_output":"","exit_code":null,"status":"declined"}}
{"type":"item.completed","item":{"id":"item_14","type":"collab_tool_call","tool":"spawn_agent","sender_thread_id":"th-1","receiver_thread_ids":["th-2"],"prompt":"look","agents_states":{"th-2":{"status":"completed","message":"done"}},"status":"completed"}}
{"type":"item.completed","item":{"id":"item_15","type":"error","message":"model rerouted: gpt-a -> gpt-b (capacity)"}}
{"type":"item.completed","item":{"id":"item_16","type":"agent_message","text":"first"}}
{"type":"item.completed","item":{"id":"item_17","type":"agent_message","text":"final answer"}}
{"type":"item.completed","item":{"id":"item_7","type":"todo_list","items":[{"text":"Reproduce bug","completed":true},{"text":"Write fix","completed":true}]}}
{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":1,"cache_write_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}
{"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":40,"cache_write_input_tokens":7,"output_tokens":14,"reasoning_output_tokens":4}}`
	p, evs := parseAll(&agentcli.Request{Model: "gpt-a"}, out)
	use := func(id, name, raw string, kind agentcli.ToolKind, input string) agentcli.Event {
		return agentcli.Event{Kind: agentcli.EventToolUse, Tool: &agentcli.ToolUse{ID: id, Name: name, RawName: raw, Kind: kind, Input: json.RawMessage(input)}}
	}
	result := func(id, out string, isErr bool, code *int) agentcli.Event {
		return agentcli.Event{Kind: agentcli.EventToolResult, ToolResult: &agentcli.ToolResult{ID: id, Output: out, IsError: isErr, ExitCode: code}}
	}
	todo := func(items string) string { return `{"todos":[` + items + `]}` }
	want := []agentcli.Event{
		{Kind: agentcli.EventInit, SessionID: "th-1", Model: "gpt-a"},
		{Kind: agentcli.EventThinking, Text: "**Planning the fix**\nI'll inspect the failing test first."},
		use("item_4", "Edit", "file_change", agentcli.ToolEdit, `{"changes":[{"path":"/repo/src/main.rs","kind":"update"}],"file_path":"/repo/src/main.rs"}`),
		result("item_4", "update /repo/src/main.rs", false, nil),
		use("item_8", "Write", "file_change", agentcli.ToolEdit, `{"changes":[{"path":"/repo/new.txt","kind":"add"}],"file_path":"/repo/new.txt"}`),
		result("item_8", "add /repo/new.txt", false, nil),
		use("item_9", "Delete", "file_change", agentcli.ToolDelete, `{"changes":[{"path":"/repo/a","kind":"delete"},{"path":"/repo/b","kind":"delete"}]}`),
		result("item_9", "delete /repo/a\ndelete /repo/b", true, nil),
		use("item_10", "Edit", "file_change", agentcli.ToolEdit, `{"changes":[{"path":"/repo/a","kind":"add"},{"path":"/repo/b","kind":"update"}]}`),
		result("item_10", "add /repo/a\nupdate /repo/b", false, nil),
		use("item_5", "mcp__docs__search", "mcp__docs__search", agentcli.ToolOther, `{"q":"tokio"}`),
		result("item_5", "found it", false, nil),
		use("item_11", "mcp__db__query", "mcp__db__query", agentcli.ToolOther, `{}`),
		result("item_11", "connection refused", true, nil),
		use("item_6", "WebSearch", "web_search", agentcli.ToolSearch, `{"action":{"type":"other"},"query":""}`),
		result("item_6", "", false, nil),
		use("item_7", "TodoWrite", "todo_list", agentcli.ToolThink, todo(`{"content":"Reproduce bug","status":"pending"}`)),
		use("item_7", "TodoWrite", "todo_list", agentcli.ToolThink, todo(`{"content":"Reproduce bug","status":"completed"},{"content":"Write fix","status":"pending"}`)),
		use("item_12", "Bash", "command_execution", agentcli.ToolExecute, `{"command":"false"}`),
		result("item_12", "", true, intp(1)),
		use("item_13", "Bash", "command_execution", agentcli.ToolExecute, `{"command":"rm -rf /"}`),
		result("item_13", "", true, nil),
		use("item_14", "Task", "collab_tool_call", agentcli.ToolThink, `{"prompt":"look","receiver_thread_ids":["th-2"],"tool":"spawn_agent"}`),
		result("item_14", `{"th-2":{"status":"completed","message":"done"}}`, false, nil),
		{Kind: agentcli.EventNotice, Text: "model rerouted: gpt-a -> gpt-b (capacity)"},
		{Kind: agentcli.EventText, Text: "first"},
		{Kind: agentcli.EventText, Text: "final answer"},
		result("item_7", "", false, nil),
		{Kind: agentcli.EventUsage, Usage: &agentcli.Usage{InputTokens: 5 - 1, CacheReadTokens: 1, OutputTokens: 1}},
		{Kind: agentcli.EventUsage, Usage: &agentcli.Usage{InputTokens: 300 - 40 - 7, CacheReadTokens: 40, CacheWriteTokens: 7, OutputTokens: 14, ReasoningTokens: 4}},
	}
	if d := cmp.Diff(want, strip(t, evs)); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	res, err := spec.End(p, driver.Exit{})
	if err != nil {
		t.Fatal(err)
	}
	// The last turn.completed is the total; usage is never summed.
	wantRes := agentcli.Usage{InputTokens: 300 - 40 - 7, CacheReadTokens: 40, CacheWriteTokens: 7, OutputTokens: 14, ReasoningTokens: 4}
	if res.Text != "final answer" || res.Usage != wantRes || res.Model != "gpt-b" || res.SessionID != "th-1" {
		t.Fatalf("result %+v", res)
	}
}

func TestWebSearchFirstID(t *testing.T) {
	for item, want := range map[string]string{
		`{"id":"item_6","type":"web_search","id":"ws_123"}`:           "item_6",
		`{"type":"web_search","id":"item_6","query":"q","id":"ws_1"}`: "item_6",
		`{"type":"web_search","nested":{"id":"x"},"id":"item_2"}`:     "item_2",
		`{"type":"web_search","id":7,"id":"ws"}`:                      "",
		`{"type":"web_search","id":null,"id":"ws"}`:                   "",
		`{"type":"web_search"}`:                                       "",
		`{"type":"command_execution","id":"a","id":"b"}`:              "b",
		`{"type":"command_execution","id":"a","id":null}`:             "a",
	} {
		_, evs := parseAll(&agentcli.Request{}, `{"type":"item.completed","item":`+item+`}`)
		if len(evs) == 0 || evs[0].Tool == nil || evs[0].Tool.ID != want {
			t.Errorf("item %s: events %+v; want a tool use with id %q", item, evs, want)
		}
	}
	// encoding/json alone would pick the search id.
	var plain oWireItem
	json.Unmarshal([]byte(`{"id":"item_6","type":"web_search","id":"ws_123"}`), &plain) //nolint:errcheck
	if plain.ID != "ws_123" {
		t.Fatalf("encoding/json kept %q; the duplicate-key premise changed", plain.ID)
	}
}

func TestTolerance(t *testing.T) {
	out := `not json at all
{"type":"thread.started","thread_id":"th-9"}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":["ls"],"aggregated_output":"x","exit_code":"0","status":"completed"}}
{"type":"item.completed","item":"weird"}
{"type":"item.completed","item":{"id":"item_2","type":"image_generation","url":"x"}}
{"type":"turn.plan.delta","delta":"x"}
{"type":42}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"ok"}}
{"type":"turn.completed","usage":{"input_tokens":"many","output_tokens":3}}
{"type":"turn.completed`
	p, evs := parseAll(&agentcli.Request{}, out)
	kinds := make([]agentcli.EventKind, len(evs))
	for i, ev := range evs {
		kinds[i] = ev.Kind
	}
	want := []agentcli.EventKind{agentcli.EventNotice, agentcli.EventInit, agentcli.EventToolUse, agentcli.EventToolResult,
		agentcli.EventUnknown, agentcli.EventUnknown, agentcli.EventUnknown, agentcli.EventUnknown,
		agentcli.EventText, agentcli.EventUsage, agentcli.EventNotice}
	if d := cmp.Diff(want, kinds); d != "" {
		t.Fatalf("kinds (-want +got):\n%s", d)
	}
	var pe *agentcli.ParseError
	if !errors.As(evs[0].Err, &pe) || !errors.Is(evs[0].Err, agentcli.ErrParse) {
		t.Fatalf("non-JSON line gave %+v", evs[0])
	}
	if evs[3].ToolResult.Output != "x" {
		t.Fatalf("a wrong-typed field lost the rest of the item: %+v", evs[3].ToolResult)
	}
	res, err := spec.End(p, driver.Exit{})
	if err != nil || res.Text != "ok" || res.Usage.OutputTokens != 3 {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestResumeByName(t *testing.T) {
	out := `{"type":"thread.started","thread_id":"01a20097-07ad-7d91-9f10-2b3c09bc1076"}`
	_, evs := parseAll(&agentcli.Request{SessionID: "bogus-id"}, out)
	if len(evs) != 2 || evs[1].Kind != agentcli.EventNotice || !strings.Contains(evs[1].Text, "bogus-id") {
		t.Fatalf("events %+v; want init and a notice", evs)
	}
	_, evs = parseAll(&agentcli.Request{SessionID: "01a20097-07ad-7d91-9f10-2b3c09bc1076"}, out)
	if len(evs) != 1 {
		t.Fatalf("a real resume gave %+v", evs)
	}
}

// TestParseProperty: for any generated valid output the result has exactly
// the last agent message and the thread id; with a non-zero exit and no
// terminal event, the error carries the stderr tail.
func TestParseProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sess := rapid.StringMatching(`[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`).Draw(t, "session")
		enc := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		lines := []string{enc(map[string]any{"type": "thread.started", "thread_id": sess}), `{"type":"turn.started"}`}
		n := rapid.IntRange(0, 8).Draw(t, "items")
		last := ""
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("item_%d", i)
			text := rapid.String().Draw(t, "text")
			switch rapid.IntRange(0, 4).Draw(t, "kind") {
			case 0:
				lines = append(lines, enc(map[string]any{"type": "item.completed", "item": map[string]any{"id": id, "type": "agent_message", "text": text}}))
				last = text
			case 1:
				lines = append(lines, enc(map[string]any{"type": "item.completed", "item": map[string]any{"id": id, "type": "reasoning", "text": text}}))
			case 2:
				it := map[string]any{"id": id, "type": "command_execution", "command": text, "aggregated_output": text, "exit_code": 0, "status": "completed"}
				lines = append(lines, enc(map[string]any{"type": "item.completed", "item": it}))
			case 3:
				lines = append(lines, enc(map[string]any{"type": "error", "message": "Reconnecting... 1/5 (" + text + ")"}))
			case 4:
				lines = append(lines, enc(map[string]any{"type": "item.completed", "item": map[string]any{"id": id, "type": "error", "message": text}}))
			}
		}
		terminal := rapid.Bool().Draw(t, "terminal")
		if terminal {
			lines = append(lines, `{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":2}}`)
		}
		p, evs := parseAll(&agentcli.Request{}, strings.Join(lines, "\n"))
		if evs[0].Kind != agentcli.EventInit || evs[0].SessionID != sess {
			t.Fatalf("first event %+v", evs[0])
		}
		for _, ev := range evs {
			if ev.Kind == agentcli.EventNotice && ev.Err != nil {
				t.Fatalf("valid line gave a parse notice: %v", ev.Err)
			}
		}
		stderr := rapid.String().Draw(t, "stderr") + " fatal: the end"
		code := rapid.IntRange(0, 3).Draw(t, "code")
		res, err := spec.End(p, driver.Exit{Code: code, Stderr: stderr})
		switch {
		case terminal && code == 0:
			if err != nil || res.Text != last || res.SessionID != sess {
				t.Fatalf("res %+v err %v; want text %q session %q", res, err, last, sess)
			}
		case !terminal && code != 0:
			var ee *agentcli.ExitError
			if !errors.As(err, &ee) || ee.Code != code || !strings.Contains(ee.Stderr, "fatal: the end") {
				t.Fatalf("err = %v; want *ExitError with the stderr tail", err)
			}
		case !terminal:
			if !errors.Is(err, agentcli.ErrNoResult) {
				t.Fatalf("err = %v; want ErrNoResult", err)
			}
		default:
			var re *agentcli.ResultError
			if !errors.As(err, &re) || re.ExitCode != code {
				t.Fatalf("err = %v; want *ResultError", err)
			}
		}
	})
}

// The tool table maps this CLI's tool names to canonical names and kinds;
// unknown tools pass through with kind ToolOther.
func TestTools(t *testing.T) {
	cases := []struct {
		raw, name string
		kind      agentcli.ToolKind
	}{
		{"command_execution", "Bash", agentcli.ToolExecute},
		{"todo_list", "TodoWrite", agentcli.ToolThink},
	}
	for _, c := range cases {
		if name, kind := tools.Canonical(c.raw); name != c.name || kind != c.kind {
			t.Errorf("Canonical(%q) = %q, %q; want %q, %q", c.raw, name, kind, c.name, c.kind)
		}
	}
}
