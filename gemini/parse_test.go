package gemini

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

// parseAll feeds data to a new parser line by line, as the process layer
// does (no newline, no trailing \r).
func parseAll(f format, data []byte) (driver.Parser, []agentcli.Event) {
	p := newParser(f)
	var evs []agentcli.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		evs = append(evs, p.Line(bytes.Clone(bytes.TrimSuffix(sc.Bytes(), []byte("\r"))))...)
	}
	return p, evs
}

func kinds(evs []agentcli.Event) []agentcli.EventKind {
	var k []agentcli.EventKind
	for _, e := range evs {
		k = append(k, e.Kind)
	}
	return k
}

var ignoreRaw = cmp.FilterPath(func(p cmp.Path) bool {
	s := p.String()
	return s == "Raw" || strings.HasSuffix(s, ".Raw")
}, cmp.Ignore())

func formatOf(name string) format {
	if strings.HasSuffix(name, "-json") {
		return formatJSON
	}
	return formatStream
}

// TestRealTranscripts parses the shared captures of gemini 0.61.0
// (testdata/real, see its README) in both output formats. The expected
// texts are what the scripted model server was told to answer.
func TestRealTranscripts(t *testing.T) {
	want := map[string]string{
		"text":       "Hello from agentclitest.",
		"dashprompt": "Hello from agentclitest.",
		"thinking":   "Hello from agentclitest.",
		"tool":       "The command printed conformance.",
		"resume-1":   "I will remember apple.",
		"resume-2":   "The word was apple.",
	}
	for _, shape := range []string{"stream", "json"} {
		sessions := map[string]string{}
		for _, scen := range []string{"text", "dashprompt", "thinking", "tool", "resume-1", "resume-2", "error400"} {
			name := scen + "-" + shape
			t.Run(name, func(t *testing.T) {
				tr := backendtest.ReadTranscript(t, name)
				out, stderr, code := tr.Stdout, tr.Stderr, tr.Exit
				p, evs := parseAll(formatOf(name), out)
				res, err := spec.End(p, driver.Exit{Code: code, Stderr: string(stderr)})
				for _, ev := range evs {
					if ev.Kind == agentcli.EventNotice || ev.Kind == agentcli.EventUnknown {
						t.Errorf("%s event on real output: %+v", ev.Kind, ev)
					}
				}
				if scen == "error400" {
					var re *agentcli.ResultError
					if !errors.As(err, &re) || re.APIStatus != 400 || re.ExitCode != 144 || re.TerminalReason != "api_error" ||
						!strings.Contains(re.Message, "agentclitest says no") || res == nil || !res.IsError || res.SessionID == "" {
						t.Fatalf("err = %v, res = %+v", err, res)
					}
					if errors.Is(err, agentcli.ErrAuth) || errors.Is(err, agentcli.ErrRateLimited) {
						t.Fatalf("400 classified as %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				// The router's call (10 in / 5 out) and the main call(s).
				if res.Text != want[scen] || res.SessionID == "" || res.Usage.InputTokens < 20 || res.Usage.OutputTokens < 10 ||
					res.CostUSD != nil || res.IsError {
					t.Fatalf("result %+v", res)
				}
				if res.Model != "gemini-3.8-flash" && !(shape == "stream" && res.Model == "auto") {
					t.Errorf("model %q", res.Model)
				}
				sessions[scen] = res.SessionID
				if scen == "resume-2" && sessions["resume-1"] != res.SessionID {
					t.Fatalf("resumed session %s, first run %s", res.SessionID, sessions["resume-1"])
				}
				count := func(k agentcli.EventKind) int {
					n := 0
					for _, ev := range evs {
						if ev.Kind == k {
							n++
						}
					}
					return n
				}
				if count(agentcli.EventThinking) != 0 {
					t.Errorf("gemini shows no thoughts, yet thinking events were parsed")
				}
				if shape == "json" {
					if d := cmp.Diff([]agentcli.EventKind{agentcli.EventText, agentcli.EventUsage}, kinds(evs)); d != "" {
						t.Fatalf("json kinds (-want +got):\n%s", d)
					}
					return
				}
				if count(agentcli.EventInit) != 1 || evs[0].Kind != agentcli.EventInit || evs[0].SessionID != res.SessionID {
					t.Errorf("init events: %+v", evs)
				}
				var b strings.Builder
				for _, ev := range evs {
					if ev.Kind == agentcli.EventTextDelta {
						b.WriteString(ev.Text)
					}
					if ev.SessionID != res.SessionID {
						t.Errorf("event without the session id: %+v", ev)
					}
				}
				if b.String() != want[scen] {
					t.Fatalf("deltas %q", b.String())
				}
				if scen == "tool" {
					var use *agentcli.ToolUse
					var tr *agentcli.ToolResult
					for _, ev := range evs {
						if ev.Tool != nil {
							use = ev.Tool
						}
						if ev.ToolResult != nil {
							tr = ev.ToolResult
						}
					}
					if use == nil || use.Name != agentcli.ToolNameBash || use.RawName != "run_shell_command" || use.Kind != agentcli.ToolExecute ||
						!strings.Contains(string(use.Input), "echo conformance") {
						t.Fatalf("tool use %+v", use)
					}
					if tr == nil || tr.ID != use.ID || tr.Output != "conformance" || tr.IsError {
						t.Fatalf("tool result %+v", tr)
					}
				}
			})
		}
	}
}

// The stream-json examples of wire-formats §4.2, in order.
func TestParseStreamWireFormats(t *testing.T) {
	lines := `{"type":"init","timestamp":"2026-11-21T22:58:32.662Z","session_id":"672d90bd-d760-403d-bea0-15a6f6d779d4","model":"gemini-2.5-flash"}
{"type":"message","timestamp":"2026-11-21T22:58:32.663Z","role":"user","content":"RUNTOOL now"}
{"type":"message","timestamp":"2026-11-21T22:58:32.700Z","role":"assistant","content":"Let me ","delta":true}
{"type":"message","timestamp":"2026-11-21T22:58:32.701Z","role":"assistant","content":"check.","delta":true}
{"type":"tool_use","timestamp":"2026-11-21T22:58:32.708Z","tool_name":"run_shell_command","tool_id":"run_shell_command__run_shell_command_1795301912687_0","parameters":{"command":"echo hi","description":"print hi"}}
{"type":"tool_result","timestamp":"2026-11-21T22:58:32.769Z","tool_id":"run_shell_command__run_shell_command_1795301912687_0","status":"success","output":"hi"}
{"type":"error","timestamp":"2026-11-21T23:00:00.000Z","severity":"warning","message":"Loop detected, stopping execution"}
{"type":"message","timestamp":"2026-11-21T22:58:32.776Z","role":"assistant","content":"hello from mock","delta":true}
{"type":"result","timestamp":"2026-11-21T22:58:32.777Z","status":"success","stats":{"total_tokens":30,"input_tokens":20,"output_tokens":10,"cached":4,"input":16,"duration_ms":115,"tool_calls":1,"models":{"mock":{"total_tokens":30,"input_tokens":20,"output_tokens":10,"cached":4,"input":16}}}}`
	p, evs := parseAll(formatStream, []byte(lines))
	const sess = "672d90bd-d760-403d-bea0-15a6f6d779d4"
	usage := agentcli.Usage{InputTokens: 16, OutputTokens: 10, CacheReadTokens: 4}
	want := []agentcli.Event{
		{Kind: agentcli.EventInit, SessionID: sess, Model: "gemini-2.5-flash"},
		{Kind: agentcli.EventTextDelta, SessionID: sess, Text: "Let me "},
		{Kind: agentcli.EventTextDelta, SessionID: sess, Text: "check."},
		{Kind: agentcli.EventText, SessionID: sess, Text: "Let me check."},
		{Kind: agentcli.EventToolUse, SessionID: sess, Tool: &agentcli.ToolUse{
			ID: "run_shell_command__run_shell_command_1795301912687_0", Name: "Bash", RawName: "run_shell_command",
			Kind: agentcli.ToolExecute, Input: json.RawMessage(`{"command":"echo hi","description":"print hi"}`)}},
		{Kind: agentcli.EventToolResult, SessionID: sess, ToolResult: &agentcli.ToolResult{
			ID: "run_shell_command__run_shell_command_1795301912687_0", Output: "hi"}},
		{Kind: agentcli.EventNotice, SessionID: sess, Text: "warning: Loop detected, stopping execution"},
		{Kind: agentcli.EventTextDelta, SessionID: sess, Text: "hello from mock"},
		{Kind: agentcli.EventText, SessionID: sess, Text: "hello from mock"},
		{Kind: agentcli.EventUsage, SessionID: sess, Usage: &usage},
	}
	if d := cmp.Diff(want, evs, ignoreRaw, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	for _, ev := range evs {
		if len(ev.Raw) == 0 && ev.Kind != agentcli.EventText {
			t.Errorf("event without Raw: %+v", ev)
		}
	}
	res, err := spec.End(p, driver.Exit{})
	if err != nil {
		t.Fatal(err)
	}
	wantRes := &agentcli.Result{Text: "hello from mock", SessionID: sess, Usage: usage, Model: "mock"}
	if d := cmp.Diff(wantRes, res, ignoreRaw); d != "" {
		t.Fatalf("result (-want +got):\n%s", d)
	}
	if !json.Valid(res.Raw) || !strings.Contains(string(res.Raw), `"type":"result"`) {
		t.Fatalf("Raw %s", res.Raw)
	}
}

// Unknown types and fields, fields of the wrong type, noise.
func TestParseTolerance(t *testing.T) {
	lines := `Loading extensions...
{"type":"init","session_id":"s1","model":5,"extra":{"x":[1]}}
{"timestamp":"t","type":"future_event","session_id":"zzz","payload":[1,2]}
{"type":"message","role":"assistant","content":["not","a string"],"delta":true}
{"type":"message","role":"assistant","content":"ok","delta":"yes"}
{"type":"message","role":"system","content":"?"}
{"type":"tool_use","tool_name":"mcp_server__frobnicate","tool_id":7,"parameters":"str"}
{"type":"tool_result","tool_id":"t2","status":"error","error":{"type":"invalid_tool_params","message":"bad path"}}
[1,2,3]
{"type":"result","status":"success","stats":{"input_tokens":"many","output_tokens":3}}
{broken`
	p, evs := parseAll(formatStream, []byte(lines))
	wantKinds := []agentcli.EventKind{
		agentcli.EventNotice, agentcli.EventInit, agentcli.EventUnknown, agentcli.EventTextDelta,
		agentcli.EventText, agentcli.EventUnknown, agentcli.EventToolUse,
		agentcli.EventToolResult, agentcli.EventNotice, agentcli.EventUsage, agentcli.EventNotice,
	}
	if d := cmp.Diff(wantKinds, kinds(evs)); d != "" {
		t.Fatalf("kinds (-want +got):\n%s", d)
	}
	if !errors.Is(evs[0].Err, agentcli.ErrParse) || !errors.Is(evs[8].Err, agentcli.ErrParse) || !errors.Is(evs[10].Err, agentcli.ErrParse) {
		t.Fatalf("noise notices must carry a *ParseError: %v / %v / %v", evs[0].Err, evs[8].Err, evs[10].Err)
	}
	if evs[1].SessionID != "s1" || evs[2].SessionID != "s1" {
		t.Fatalf("session ids %q %q: only init sets the session", evs[1].SessionID, evs[2].SessionID)
	}
	if !strings.Contains(string(evs[2].Raw), "future_event") {
		t.Fatalf("unknown event lost its raw line")
	}
	if tu := evs[6].Tool; tu.Name != "mcp_server__frobnicate" || tu.Kind != agentcli.ToolOther || tu.ID != "" {
		t.Fatalf("tool %+v", tu)
	}
	if tr := evs[7].ToolResult; tr.ID != "t2" || !tr.IsError || tr.Output != "bad path" {
		t.Fatalf("tool result %+v", tr)
	}
	res, err := spec.End(p, driver.Exit{})
	// "ok" came before the tool call: the last turn has no text.
	if err != nil || res.Text != "" || res.SessionID != "s1" || res.Usage.OutputTokens != 3 {
		t.Fatalf("res %+v err %v", res, err)
	}
}

// The json document arrives one line at a time; noise around it is
// reported, the document is not.
func TestParseJSONDocument(t *testing.T) {
	doc := map[string]any{
		"session_id": "s-json",
		"response":   "line one\nline two }\n}",
		"stats": map[string]any{"models": map[string]any{
			"router": map[string]any{
				"tokens": map[string]any{"input": 7, "prompt": 10, "candidates": 2, "cached": 3, "thoughts": 0},
				"roles":  map[string]any{"utility_router": map[string]any{}},
			},
			"gemini-x": map[string]any{
				"tokens": map[string]any{"input": 100, "prompt": 150, "candidates": 20, "cached": 50, "thoughts": 9},
				"roles":  map[string]any{"main": map[string]any{}},
			},
		}},
		"warnings": []string{"Loop detected, stopping execution"},
	}
	pretty, _ := json.MarshalIndent(doc, "", "  ")
	compact, _ := json.Marshal(doc)
	for name, out := range map[string]string{
		"pretty":            string(pretty),
		"pretty with noise": "Empty GEMINI.md created. Now analyzing the project to populate it.\n" + string(pretty) + "\n",
		"compact":           string(compact) + "\n",
		"pretty CRLF":       strings.ReplaceAll(string(pretty), "\n", "\r\n"),
	} {
		t.Run(name, func(t *testing.T) {
			p, evs := parseAll(formatJSON, []byte(out))
			noise := 0
			if strings.HasPrefix(out, "Empty") {
				noise = 1
			}
			want := append(make([]agentcli.EventKind, 0, 4), agentcli.EventNotice, agentcli.EventText, agentcli.EventUsage)
			if noise == 1 {
				want = append([]agentcli.EventKind{agentcli.EventNotice}, want...)
			}
			if d := cmp.Diff(want, kinds(evs)); d != "" {
				t.Fatalf("kinds (-want +got):\n%s", d)
			}
			if evs[noise].Text != "Loop detected, stopping execution" || evs[noise].Err != nil {
				t.Fatalf("warning notice %+v", evs[noise])
			}
			res, err := spec.End(p, driver.Exit{})
			if err != nil {
				t.Fatal(err)
			}
			want2 := &agentcli.Result{
				Text: "line one\nline two }\n}", SessionID: "s-json", Model: "gemini-x",
				Usage: agentcli.Usage{InputTokens: 107, OutputTokens: 2 + 0 + 20 + 9, CacheReadTokens: 53, ReasoningTokens: 9},
			}
			if d := cmp.Diff(want2, res, ignoreRaw); d != "" {
				t.Fatalf("result (-want +got):\n%s", d)
			}
			if !json.Valid(res.Raw) {
				t.Fatalf("Raw is not the document: %q", res.Raw)
			}
		})
	}
}

// Errors, from real gemini 0.61.0 output (captured_test.go) and the shapes
// in wire-formats §4.3.
func TestParseErrors(t *testing.T) {
	type want struct {
		result  bool // a *ResultError (else *ExitError)
		subtype string
		status  int
		kind    error
		reason  string
		msg     string // substring of the message / stderr tail
		session bool
		usage   bool
	}
	cases := map[string]want{
		"auth-json":      {result: true, subtype: "Error", kind: agentcli.ErrAuth, msg: "Invalid auth method selected.", session: true},
		"auth-stream":    {kind: agentcli.ErrAuth, msg: "Invalid auth method selected."},
		"badresume-json": {kind: agentcli.ErrSessionNotFound, msg: "Invalid session identifier"},
		"empty-json":     {result: true, subtype: "INVALID_STREAM", msg: "empty response", session: true, usage: true},
		"empty-stream":   {result: true, subtype: "INVALID_STREAM", msg: "empty response", session: true, usage: true},
		"err401-json":    {result: true, subtype: "Error", status: 401, kind: agentcli.ErrAuth, reason: "api_error", msg: "API key not valid", session: true},
		"err429-stream":  {result: true, subtype: "unknown", status: 429, kind: agentcli.ErrRateLimited, reason: "api_error", msg: "[API Error: quota]", session: true},
		"maxturns-json":  {result: true, subtype: "error_max_turns", reason: "max_turns", msg: "Reached max session turns", session: true},
		"maxturns-stream": {result: true, subtype: "error_max_turns", reason: "max_turns", msg: "Reached max session turns",
			session: true, usage: true},
		"quit-json":   {result: true, subtype: "FatalInputError", msg: "not supported in non-interactive mode", session: true},
		"quit-stream": {result: true, subtype: "FatalInputError", msg: "not supported in non-interactive mode", session: true},
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			c := captured[name]
			p, evs := parseAll(formatOf(name), []byte(c.stdout))
			for _, ev := range evs {
				if ev.Err != nil {
					t.Errorf("parse notice on real output: %v", ev.Err)
				}
			}
			res, err := spec.End(p, driver.Exit{Code: c.exit, Stderr: c.stderr})
			if w.kind != nil && !errors.Is(err, w.kind) {
				t.Errorf("err %v does not match %v", err, w.kind)
			}
			for _, k := range []error{agentcli.ErrAuth, agentcli.ErrRateLimited, agentcli.ErrSessionNotFound} {
				if k != w.kind && errors.Is(err, k) {
					t.Errorf("err %v wrongly matches %v", err, k)
				}
			}
			if !w.result {
				var ee *agentcli.ExitError
				if !errors.As(err, &ee) || ee.Code != c.exit || !strings.Contains(ee.Stderr, w.msg) || res != nil {
					t.Fatalf("err = %#v, res %+v; want *ExitError", err, res)
				}
				return
			}
			var re *agentcli.ResultError
			if !errors.As(err, &re) {
				t.Fatalf("err = %#v; want *ResultError", err)
			}
			if re.Subtype != w.subtype || re.APIStatus != w.status || re.TerminalReason != w.reason || re.ExitCode != c.exit ||
				!strings.Contains(re.Message, w.msg) || re.Result != res {
				t.Fatalf("ResultError %+v", re)
			}
			if res == nil || !res.IsError || (res.SessionID != "") != w.session || res.Subtype != w.subtype ||
				(res.Usage.InputTokens > 0) != w.usage {
				t.Fatalf("result %+v", res)
			}
			if !json.Valid(res.Raw) {
				t.Fatalf("raw %q", res.Raw)
			}
		})
	}
}

func TestParseToolError(t *testing.T) {
	_, evs := parseAll(formatStream, []byte(captured["tool-error-stream"].stdout))
	var tu *agentcli.ToolUse
	var tr *agentcli.ToolResult
	for _, ev := range evs {
		if ev.Tool != nil {
			tu = ev.Tool
		}
		if ev.ToolResult != nil {
			tr = ev.ToolResult
		}
	}
	if tu == nil || tu.Name != agentcli.ToolNameRead || tu.RawName != "read_file" || tu.Kind != agentcli.ToolRead {
		t.Fatalf("tool use %+v", tu)
	}
	if tr == nil || tr.ID != tu.ID || !tr.IsError || !strings.HasPrefix(tr.Output, "Path not in workspace") {
		t.Fatalf("tool result %+v", tr)
	}
}

// Exit statuses without a result.
func TestParseExitStatuses(t *testing.T) {
	cases := []struct {
		code   int
		stderr string
		kind   error
	}{
		{41, "Invalid auth method selected.", agentcli.ErrAuth},
		{42, "Error resuming session: No previous sessions found for this project.", agentcli.ErrSessionNotFound},
		{42, "No input provided via stdin. Input can be provided by piping data into gemini or using the --prompt option.", nil},
		{145, "boom", agentcli.ErrAuth},        // 401
		{173, "boom", agentcli.ErrRateLimited}, // 429
		{144, "boom", nil},                     // 400
		{1, "Unknown arguments: bogus-flag, bogusFlag", nil},
		{55, "Gemini CLI is not running in a trusted directory.", nil},
	}
	for _, c := range cases {
		for _, f := range []format{formatJSON, formatStream} {
			t.Run(fmt.Sprintf("%d-%s", c.code, f), func(t *testing.T) {
				p := newParser(f)
				res, err := spec.End(p, driver.Exit{Code: c.code, Stderr: c.stderr})
				var ee *agentcli.ExitError
				if res != nil || !errors.As(err, &ee) || ee.Code != c.code || !strings.Contains(ee.Stderr, c.stderr) {
					t.Fatalf("res %+v err %v", res, err)
				}
				if ee.Kind != c.kind {
					t.Fatalf("kind %v, want %v", ee.Kind, c.kind)
				}
			})
		}
	}
	if h := hint(driver.Exit{Code: 42, Stderr: "Error resuming session: Invalid session identifier \"x\"."}); !strings.Contains(h, "Request.Dir") {
		t.Errorf("hint %q", h)
	}
	if h := hint(driver.Exit{Code: 41}); !strings.Contains(h, "GEMINI_API_KEY") {
		t.Errorf("hint %q", h)
	}
}

// A successful-looking result with a non-zero exit, and a result after
// which the process still failed, are errors.
func TestParseContradictions(t *testing.T) {
	ok := `{"type":"init","session_id":"s","model":"m"}
{"type":"message","role":"assistant","content":"fine","delta":true}
{"type":"result","status":"success","stats":{"input_tokens":1,"output_tokens":1}}`
	p, _ := parseAll(formatStream, []byte(ok))
	res, err := spec.End(p, driver.Exit{Code: 1, Stderr: "later crash"})
	var re *agentcli.ResultError
	if !errors.As(err, &re) || re.ExitCode != 1 || res == nil || !res.IsError || res.Text != "fine" {
		t.Fatalf("res %+v err %v", res, err)
	}
	// Exit 0 with a document cut short: a parse error, never a success.
	p, _ = parseAll(formatJSON, []byte("{\n  \"session_id\": \"s\",\n  \"response\": \"cut"))
	var pe *agentcli.ParseError
	if _, err := spec.End(p, driver.Exit{}); !errors.As(err, &pe) || errors.Is(err, agentcli.ErrExit) || !bytes.Contains(pe.Line, []byte(`"cut`)) {
		t.Fatalf("truncated json document: err %v", err)
	}
	// Exit 0 with nothing at all: no result.
	p, _ = parseAll(formatJSON, nil)
	if _, err := spec.End(p, driver.Exit{}); !errors.Is(err, agentcli.ErrNoResult) || errors.Is(err, agentcli.ErrExit) {
		t.Fatalf("no output: err %v", err)
	}
}

// strays are lines a CLI (or something it runs) may print around its
// json document: noise, JSON objects that are not the document, a lone
// "{" or "}", a document cut short by the next one.
var strays = []string{
	"{", "}", "{}", "{ }", "[", `{"level":"debug","msg":"x"}`, `{"warnings": []}`, "{\n}", "{\nnoise", "{ [", `{"a":`,
	"{\n  \"x\": 1,", "{\n{", "}\n{", "{\n  \"a\": {", `"x"`, "Loaded cached credentials.", "  {", `{"a":"b}`,
	"{\n  \"warnings\": [\"w\"]\n}",
}

// The json document is found after any stray lines: the run succeeds with
// its text and session id, and each stray is a notice. Without the
// document, a run that exits 0 is a *ParseError, never a success with an
// empty text; one that exits non-zero is an *ExitError.
func TestParseJSONStray(t *testing.T) {
	doc, _ := json.MarshalIndent(map[string]any{"session_id": "s-json", "response": "hello"}, "", "  ")
	for _, s := range strays {
		for _, out := range []string{s + "\n" + string(doc) + "\n", s + "\n" + s + "\n" + string(doc) + "\nafter\n"} {
			p, evs := parseAll(formatJSON, []byte(out))
			res, err := spec.End(p, driver.Exit{})
			if err != nil || res.Text != "hello" || res.SessionID != "s-json" {
				t.Errorf("%q: res %+v err %v", out, res, err)
				continue
			}
			if kinds(evs)[0] != agentcli.EventNotice {
				t.Errorf("%q: the stray line is no notice: %v", out, kinds(evs))
			}
		}
		if s == "Loaded cached credentials." || s == "[" || s == `"x"` || s == "}" {
			continue // not document-like: no parse error without the document
		}
		p, _ := parseAll(formatJSON, []byte(s+"\n"))
		var pe *agentcli.ParseError
		if res, err := spec.End(p, driver.Exit{}); !errors.As(err, &pe) || res != nil || len(pe.Line) == 0 {
			t.Errorf("%q alone, exit 0: res %+v err %v; want a *ParseError", s, res, err)
		}
		p, _ = parseAll(formatJSON, []byte(s+"\n"))
		var xe *agentcli.ExitError
		if res, err := spec.End(p, driver.Exit{Code: 1, Stderr: "boom"}); !errors.As(err, &xe) || res != nil {
			t.Errorf("%q alone, exit 1: res %+v err %v; want an *ExitError", s, res, err)
		}
	}
}

// The same for any mix of stray lines: the document after them is the
// result.
func TestParseJSONStrayProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.String().Draw(t, "text")
		var out strings.Builder
		for _, s := range rapid.SliceOfN(rapid.OneOf(rapid.SampledFrom(strays), rapid.StringMatching(`[a-z {}\[\]":,0-9]{0,30}`)), 1, 6).Draw(t, "strays") {
			for _, k := range []string{"session_id", "response", "stats", "error"} {
				if strings.Contains(s, `"`+k+`"`) {
					t.Skip("a stray with the document's members")
				}
			}
			out.WriteString(s + "\n")
		}
		doc, _ := json.MarshalIndent(map[string]any{"session_id": "s", "response": text}, "", "  ")
		out.Write(doc)
		p, _ := parseAll(formatJSON, []byte(out.String()))
		res, err := spec.End(p, driver.Exit{})
		if err != nil || res.Text != text || res.SessionID != "s" {
			t.Fatalf("%q: res %+v err %v", out.String(), res, err)
		}
	})
}

