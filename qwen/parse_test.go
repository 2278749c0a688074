package qwen

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// parseFile runs the parser over a real qwen 0.24.4 transcript in testdata
// (stdout of a run against the scripted server) and ends it with exit.
func parseFile(t *testing.T, name string, exit int) ([]agentcli.Event, *agentcli.Result, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := newParser()
	var evs []agentcli.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		evs = append(evs, p.Line(sc.Bytes())...)
	}
	res, rerr := spec.End(p, driver.Exit{Code: exit})
	return evs, res, rerr
}

func kinds(evs []agentcli.Event) map[agentcli.EventKind]int {
	m := map[agentcli.EventKind]int{}
	for _, ev := range evs {
		m[ev.Kind]++
	}
	return m
}

func TestParseText(t *testing.T) {
	evs, res, err := parseFile(t, "text1.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	k := kinds(evs)
	if k[agentcli.EventInit] != 1 || k[agentcli.EventText] != 1 || k[agentcli.EventUsage] != 1 {
		t.Errorf("events %v", k)
	}
	if evs[0].Version != "0.24.4" || evs[0].Model != "agentclitest-model" {
		t.Errorf("init %+v", evs[0])
	}
	if res.Text != "hello from mock" || res.SessionID != "d7e19a98-4d02-4644-8d72-98291e971481" || res.Turns != 1 ||
		res.Usage.InputTokens != 10 || res.Usage.OutputTokens != 5 || res.Model != "agentclitest-model" {
		t.Errorf("result %+v", res)
	}
}

func TestParseTool(t *testing.T) {
	evs, res, err := parseFile(t, "shell-yolo.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	var use *agentcli.ToolUse
	var tr *agentcli.ToolResult
	for _, ev := range evs {
		switch ev.Kind {
		case agentcli.EventToolUse:
			use = ev.Tool
		case agentcli.EventToolResult:
			tr = ev.ToolResult
		}
	}
	if use == nil || use.Name != agentcli.ToolNameBash || use.RawName != "run_shell_command" || use.Kind != agentcli.ToolExecute || use.ID != "call_agentclitest_1" {
		t.Fatalf("tool use %+v", use)
	}
	if tr == nil || tr.ID != use.ID || tr.Output != "hi" || tr.IsError {
		t.Fatalf("tool result %+v", tr)
	}
	if res.Text != "done after shell" || res.Turns != 2 {
		t.Errorf("result %+v", res)
	}
	// A refused call: the result says so, the run succeeds.
	evs, _, err = parseFile(t, "shell-default.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == agentcli.EventToolResult && !ev.ToolResult.IsError {
			t.Errorf("refused call's result %+v", ev.ToolResult)
		}
	}
}

func TestParseDeltas(t *testing.T) {
	evs, res, err := parseFile(t, "partial.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, ev := range evs {
		if ev.Kind == agentcli.EventTextDelta {
			text += ev.Text
		}
	}
	if text != "hello from mock" || res.Text != text {
		t.Errorf("deltas %q, result %q", text, res.Text)
	}
}

// An API error: qwen's "[API Error: ...]" text is a notice, not model
// text, and the result is a *ResultError with the status read from it.
func TestParseAPIError(t *testing.T) {
	for _, c := range []struct {
		file   string
		status int
		kind   error
	}{{"err400.jsonl", 400, nil}, {"err401.jsonl", 401, agentcli.ErrAuth}} {
		evs, res, err := parseFile(t, c.file, 1)
		var re *agentcli.ResultError
		if !errors.As(err, &re) || re.APIStatus != c.status || re.ExitCode != 1 || re.Subtype != "error_during_execution" || !res.IsError {
			t.Fatalf("%s: %v (%+v)", c.file, err, re)
		}
		k := kinds(evs)
		if k[agentcli.EventText] != 0 || k[agentcli.EventNotice] != 1 {
			t.Errorf("%s: events %v", c.file, k)
		}
	}
}

// Lines qwen does not print (yet) never fail a run: what is not JSON is a
// notice, unknown types and fields of unexpected types are kept raw.
func TestParseHostileLines(t *testing.T) {
	p := newParser()
	for _, l := range []string{
		``, `not json`, `[1,2]`, `{"type":"future_thing","x":1}`,
		`{"type":"assistant","message":"nope"}`,
		`{"type":"assistant","session_id":7,"message":{"content":[{"type":"text","text":"still read"},5,null]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"x"},{"type":"image"}]}]}}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"hmm"}}}`,
		`{"type":"result","is_error":"yes","usage":{"input_tokens":-5,"cache_read_input_tokens":3}}`,
	} {
		for _, ev := range p.Line([]byte(l)) {
			if ev.Kind == "" {
				t.Errorf("%q: event without a kind", l)
			}
			if ev.Kind == agentcli.EventText && ev.Text != "still read" {
				t.Errorf("%q: text %q", l, ev.Text)
			}
			if ev.Kind == agentcli.EventToolResult && ev.ToolResult.Output != "x" {
				t.Errorf("%q: tool result %+v", l, ev.ToolResult)
			}
			if ev.Kind == agentcli.EventUsage && (ev.Usage.InputTokens != 0 || ev.Usage.CacheReadTokens != 3) {
				t.Errorf("%q: usage %+v", l, ev.Usage)
			}
		}
	}
	res, err := spec.End(p, driver.Exit{})
	if err != nil || res == nil {
		t.Fatalf("End: %+v, %v", res, err)
	}
}
