package copilot

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// runTranscript plays a real transcript through the fake and returns the
// events and the error of a Stream.
func runTranscript(t *testing.T, name string) ([]agentcli.Event, error) {
	t.Helper()
	b, _ := kit.Setup(t, nil, backendtest.TranscriptScript(backendtest.ReadTranscript(t, name))...)
	return backendtest.Collect(context.Background(), b, &agentcli.Request{Prompt: "replay"})
}

func kinds(evs []agentcli.Event) map[agentcli.EventKind]int {
	m := map[agentcli.EventKind]int{}
	for _, ev := range evs {
		m[ev.Kind]++
	}
	return m
}

// The text transcript: an EventInit with the session id agentcli chose,
// deltas that add up to the answer, the whole message once, and a result
// carrying copilot's session id, model and one turn.
func TestTranscriptText(t *testing.T) {
	evs, err := runTranscript(t, "text")
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Kind != agentcli.EventInit || evs[0].SessionID == "" {
		t.Fatalf("first event %+v", evs[0])
	}
	var deltas strings.Builder
	for _, ev := range evs {
		if ev.Kind == agentcli.EventTextDelta {
			deltas.WriteString(ev.Text)
		}
		if ev.Kind == agentcli.EventUnknown {
			t.Errorf("unknown event: %s", ev.Raw)
		}
	}
	res := evs[len(evs)-1].Result
	if deltas.String() != "Hello from agentclitest." || res.Text != "Hello from agentclitest." ||
		res.SessionID != "7f950f07-2001-43ef-a2e8-63af5fc5683b" || res.Model != "agentclitest-model" || res.Turns != 1 {
		t.Fatalf("deltas %q, result %+v", deltas.String(), res)
	}
	if k := kinds(evs); k[agentcli.EventText] != 1 || k[agentcli.EventTextDelta] != 3 {
		t.Fatalf("kinds %v", k)
	}
}

// The tool transcript: the model's call of bash is the canonical Bash with
// its input, its result holds the output and the exit code, and the answer
// after it is the result's text; two turns.
func TestTranscriptTool(t *testing.T) {
	evs, err := runTranscript(t, "tool")
	if err != nil {
		t.Fatal(err)
	}
	var use *agentcli.ToolUse
	var tr *agentcli.ToolResult
	for _, ev := range evs {
		switch ev.Kind {
		case agentcli.EventToolUse:
			if use != nil {
				t.Fatalf("the call was announced twice")
			}
			use = ev.Tool
		case agentcli.EventToolResult:
			tr = ev.ToolResult
		}
	}
	if use == nil || use.Name != agentcli.ToolNameBash || use.RawName != "bash" || use.Kind != agentcli.ToolExecute ||
		!strings.Contains(string(use.Input), `"command":"echo conformance"`) {
		t.Fatalf("tool use %+v", use)
	}
	if tr == nil || tr.ID != use.ID || tr.IsError || !strings.HasPrefix(tr.Output, "conformance\n") || tr.ExitCode == nil || *tr.ExitCode != 0 {
		t.Fatalf("tool result %+v", tr)
	}
	if res := evs[len(evs)-1].Result; res.Text != "The command printed conformance." || res.Turns != 2 {
		t.Fatalf("result %+v", res)
	}
}

// The thinking transcript: reasoning deltas and the reasoning block, whose
// texts agree; no delta is synthesized.
func TestTranscriptThinking(t *testing.T) {
	evs, err := runTranscript(t, "thinking")
	if err != nil {
		t.Fatal(err)
	}
	var deltas, blocks strings.Builder
	for _, ev := range evs {
		if ev.Kind == agentcli.EventThinking {
			if ev.Delta {
				deltas.WriteString(ev.Text)
			} else {
				blocks.WriteString(ev.Text)
			}
		}
	}
	const want = "The user wants a greeting; keep it short."
	if deltas.String() != want || blocks.String() != want {
		t.Fatalf("thinking deltas %q, blocks %q", deltas.String(), blocks.String())
	}
}