// genOutput renders a valid gemini run that answers text in session sess,
// in the given format: deltas (stream) or a pretty-printed document (json),
// with optional tool calls in between.
func genOutput(t *rapid.T, f format, text, sess string) string {
	var b strings.Builder
	if f == formatJSON {
		doc, _ := json.MarshalIndent(map[string]any{
			"session_id": sess, "response": text,
			"stats": map[string]any{"models": map[string]any{"m": map[string]any{"tokens": map[string]any{"prompt": 3, "candidates": 2}}}},
		}, "", "  ")
		return string(doc)
	}
	line := func(v map[string]any) {
		j, _ := json.Marshal(v)
		b.Write(j)
		b.WriteByte('\n')
	}
	line(map[string]any{"type": "init", "timestamp": "t", "session_id": sess, "model": "auto"})
	line(map[string]any{"type": "message", "role": "user", "content": rapid.String().Draw(t, "prompt")})
	for i := range rapid.IntRange(0, 2).Draw(t, "tools") {
		line(map[string]any{"type": "message", "role": "assistant", "content": rapid.String().Draw(t, "pre"), "delta": true})
		id := fmt.Sprintf("tool_%d", i)
		line(map[string]any{"type": "tool_use", "tool_name": "run_shell_command", "tool_id": id, "parameters": map[string]any{"command": "true"}})
		line(map[string]any{"type": "tool_result", "tool_id": id, "status": "success", "output": ""})
	}
	r := []rune(text)
	cuts := rapid.SliceOfN(rapid.IntRange(0, len(r)), 0, 4).Draw(t, "cuts")
	prev := 0
	for _, c := range append(cuts, len(r)) {
		if c < prev {
			continue
		}
		line(map[string]any{"type": "message", "role": "assistant", "content": string(r[prev:c]), "delta": true})
		prev = c
	}
	line(map[string]any{"type": "result", "status": "success", "stats": map[string]any{"input_tokens": 3, "output_tokens": 2}})
	return b.String()
}

