package opencode

import (
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

// parseAll feeds out to a new parser line by line.
func parseAll(_ any, out []byte) (driver.Parser, []agentcli.Event) {
	p := newParser()
	var evs []agentcli.Event
	for _, l := range bytes.Split(out, []byte("\n")) {
		evs = append(evs, p.Line(l)...)
	}
	return p, evs
}

func kinds(evs []agentcli.Event) []agentcli.EventKind {
	var ks []agentcli.EventKind
	for _, ev := range evs {
		ks = append(ks, ev.Kind)
	}
	return ks
}

func ofKind(evs []agentcli.Event, k agentcli.EventKind) []agentcli.Event {
	var out []agentcli.Event
	for _, ev := range evs {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

func intp(i int) *int                    { return &i }
func usage(in, out int64) agentcli.Usage { return agentcli.Usage{InputTokens: in, OutputTokens: out} }

const (
	E = agentcli.EventInit
	T = agentcli.EventText
	H = agentcli.EventThinking
	U = agentcli.EventToolUse
	R = agentcli.EventToolResult
	S = agentcli.EventUsage
	N = agentcli.EventNotice
	X = agentcli.EventUnknown
)

// TestRealTranscripts parses output captured from the real opencode 1.18.33
// (testdata/real, see its README). The expected texts are what the scripted
// model server was told to answer.
func TestRealTranscripts(t *testing.T) {
	type want struct {
		text  string
		kinds []agentcli.EventKind
	}
	cases := map[string]want{
		"text":       {"Hello from agentclitest.", []agentcli.EventKind{E, T, S}},
		"dashprompt": {"Hello from agentclitest.", []agentcli.EventKind{E, T, S}},
		"thinking":   {"Hello from agentclitest.", []agentcli.EventKind{E, H, T, S}},
		"tool":       {"The command printed conformance.", []agentcli.EventKind{E, U, R, S, T, S}},
		"resume-1":   {"I will remember apple.", []agentcli.EventKind{E, T, S}},
		"resume-2":   {"The word was apple.", []agentcli.EventKind{E, T, S}},
		"error400":   {"", []agentcli.EventKind{E, N}},
	}
	sessions := map[string]string{}
	for _, name := range []string{"text", "dashprompt", "thinking", "tool", "resume-1", "resume-2", "error400"} {
		w := cases[name]
		t.Run(name, func(t *testing.T) {
			tr := backendtest.ReadTranscript(t, name)
			out, stderr, code := tr.Stdout, tr.Stderr, tr.Exit
			p, evs := parseAll(t, out)
			if diff := cmp.Diff(w.kinds, kinds(evs)); diff != "" {
				t.Errorf("event kinds (-want +got):\n%s", diff)
			}
			for _, ev := range evs {
				if ev.SessionID == "" || !strings.HasPrefix(ev.SessionID, "ses_") {
					t.Errorf("event without session id: %+v", ev)
				}
			}
			res, err := spec.End(p, driver.Exit{Code: code, Stderr: string(stderr)})
			if name == "error400" {
				var re *agentcli.ResultError
				if !errors.As(err, &re) || re.APIStatus != 400 || re.ExitCode != 1 || re.Subtype != "APIError" ||
					re.Message != "agentclitest says no" || re.Kind != nil || res == nil || !res.IsError ||
					!strings.HasPrefix(res.SessionID, "ses_") || errors.Is(err, agentcli.ErrExit) {
					t.Fatalf("err = %#v, res = %+v", err, res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != w.text || !strings.HasPrefix(res.SessionID, "ses_") || res.CostUSD == nil || *res.CostUSD != 0 ||
				res.StopReason != "stop" || res.IsError {
				t.Fatalf("result %+v", res)
			}
			steps := len(ofKind(evs, S))
			if res.Turns != steps || res.Usage != usage(int64(10*steps), int64(5*steps)) {
				t.Fatalf("turns %d usage %+v; want %d steps of 10/5 tokens", res.Turns, res.Usage, steps)
			}
			sessions[name] = res.SessionID
			switch name {
			case "resume-2":
				if sessions["resume-1"] == "" || sessions["resume-1"] != res.SessionID {
					t.Fatalf("resumed session %s, first run %s", res.SessionID, sessions["resume-1"])
				}
			case "tool":
				use, result := ofKind(evs, U)[0].Tool, ofKind(evs, R)[0].ToolResult
				if use.Name != agentcli.ToolNameBash || use.RawName != "bash" || use.Kind != agentcli.ToolExecute ||
					use.ID != "call_agentclitest_2" || !strings.Contains(string(use.Input), `"command":"echo conformance"`) {
					t.Fatalf("tool use %+v", use)
				}
				if diff := cmp.Diff(&agentcli.ToolResult{ID: use.ID, Output: "conformance\n", ExitCode: intp(0)}, result); diff != "" {
					t.Fatalf("tool result (-want +got):\n%s", diff)
				}
			case "thinking":
				if th := ofKind(evs, H)[0]; th.Text != "The user wants a greeting; keep it short." || th.Delta {
					t.Fatalf("thinking %+v", th)
				}
			}
		})
	}
}

// TestLiveTranscripts parses the extra transcripts in live_test.go.
func TestLiveTranscripts(t *testing.T) {
	run := func(t *testing.T, name string) (*agentcli.Result, []agentcli.Event, error) {
		l := live[name]
		p, evs := parseAll(t, []byte(l.stdout))
		for _, ev := range evs {
			if ev.Kind == N && ev.Err != nil {
				t.Errorf("parse error on real output: %v", ev.Err)
			}
		}
		res, err := spec.End(p, driver.Exit{Code: l.exit, Stderr: l.stderr})
		return res, evs, err
	}
	t.Run("multistep", func(t *testing.T) {
		res, evs, err := run(t, "multistep")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]agentcli.EventKind{E, T, U, R, S, T, U, R, S, T, S}, kinds(evs)); diff != "" {
			t.Fatalf("kinds (-want +got):\n%s", diff)
		}
		// Only the last step's text is the answer.
		if res.Text != "final" || res.Turns != 3 || res.Usage != usage(30, 15) || res.StopReason != "stop" {
			t.Fatalf("result %+v", res)
		}
		var outs []string
		for _, ev := range ofKind(evs, R) {
			outs = append(outs, ev.ToolResult.Output)
		}
		if diff := cmp.Diff([]string{"one\n", "two\n"}, outs); diff != "" {
			t.Fatal(diff)
		}
		// Usage events carry the sum so far.
		var ins []int64
		for _, ev := range ofKind(evs, S) {
			ins = append(ins, ev.Usage.InputTokens)
		}
		if diff := cmp.Diff([]int64{10, 20, 30}, ins); diff != "" {
			t.Fatal(diff)
		}
	})
	t.Run("rejected permission", func(t *testing.T) {
		// Without --auto, an "ask" permission is rejected; the run still
		// exits 0 and ends after the failed tool step, with no text.
		res, evs, err := run(t, "rejected")
		if err != nil {
			t.Fatal(err)
		}
		r := ofKind(evs, R)[0].ToolResult
		if !r.IsError || r.Output != "The user rejected permission to use this specific tool call." || r.ExitCode != nil {
			t.Fatalf("tool result %+v", r)
		}
		if res.Text != "" || res.StopReason != "tool-calls" {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("usage split", func(t *testing.T) {
		// prompt 100 tokens of which 30 cached; completion 20 of which 7
		// reasoning.
		res, evs, err := run(t, "usage")
		if err != nil {
			t.Fatal(err)
		}
		want := agentcli.Usage{InputTokens: 70, CacheReadTokens: 30, OutputTokens: 13 + 7, ReasoningTokens: 7}
		if res.Usage != want || res.Text != "thought answer" {
			t.Fatalf("result %+v", res)
		}
		if th := ofKind(evs, H); len(th) != 1 || th[0].Text != "let me think" {
			t.Fatalf("thinking %+v", th)
		}
	})
	t.Run("401", func(t *testing.T) {
		res, _, err := run(t, "err401")
		var re *agentcli.ResultError
		if !errors.As(err, &re) || re.APIStatus != 401 || !errors.Is(err, agentcli.ErrAuth) || !errors.Is(err, agentcli.ErrResult) ||
			re.Message != "bad key" || !res.IsError {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("unknown error", func(t *testing.T) {
		_, _, err := run(t, "unknown")
		var re *agentcli.ResultError
		if !errors.As(err, &re) || re.Subtype != "UnknownError" || re.APIStatus != 0 || re.Kind != nil ||
			!strings.Contains(re.Message, "Unexpected server error") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("session not found", func(t *testing.T) {
		res, _, err := run(t, "nosess")
		var ee *agentcli.ExitError
		if !errors.As(err, &ee) || ee.Code != 1 || !errors.Is(err, agentcli.ErrSessionNotFound) || res != nil {
			t.Fatalf("err = %v", err)
		}
		if ee.Stderr != "Error: Session not found" {
			t.Fatalf("stderr %q: colours not stripped", ee.Stderr)
		}
	})
}

// Hand-written lines in the shapes of wire-formats.md §5.2.

func line(typ, sess, rest string) string {
	s := fmt.Sprintf(`{"type":%s,"timestamp":1795301966582,"sessionID":%s`, q(typ), q(sess))
	if rest != "" {
		s += "," + rest
	}
	return s + "}"
}

func finishPart(msg, reason string, in, out int, cost string) string {
	c := ""
	if cost != "" {
		c = `,"cost":` + cost
	}
	return fmt.Sprintf(`"part":{"id":"prt_f","messageID":%q,"sessionID":"ses_1","type":"step-finish","reason":%q,"tokens":{"total":%d,"input":%d,"output":%d,"reasoning":0,"cache":{"write":1,"read":2}}%s}`,
		msg, reason, in+out+3, in, out, c)
}

func TestParseHandWritten(t *testing.T) {
	type tc struct {
		name  string
		lines []string
		exit  driver.Exit
		kinds []agentcli.EventKind
		check func(t *testing.T, res *agentcli.Result, evs []agentcli.Event, err error)
	}
	okText := func(text string) func(t *testing.T, res *agentcli.Result, evs []agentcli.Event, err error) {
		return func(t *testing.T, res *agentcli.Result, _ []agentcli.Event, err error) {
			t.Helper()
			if err != nil || res.Text != text || res.SessionID != "ses_1" {
				t.Fatalf("res %+v err %v; want text %q", res, err, text)
			}
		}
	}
	cases := []tc{
		{
			name: "wire-formats example: tool step then text step",
			lines: []string{
				line("step_start", "ses_1", `"part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_1","type":"step-start"}`),
				line("tool_use", "ses_1", `"part":{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed","input":{"command":"echo hi","description":"print hi"},"output":"hi\n","metadata":{"output":"hi\n","exit":0,"truncated":false},"title":"echo hi","time":{"start":1,"end":2}},"id":"prt_2","sessionID":"ses_1","messageID":"msg_1"}`),
				line("step_finish", "ses_1", finishPart("msg_1", "tool-calls", 10, 5, "0.25")),
				// the second step's step_start is missing, as in the doc's example
				line("text", "ses_1", `"part":{"id":"prt_3","messageID":"msg_2","sessionID":"ses_1","type":"text","text":"hello from mock","time":{"start":1,"end":2}}`),
				line("step_finish", "ses_1", finishPart("msg_2", "stop", 10, 5, "0.5")),
			},
			kinds: []agentcli.EventKind{E, U, R, S, T, S},
			check: func(t *testing.T, res *agentcli.Result, evs []agentcli.Event, err error) {
				okText("hello from mock")(t, res, evs, err)
				want := agentcli.Usage{InputTokens: 20, OutputTokens: 10, CacheReadTokens: 4, CacheWriteTokens: 2}
				if res.Usage != want || res.CostUSD == nil || *res.CostUSD != 0.75 || res.Turns != 2 {
					t.Fatalf("res %+v", res)
				}
				if !strings.Contains(string(res.Raw), `"reason":"stop"`) {
					t.Fatalf("raw %s", res.Raw)
				}
			},
		},
		{
			name: "several text parts in the last step",
			lines: []string{
				line("step_start", "ses_1", `"part":{"messageID":"msg_1","type":"step-start"}`),
				line("text", "ses_1", `"part":{"messageID":"msg_1","type":"text","text":"earlier"}`),
				line("step_finish", "ses_1", finishPart("msg_1", "tool-calls", 1, 1, "")),
				line("step_start", "ses_1", `"part":{"messageID":"msg_2","type":"step-start"}`),
				line("text", "ses_1", `"part":{"messageID":"msg_2","type":"text","text":"one"}`),
				line("text", "ses_1", `"part":{"messageID":"msg_2","type":"text","text":"two"}`),
				line("step_finish", "ses_1", finishPart("msg_2", "stop", 1, 1, "")),
			},
			kinds: []agentcli.EventKind{E, T, S, T, T, S},
			check: func(t *testing.T, res *agentcli.Result, evs []agentcli.Event, err error) {
				okText("one\ntwo")(t, res, evs, err)
				if res.CostUSD != nil {
					t.Fatalf("cost %v without a cost field", *res.CostUSD)
				}
			},
		},
		{
			name: "step_start without message ids resets the step",
			lines: []string{
				line("step_start", "ses_1", ""),
				line("text", "ses_1", `"part":{"type":"text","text":"a"}`),
				line("step_finish", "ses_1", `"part":{"type":"step-finish","reason":"tool-calls"}`),
				line("step_start", "ses_1", ""),
				line("text", "ses_1", `"part":{"type":"text","text":"b"}`),
				line("step_finish", "ses_1", `"part":{"type":"step-finish","reason":"stop"}`),
			},
			kinds: []agentcli.EventKind{E, T, S, T, S},
			check: okText("b"),
		},
		{
			name:  "only step_start is no result",
			lines: []string{line("step_start", "ses_1", "")},
			kinds: []agentcli.EventKind{E},
			check: func(t *testing.T, res *agentcli.Result, _ []agentcli.Event, err error) {
				if !errors.Is(err, agentcli.ErrNoResult) || errors.Is(err, agentcli.ErrExit) || res != nil {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name: "a step left open is no result",
			lines: []string{
				line("step_start", "ses_1", `"part":{"messageID":"msg_1"}`),
				line("step_finish", "ses_1", finishPart("msg_1", "tool-calls", 1, 1, "0")),
				line("step_start", "ses_1", `"part":{"messageID":"msg_2"}`),
				line("text", "ses_1", `"part":{"messageID":"msg_2","type":"text","text":"half"}`),
			},
			kinds: []agentcli.EventKind{E, S, T},
			check: func(t *testing.T, _ *agentcli.Result, _ []agentcli.Event, err error) {
				if !errors.Is(err, agentcli.ErrNoResult) {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name: "empty output, exit 0",
			check: func(t *testing.T, _ *agentcli.Result, _ []agentcli.Event, err error) {
				var ne *agentcli.NoResultError
				if !errors.As(err, &ne) || ne.Code != 0 {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name: "done ends the run (dev builds)",
			lines: []string{
				line("step_start", "ses_1", ""),
				line("text", "ses_1", `"part":{"type":"text","text":"hi"}`),
				line("step_finish", "ses_1", finishPart("", "stop", 1, 1, "0")),
				line("done", "ses_1", `"reason":"idle","rejected":[]`),
			},
			kinds: []agentcli.EventKind{E, T, S},
			check: func(t *testing.T, res *agentcli.Result, evs []agentcli.Event, err error) {
				okText("hi")(t, res, evs, err)
				if res.TerminalReason != "idle" || !strings.Contains(string(res.Raw), `"done"`) {
					t.Fatalf("res %+v", res)
				}
			},
		},
		{
			name:  "done alone is terminal; rejected permissions become a notice",
			lines: []string{line("done", "ses_1", `"reason":"idle","rejected":["bash","edit"]`)},
			kinds: []agentcli.EventKind{E, N},
			check: func(t *testing.T, res *agentcli.Result, evs []agentcli.Event, err error) {
				okText("")(t, res, evs, err)
				if n := ofKind(evs, N)[0]; n.Text != "opencode rejected permission requests: bash, edit" || n.Err != nil {
					t.Fatalf("notice %+v", n)
				}
			},
		},
		{
			name:  "API error 429",
			lines: []string{line("error", "ses_1", `"error":{"name":"APIError","data":{"message":"slow down","statusCode":429,"isRetryable":true}}`)},
			exit:  driver.Exit{Code: 1},
			kinds: []agentcli.EventKind{E, N},
			check: func(t *testing.T, res *agentcli.Result, evs []agentcli.Event, err error) {
				var re *agentcli.ResultError
				if !errors.As(err, &re) || re.APIStatus != 429 || !errors.Is(err, agentcli.ErrRateLimited) || re.Message != "slow down" {
					t.Fatalf("err = %v", err)
				}
				if evs[1].Text != "APIError: slow down" {
					t.Fatalf("notice %q", evs[1].Text)
				}
			},
		},
		{
			name:  "provider auth error",
			lines: []string{line("error", "ses_1", `"error":{"name":"ProviderAuthError","data":{"providerID":"anthropic","message":"missing key"}}`)},
			exit:  driver.Exit{Code: 1},
			kinds: []agentcli.EventKind{E, N},
			check: func(t *testing.T, _ *agentcli.Result, _ []agentcli.Event, err error) {
				var re *agentcli.ResultError
				if !errors.As(err, &re) || !errors.Is(err, agentcli.ErrAuth) || re.Subtype != "ProviderAuthError" || re.APIStatus != 0 {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name: "error after a finished step wins over exit 0",
			lines: []string{
				line("step_start", "ses_1", ""),
				line("step_finish", "ses_1", finishPart("", "stop", 3, 4, "0.5")),
				line("error", "ses_1", `"error":"plain string error"`),
				line("error", "ses_1", `"error":{"weird":true}`),
			},
			kinds: []agentcli.EventKind{E, S, N, N},
			check: func(t *testing.T, res *agentcli.Result, _ []agentcli.Event, err error) {
				var re *agentcli.ResultError
				if !errors.As(err, &re) || re.Message != `plain string error; {"weird":true}` || re.ExitCode != 0 {
					t.Fatalf("err = %v", err)
				}
				if !res.IsError || res.Usage != (agentcli.Usage{InputTokens: 3, OutputTokens: 4, CacheReadTokens: 2, CacheWriteTokens: 1}) ||
					*res.CostUSD != 0.5 || res.SessionID != "ses_1" {
					t.Fatalf("res %+v", res)
				}
			},
		},
		{
			name: "non-zero exit without an error line",
			lines: []string{
				line("step_start", "ses_1", ""),
				line("step_finish", "ses_1", finishPart("", "stop", 1, 1, "0")),
			},
			exit:  driver.Exit{Code: 1, Stderr: "\x1b[91m\x1b[1mError: \x1b[0mUnexpected error\nboom"},
			kinds: []agentcli.EventKind{E, S},
			check: func(t *testing.T, res *agentcli.Result, _ []agentcli.Event, err error) {
				var ee *agentcli.ExitError
				if !errors.As(err, &ee) || ee.Code != 1 || ee.Stderr != "Error: Unexpected error\nboom" || res != nil {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name: "empty prompt",
			exit: driver.Exit{Code: 1, Stderr: "\x1b[91m\x1b[1mError: \x1b[0mYou must provide a message or a command\n"},
			check: func(t *testing.T, _ *agentcli.Result, _ []agentcli.Event, err error) {
				var ee *agentcli.ExitError
				if !errors.As(err, &ee) || ee.Hint != "the prompt was empty" {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name: "tool error, unknown tool, unknown line, synthetic text, noise",
			lines: []string{
				"Loading...",
				`[1,2]`,
				`{"broken":`,
				line("step_start", "ses_1", ""),
				line("tool_use", "ses_1", `"part":{"type":"tool","tool":"mcp_github_search","callID":"c9","state":{"status":"error","input":{"q":1},"error":"no network","time":{"start":1,"end":2}}}`),
				line("tool_use", "ses_1", `"part":{"type":"tool","tool":"read","callID":"c10","state":{"status":"running","input":{}}}`),
				line("from_the_future", "ses_1", `"payload":{"a":[1]}`),
				line("text", "ses_1", `"part":{"type":"text","text":"injected","synthetic":true}`),
				line("text", "ses_1", `"part":{"type":"text","text":"real"}`),
				line("step_finish", "ses_1", finishPart("", "stop", 1, 1, "0")),
			},
			kinds: []agentcli.EventKind{N, N, N, E, U, R, U, X, X, T, S},
			check: func(t *testing.T, res *agentcli.Result, evs []agentcli.Event, err error) {
				okText("real")(t, res, evs, err)
				for _, n := range evs[:3] {
					if !errors.Is(n.Err, agentcli.ErrParse) {
						t.Fatalf("notice %+v", n)
					}
				}
				want := &agentcli.ToolUse{ID: "c9", Name: "mcp_github_search", RawName: "mcp_github_search", Kind: agentcli.ToolOther, Input: json.RawMessage(`{"q":1}`)}
				if diff := cmp.Diff(want, evs[4].Tool); diff != "" {
					t.Fatal(diff)
				}
				if diff := cmp.Diff(&agentcli.ToolResult{ID: "c9", Output: "no network", IsError: true}, evs[5].ToolResult); diff != "" {
					t.Fatal(diff)
				}
				if evs[6].Tool.Name != agentcli.ToolNameRead {
					t.Fatalf("read → %+v", evs[6].Tool)
				}
				if !strings.Contains(string(evs[7].Raw), "from_the_future") {
					t.Fatalf("unknown line lost its raw: %+v", evs[7])
				}
			},
		},
		{
			name: "wrong-typed fields do not lose the line",
			lines: []string{
				`{"part":{"type":"step-start","messageID":7},"sessionID":"ses_1","type":"step_start"}`,
				`{"sessionID":"ses_1","type":"text","part":{"text":"kept","time":"later","synthetic":"no"}}`,
				`{"type":"step_finish","sessionID":"ses_1","part":{"tokens":{"input":"many","output":5,"cache":[]},"cost":"free","reason":"stop"}}`,
			},
			kinds: []agentcli.EventKind{E, T, S},
			check: func(t *testing.T, res *agentcli.Result, evs []agentcli.Event, err error) {
				okText("kept")(t, res, evs, err)
				if res.Usage.OutputTokens != 5 || res.CostUSD != nil {
					t.Fatalf("res %+v", res)
				}
			},
		},
		{
			name: "session id from the part when the envelope lacks it",
			lines: []string{
				`{"type":"step_start","part":{"sessionID":"ses_1"}}`,
				`{"type":"step_finish","part":{"sessionID":"ses_1","reason":"stop"}}`,
			},
			kinds: []agentcli.EventKind{E, S},
			check: okText(""),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, evs := parseAll(t, []byte(strings.Join(c.lines, "\n")))
			if c.kinds != nil || len(evs) > 0 {
				if diff := cmp.Diff(c.kinds, kinds(evs), cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("kinds (-want +got):\n%s", diff)
				}
			}
			res, err := spec.End(p, c.exit)
			c.check(t, res, evs, err)
		})
	}
}

// TestKeyOrder reorders the keys of real lines: the events must not change.
func TestKeyOrder(t *testing.T) {
	out := live["multistep"].stdout
	_, want := parseAll(t, []byte(out))
	var shuffled []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		// Go marshals map keys sorted, which puts "part" and "sessionID"
		// before "type" and "timestamp".
		b, _ := json.Marshal(m)
		shuffled = append(shuffled, string(b))
	}
	_, got := parseAll(t, []byte(strings.Join(shuffled, "\n")))
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(agentcli.Event{}, "Raw")); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestParseProperties: any generated valid output yields exactly its last
// step's text, its session id and the summed usage; a non-zero exit with no
// error line yields an error carrying the stderr tail.
func TestParseProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sess := rapid.StringMatching(`ses_[A-Za-z0-9]{1,26}`).Draw(t, "session")
		nSteps := rapid.IntRange(1, 5).Draw(t, "steps")
		var lines []string
		var lastTexts []string
		var sum agentcli.Usage
		cost := 0.0
		for s := 0; s < nSteps; s++ {
			msg := fmt.Sprintf("msg_%d", s)
			lines = append(lines, stepStart(sess, msg))
			var texts []string
			for i := rapid.IntRange(0, 3).Draw(t, "texts"); i > 0; i-- {
				txt := rapid.String().Draw(t, "text")
				texts = append(texts, txt)
				lines = append(lines, textLine(sess, msg, txt))
			}
			if rapid.Bool().Draw(t, "thinking") {
				lines = append(lines, line("reasoning", sess, fmt.Sprintf(`"part":{"messageID":%q,"type":"reasoning","text":%s}`, msg, q(rapid.String().Draw(t, "th")))))
			}
			last := s == nSteps-1
			if !last {
				lines = append(lines, line("tool_use", sess, fmt.Sprintf(`"part":{"messageID":%q,"type":"tool","tool":"bash","callID":"c%d","state":{"status":"completed","input":{"command":"x"},"output":"o"}}`, msg, s)))
			}
			in, out := rapid.IntRange(0, 1e6).Draw(t, "in"), rapid.IntRange(0, 1e6).Draw(t, "out")
			sum = sum.Add(agentcli.Usage{InputTokens: int64(in), OutputTokens: int64(out), CacheReadTokens: 2, CacheWriteTokens: 1})
			cost += 0.5
			lines = append(lines, line("step_finish", sess, strings.Replace(finishPart(msg, "stop", in, out, "0.5"), `"sessionID":"ses_1"`, `"sessionID":`+q(sess), 1)))
			lastTexts = texts
		}
		p, evs := parseAll(t, []byte(strings.Join(lines, "\n")))
		for _, ev := range evs {
			if ev.SessionID != sess || ev.Kind == N || ev.Kind == X {
				t.Fatalf("event %+v", ev)
			}
		}
		code := 0
		stderr := ""
		if rapid.Bool().Draw(t, "fail") {
			code = rapid.IntRange(1, 255).Draw(t, "code")
			stderr = strings.Repeat("noise\n", rapid.IntRange(0, 200).Draw(t, "noise")) + "fatal: " + rapid.StringMatching(`[a-z]{1,20}( [a-z]{1,20})?`).Draw(t, "msg")
		}
		res, err := spec.End(p, driver.Exit{Code: code, Stderr: stderr})
		if code != 0 {
			var ee *agentcli.ExitError
			if !errors.As(err, &ee) || ee.Code != code || !strings.HasSuffix(stderr, ee.Stderr) || !strings.Contains(ee.Stderr, "fatal: ") {
				t.Fatalf("err = %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != strings.Join(lastTexts, "\n") || res.SessionID != sess || res.Usage != sum || *res.CostUSD != cost || res.Turns != nSteps {
			t.Fatalf("res %+v; want text %q usage %+v", res, strings.Join(lastTexts, "\n"), sum)
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
		{"bash", "Bash", agentcli.ToolExecute},
		{"webfetch", "WebFetch", agentcli.ToolFetch},
		{"some_plugin_tool", "some_plugin_tool", agentcli.ToolOther},
	}
	for _, c := range cases {
		if name, kind := tools.Canonical(c.raw); name != c.name || kind != c.kind {
			t.Errorf("Canonical(%q) = %q, %q; want %q, %q", c.raw, name, kind, c.name, c.kind)
		}
	}
}