// Lines the parser meets that real runs did not show: a denied tool, a
// sub-agent's events, a tool only its execution announces, an unknown type,
// a line that is not JSON, a session warning, a retry.
func TestParseLines(t *testing.T) {
	st := newState("m", false)
	p := driver.Lines(Name, st)
	line := func(s string) []agentcli.Event {
		return append([]agentcli.Event(nil), p.Line([]byte(s))...)
	}
	if evs := line(`{"type":"agentcli.session","sessionId":"s-1"}`); len(evs) != 0 {
		t.Fatalf("session line: %+v", evs)
	}
	evs := line(`{"type":"assistant.message","data":{"content":"","toolRequests":[{"toolCallId":"c1","name":"create","arguments":{"path":"/x","file_text":"y"}}]}}`)
	if len(evs) != 2 || evs[0].Kind != agentcli.EventInit || evs[0].SessionID != "s-1" || evs[0].Model != "m" ||
		evs[1].Tool == nil || evs[1].Tool.Name != agentcli.ToolNameWrite {
		t.Fatalf("init and create: %+v", evs)
	}
	if evs := line(`{"type":"tool.execution_start","data":{"toolCallId":"c1","toolName":"create","arguments":{}}}`); len(evs) != 0 {
		t.Fatalf("announced twice: %+v", evs)
	}
	evs = line(`{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":false,"error":{"message":"Permission denied because no interactive user response was available.","code":"denied"}}}`)
	if len(evs) != 1 || !evs[0].ToolResult.IsError || !strings.HasPrefix(evs[0].ToolResult.Output, "Permission denied") {
		t.Fatalf("denied: %+v", evs)
	}
	evs = line(`{"type":"tool.execution_start","data":{"toolCallId":"c2","toolName":"view","arguments":{"path":"/r"},"parentToolCallId":"task-1"}}`)
	if len(evs) != 1 || evs[0].Tool.Name != agentcli.ToolNameRead || evs[0].Subagent != "task-1" {
		t.Fatalf("sub-agent's view: %+v", evs)
	}
	evs = line(`{"type":"assistant.message","data":{"content":"sub answer","parentToolCallId":"task-1"}}`)
	if len(evs) != 1 || evs[0].Subagent != "task-1" || st.text != "" {
		t.Fatalf("sub-agent's text: %+v, main text %q", evs, st.text)
	}
	if evs := line(`{"type":"session.future_thing","data":{"x":1}}`); len(evs) != 1 || evs[0].Kind != agentcli.EventUnknown {
		t.Fatalf("unknown type: %+v", evs)
	}
	if evs := line(`not json`); len(evs) != 1 || evs[0].Kind != agentcli.EventNotice {
		t.Fatalf("not JSON: %+v", evs)
	}
	if evs := line(`{"type":"session.warning","data":{"message":"careful"}}`); len(evs) != 1 || evs[0].Kind != agentcli.EventNotice || evs[0].Text != "careful" {
		t.Fatalf("warning: %+v", evs)
	}
	evs = line(`{"type":"assistant.turn_retry","data":{"reason":"transient_auth_error"}}`)
	if len(evs) != 1 || evs[0].Retry == nil || evs[0].Retry.Attempt != 1 || evs[0].Retry.Message != "transient_auth_error" {
		t.Fatalf("retry: %+v", evs)
	}
	if evs := line(`{"type":"assistant.message_delta","data":"not an object"}`); len(evs) != 1 || evs[0].Kind != agentcli.EventNotice {
		t.Fatalf("data of the wrong type: %+v", evs)
	}
	// No result line: the runner reports the exit.
	if o := p.End(driver.Exit{Code: 1}); o.Result != nil || o.Failed {
		t.Fatalf("End without a result: %+v", o)
	}
}

// A result line that says the run failed, without a session.error, and
// one that says it succeeded while copilot exited non-zero, are errors.
func TestParseResultCodes(t *testing.T) {
	for _, c := range []struct {
		result string
		exit   int
	}{
		{`{"type":"result","sessionId":"s","exitCode":1}`, 0},
		{`{"type":"result","sessionId":"s","exitCode":0}`, 2},
	} {
		p := newParser("", false)
		p.Line([]byte(c.result))
		res, err := spec.End(p, driver.Exit{Code: c.exit, Stderr: "boom"})
		var re *agentcli.ResultError
		if !errors.As(err, &re) || res == nil || !res.IsError || res.SessionID != "s" {
			t.Fatalf("%s exit %d: %+v, %v", c.result, c.exit, res, err)
		}
	}
}

// The usage file, summed over models, in agentcli's convention; counts
// that are negative or overflow are clamped and saturated.
func TestFileUsage(t *testing.T) {
	u, ok := fileUsage(json.RawMessage(`{"modelMetrics":{"a":{"usage":{"inputTokens":100,"outputTokens":7,"cacheReadTokens":30,"cacheWriteTokens":10,"reasoningTokens":2}},` +
		`"b":{"usage":{"inputTokens":-5,"outputTokens":9223372036854775807}}}}`))
	want := agentcli.Usage{InputTokens: 60, OutputTokens: 9223372036854775807, CacheReadTokens: 30, CacheWriteTokens: 10, ReasoningTokens: 2}
	if !ok || u != want {
		t.Fatalf("usage %+v, want %+v", u, want)
	}
	if _, ok := fileUsage(json.RawMessage(`{"totalPremiumRequestCost":0}`)); ok {
		t.Fatal("a file without modelMetrics has usage")
	}
}
