package claude

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func parseAll(_ any, data []byte) (driver.Parser, []agentcli.Event) {
	p := newParser()
	var evs []agentcli.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		evs = append(evs, p.Line(bytes.Clone(sc.Bytes()))...)
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

// Lines printed by Claude Code 2.1.330 (wire-formats §2.3, [LIVE]); note the
// result line does not start with "type".
func TestParseStreamLive(t *testing.T) {
	data, err := os.ReadFile("testdata/lines/stream-2.1.330.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	p, evs := parseAll(t, data)
	want := []agentcli.EventKind{agentcli.EventInit, agentcli.EventUnknown, agentcli.EventTextDelta,
		agentcli.EventTextDelta, agentcli.EventText, agentcli.EventUsage, agentcli.EventContextUsage}
	if d := cmp.Diff(want, kinds(evs)); d != "" {
		t.Fatalf("kinds (-want +got):\n%s", d)
	}
	// The model call's usage as its message reported it (10 in, 1 out so
	// far) in the model's window (modelUsage's contextWindow).
	if cu := evs[6].ContextUsage; *cu != (agentcli.ContextUsage{UsedTokens: 11, WindowTokens: 1000000, Model: "claude-sonnet-4-5"}) {
		t.Fatalf("context usage %+v", *cu)
	}
	if evs[0].SessionID != "387144c4-c3b7-4733-aa27-be4c71200f23" || evs[0].Model != "claude-sonnet-4-5" {
		t.Fatalf("init event %+v", evs[0])
	}
	if evs[2].Text+evs[3].Text != "hello from mock" {
		t.Fatalf("deltas %q %q", evs[2].Text, evs[3].Text)
	}
	res, err := spec.End(p, driver.Exit{})
	if err != nil {
		t.Fatal(err)
	}
	cost := 0.000105
	want2 := &agentcli.Result{
		Text: "hello from mock", SessionID: "387144c4-c3b7-4733-aa27-be4c71200f23",
		Usage: agentcli.Usage{InputTokens: 10, OutputTokens: 5}, CostUSD: &cost, Turns: 1,
		Model: "claude-sonnet-4-5", StopReason: "end_turn", Subtype: "success", TerminalReason: "completed",
	}
	if d := cmp.Diff(want2, res, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Raw" }, cmp.Ignore())); d != "" {
		t.Fatalf("result (-want +got):\n%s", d)
	}
}

func TestParseToolRoundTrip(t *testing.T) {
	lines := `{"type":"assistant","message":{"id":"msg_mock_af51fa8ef0af","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_mock_39bf5b0ede","name":"Bash","input":{"command":"echo hi","description":"Print hi"}}],"stop_reason":null},"parent_tool_use_id":null,"session_id":"59b60632-7c28-4091-8d5c-10d42c3807ba","uuid":"558a3d8e"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_mock_39bf5b0ede","type":"tool_result","content":"hi","is_error":false}]},"parent_tool_use_id":null,"session_id":"59b60632-7c28-4091-8d5c-10d42c3807ba","uuid":"62a15d17","tool_use_result":{"stdout":"hi","stderr":"","interrupted":false,"isImage":false}}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_2","type":"tool_result","content":[{"type":"text","text":"line1"},{"type":"text","text":"line2"}],"is_error":true}]},"parent_tool_use_id":"toolu_task","session_id":"59b60632-7c28-4091-8d5c-10d42c3807ba"}
{"type":"assistant","message":{"model":"m","content":[{"type":"thinking","thinking":"Let me look.","signature":"EqQB"},{"type":"redacted_thinking","data":"xx"}]},"parent_tool_use_id":null,"session_id":"s"}
`
	_, evs := parseAll(t, []byte(lines))
	if d := cmp.Diff([]agentcli.EventKind{agentcli.EventToolUse, agentcli.EventToolResult, agentcli.EventToolResult,
		agentcli.EventThinking, agentcli.EventUnknown}, kinds(evs)); d != "" {
		t.Fatalf("kinds (-want +got):\n%s", d)
	}
	tu := evs[0].Tool
	if tu.ID != "toolu_mock_39bf5b0ede" || tu.Name != "Bash" || tu.RawName != "Bash" || tu.Kind != agentcli.ToolExecute ||
		string(tu.Input) != `{"command":"echo hi","description":"Print hi"}` {
		t.Fatalf("tool use %+v", tu)
	}
	if r := evs[1].ToolResult; r.ID != tu.ID || r.Output != "hi" || r.IsError {
		t.Fatalf("tool result %+v", r)
	}
	if r := evs[2].ToolResult; r.Output != "line1line2" || !r.IsError || evs[2].Subagent != "toolu_task" {
		t.Fatalf("array tool result %+v (subagent %q)", r, evs[2].Subagent)
	}
	if evs[3].Text != "Let me look." {
		t.Fatalf("thinking %q", evs[3].Text)
	}
}

// The two `--output-format json` shapes: a single result object, and with
// --verbose an array of every message.
func TestParseJSONShapes(t *testing.T) {
	result := `{"type":"result","subtype":"success","is_error":false,"result":"4","session_id":"s1","num_turns":1,"total_cost_usd":0,"usage":{"input_tokens":3,"output_tokens":1,"cache_read_input_tokens":7,"cache_creation_input_tokens":2}}`
	array := `[{"type":"system","subtype":"init","session_id":"s1","model":"m1"},{"type":"assistant","message":{"model":"m1","content":[{"type":"text","text":"4"}]},"session_id":"s1","parent_tool_use_id":null},` + result + `]`
	for name, in := range map[string]string{"object": result, "array": array} {
		t.Run(name, func(t *testing.T) {
			p, _ := parseAll(t, []byte(in))
			res, err := spec.End(p, driver.Exit{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "4" || res.SessionID != "s1" || res.CostUSD == nil || *res.CostUSD != 0 ||
				res.Usage != (agentcli.Usage{InputTokens: 3, OutputTokens: 1, CacheReadTokens: 7, CacheWriteTokens: 2}) {
				t.Fatalf("result %+v", res)
			}
		})
	}
	t.Run("cost not reported", func(t *testing.T) {
		p, _ := parseAll(t, []byte(`{"type":"result","subtype":"success","is_error":false,"result":"x","session_id":"s"}`))
		res, err := spec.End(p, driver.Exit{})
		if err != nil || res.CostUSD != nil {
			t.Fatalf("res %+v err %v: cost must be nil when not reported", res, err)
		}
	})
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name  string
		lines string
		exit  driver.Exit
		check func(t *testing.T, res *agentcli.Result, err error)
	}{
		{
			// [LIVE 2.1.330]: an HTTP 400 gives subtype success with
			// is_error true, and exit 1.
			name: "api error 400 with subtype success",
			lines: `{"type":"assistant","message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: 400 mock says no"}]},"error":"unknown","is_api_error_message":true,"api_error_status":400,"session_id":"s","parent_tool_use_id":null}
{"type":"result","subtype":"success","is_error":true,"api_error_status":400,"terminal_reason":"api_error","result":"API Error: 400 mock says no","session_id":"s","num_turns":1}`,
			exit: driver.Exit{Code: 1},
			check: func(t *testing.T, res *agentcli.Result, err error) {
				var re *agentcli.ResultError
				if !errors.As(err, &re) || re.APIStatus != 400 || re.TerminalReason != "api_error" || re.ExitCode != 1 ||
					!strings.Contains(re.Message, "mock says no") {
					t.Fatalf("err = %#v", err)
				}
				if res == nil || !res.IsError || res.SessionID != "s" {
					t.Fatalf("result %+v", res)
				}
			},
		},
		{
			name:  "exit 0 but is_error",
			lines: `{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"API Error: overloaded","session_id":"s"}`,
			check: func(t *testing.T, _ *agentcli.Result, err error) {
				if !errors.Is(err, agentcli.ErrResult) {
					t.Fatalf("exit 0 with is_error must fail: %v", err)
				}
			},
		},
		{
			name:  "rate limited",
			lines: `{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: 429","session_id":"s"}`,
			exit:  driver.Exit{Code: 1},
			check: func(t *testing.T, _ *agentcli.Result, err error) {
				if !errors.Is(err, agentcli.ErrRateLimited) || !errors.Is(err, agentcli.ErrResult) {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name:  "auth",
			lines: `{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key · Please run /login","session_id":"s"}`,
			exit:  driver.Exit{Code: 1},
			check: func(t *testing.T, _ *agentcli.Result, err error) {
				if !errors.Is(err, agentcli.ErrAuth) {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name:  "max turns",
			lines: `{"type":"result","subtype":"error_max_turns","duration_ms":5123,"is_error":true,"num_turns":3,"stop_reason":"tool_use","total_cost_usd":0.0123,"usage":{"input_tokens":2400,"output_tokens":310},"errors":["Reached maximum number of turns (3)"],"terminal_reason":"max_turns","session_id":"s"}`,
			exit:  driver.Exit{Code: 1},
			check: func(t *testing.T, res *agentcli.Result, err error) {
				var re *agentcli.ResultError
				if !errors.As(err, &re) || re.Subtype != "error_max_turns" || re.TerminalReason != "max_turns" ||
					re.Message != "Reached maximum number of turns (3)" {
					t.Fatalf("err = %#v", err)
				}
				if res.Turns != 3 || res.Usage.InputTokens != 2400 {
					t.Fatalf("result %+v", res)
				}
			},
		},
		{
			name: "session not found",
			exit: driver.Exit{Code: 1, Stderr: "No conversation found with session ID: 1b2c\n"},
			check: func(t *testing.T, _ *agentcli.Result, err error) {
				var ee *agentcli.ExitError
				if !errors.As(err, &ee) || !errors.Is(err, agentcli.ErrSessionNotFound) || ee.Code != 1 {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name: "root without IS_SANDBOX",
			exit: driver.Exit{Code: 1, Stderr: "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n"},
			check: func(t *testing.T, _ *agentcli.Result, err error) {
				if !errors.Is(err, agentcli.ErrExit) || !strings.Contains(err.Error(), "IS_SANDBOX=1") {
					t.Fatalf("err = %v; want a hint naming IS_SANDBOX=1", err)
				}
			},
		},
		{
			name:  "startup failure result",
			lines: `{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["MCP server failed"],"num_turns":0,"session_id":"s"}`,
			exit:  driver.Exit{Code: 1},
			check: func(t *testing.T, _ *agentcli.Result, err error) {
				var re *agentcli.ResultError
				if !errors.As(err, &re) || re.Subtype != "error_during_execution" || re.Message != "MCP server failed" {
					t.Fatalf("err = %v", err)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := parseAll(t, []byte(c.lines))
			res, err := spec.End(p, c.exit)
			c.check(t, res, err)
		})
	}
}

// Property: any valid stream the CLI could print yields exactly its text
// and session id; any non-zero exit without a result carries the stderr tail.
func TestParseProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.String().Draw(t, "text")
		sess := rapid.StringMatching(`[0-9a-f]{8}-[0-9a-f]{4}`).Draw(t, "session")
		chunks := rapid.IntRange(1, 5).Draw(t, "chunks")
		var b strings.Builder
		fmt.Fprintf(&b, `{"type":"system","subtype":"init","session_id":%s,"model":"m"}`+"\n", jsonStr(sess))
		runes := []rune(text)
		for i := 0; i < chunks; i++ {
			part := string(runes[i*len(runes)/chunks : (i+1)*len(runes)/chunks])
			fmt.Fprintf(&b, `{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":%s}},"session_id":%s}`+"\n", jsonStr(part), jsonStr(sess))
		}
		fmt.Fprintf(&b, `{"result":%s,"is_error":false,"subtype":"success","session_id":%s,"type":"result"}`+"\n", jsonStr(text), jsonStr(sess))
		p, evs := parseAll(t, []byte(b.String()))
		var deltas strings.Builder
		for _, e := range evs {
			if e.Kind == agentcli.EventTextDelta {
				deltas.WriteString(e.Text)
			}
		}
		res, err := spec.End(p, driver.Exit{})
		if err != nil || res.Text != strings.ToValidUTF8(text, "\uFFFD") || res.SessionID != sess || deltas.String() != res.Text {
			t.Fatalf("res %+v err %v deltas %q", res, err, deltas.String())
		}

		code := rapid.IntRange(1, 255).Draw(t, "code")
		stderr := rapid.StringMatching(`[a-zA-Z0-9 :.]{1,80}`).Draw(t, "stderr")
		_, err = spec.End(newParser(), driver.Exit{Code: code, Stderr: stderr})
		var ee *agentcli.ExitError
		if !errors.As(err, &ee) || ee.Code != code || ee.Stderr != strings.TrimSpace(stderr) {
			t.Fatalf("exit %d stderr %q: err %v", code, stderr, err)
		}
	})
}

func jsonStr(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// The tool table maps this CLI's tool names to canonical names and kinds;
// unknown tools pass through with kind ToolOther.
func TestTools(t *testing.T) {
	cases := []struct {
		raw, name string
		kind      agentcli.ToolKind
	}{
		{"Bash", "Bash", agentcli.ToolExecute},
		{"Read", "Read", agentcli.ToolRead},
		{"mcp__docs__search", "mcp__docs__search", agentcli.ToolOther},
		{"Agent", "Task", agentcli.ToolThink},
	}
	for _, c := range cases {
		if name, kind := tools.Canonical(c.raw); name != c.name || kind != c.kind {
			t.Errorf("Canonical(%q) = %q, %q; want %q, %q", c.raw, name, kind, c.name, c.kind)
		}
	}
}