// Parsing any valid output yields exactly its answer and session id.
func TestParseProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom([]format{formatJSON, formatStream}).Draw(t, "format")
		text := rapid.String().Draw(t, "text")
		sess := rapid.StringMatching(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).Draw(t, "session")
		out := genOutput(t, f, text, sess)
		p, evs := parseAll(f, []byte(out))
		res, err := spec.End(p, driver.Exit{})
		if err != nil {
			t.Fatalf("err %v on %q", err, out)
		}
		if res.Text != text || res.SessionID != sess || res.Usage.InputTokens != 3 || res.Usage.OutputTokens != 2 {
			t.Fatalf("result %+v, want text %q session %q", res, text, sess)
		}
		for _, ev := range evs {
			if ev.Kind == agentcli.EventNotice || ev.Kind == agentcli.EventUnknown {
				t.Fatalf("unexpected %s event %+v", ev.Kind, ev)
			}
		}
	})
}

// A non-zero exit and stderr, with or without partial output, always give
// an error that carries the end of stderr.
func TestParseExitProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom([]format{formatJSON, formatStream}).Draw(t, "format")
		code := rapid.IntRange(1, 255).Draw(t, "code")
		msg := rapid.StringMatching(`[A-Za-z][A-Za-z .:]{0,60}[a-z]`).Draw(t, "msg")
		stderr := rapid.StringMatching(`(noise [a-z]{0,20}\n){0,3}`).Draw(t, "noise") + msg
		partial := ""
		if f == formatStream && rapid.Bool().Draw(t, "partial") {
			partial = `{"type":"init","session_id":"s","model":"m"}` + "\n" + `{"type":"message","role":"assistant","content":"x","delta":true}`
		}
		p, _ := parseAll(f, []byte(partial))
		res, err := spec.End(p, driver.Exit{Code: code, Stderr: stderr})
		if err == nil || res != nil {
			t.Fatalf("res %+v err %v", res, err)
		}
		var ee *agentcli.ExitError
		if !errors.As(err, &ee) || ee.Code != code || !strings.HasSuffix(ee.Stderr, strings.TrimSpace(msg)) ||
			!strings.Contains(err.Error(), strings.TrimSpace(msg)) {
			t.Fatalf("err %#v does not carry the stderr tail %q", err, msg)
		}
	})
}

func TestStderrJSON(t *testing.T) {
	for name, c := range map[string]struct {
		stderr string
		want   string // error.type, "" for none
	}{
		"plain":            {"Error resuming session: x\n", ""},
		"stack then json":  {"_ApiError: {\"error\":{\"code\":400}}\n    at x (y:1:2) {\n  status: 400\n}\n{\n  \"session_id\": \"s\",\n  \"error\": {\"type\": \"Error\", \"message\": \"m\", \"code\": 400}\n}\n", "Error"},
		"error prefix":     {"[ERROR] {\"error\": {\"type\": \"T\", \"message\": \"m\"}}\n", "T"},
		"json without err": {"{\"session_id\": \"s\"}\n", ""},
		"error not object": {"{\"error\": \"boom\"}\n", ""},
		"mid-line brace":   {"x {\"error\": {\"type\": \"T\", \"message\": \"m\"}}\n", ""},
		"unterminated":     {"{\n  \"error\": {\"type\": \"T\"", ""},
	} {
		t.Run(name, func(t *testing.T) {
			w, raw := stderrJSON(c.stderr)
			got := ""
			if w != nil {
				got = w.Error.Type
				if !json.Valid(raw) {
					t.Fatalf("raw %q", raw)
				}
			}
			if got != c.want {
				t.Fatalf("got %q want %q", got, c.want)
			}
		})
	}
}

// The tool table maps this CLI's tool names to canonical names and kinds;
// unknown tools pass through with kind ToolOther.
func TestTools(t *testing.T) {
	cases := []struct {
		raw, name string
		kind      agentcli.ToolKind
	}{
		{"run_shell_command", "Bash", agentcli.ToolExecute},
		{"replace", "Edit", agentcli.ToolEdit},
		{"google_web_search", "WebSearch", agentcli.ToolSearch},
	}
	for _, c := range cases {
		if name, kind := tools.Canonical(c.raw); name != c.name || kind != c.kind {
			t.Errorf("Canonical(%q) = %q, %q; want %q, %q", c.raw, name, kind, c.name, c.kind)
		}
	}
}
