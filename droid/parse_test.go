package droid

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// parseFile runs the parser over a transcript of droid 0.225.2 (exec
// -o stream-json against agentclitest's server) and decides the run as the
// kit does, for exit status exit.
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
	res, err := spec.End(p, driver.Exit{Code: exit})
	return evs, res, err
}

func TestParseText(t *testing.T) {
	evs, res, err := parseFile(t, "text1.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello from mock" || res.SessionID != "cc1ae009-4718-4094-88ce-bc4267a04c52" || res.Turns != 1 || res.IsError {
		t.Errorf("result %+v", res)
	}
	if res.Usage.InputTokens != 10 || res.Usage.OutputTokens != 5 {
		t.Errorf("usage %+v", res.Usage)
	}
	if len(evs) == 0 || evs[0].Kind != agentcli.EventInit || evs[0].SessionID != res.SessionID {
		t.Errorf("first event %+v", evs)
	}
}

func TestParseShell(t *testing.T) {
	evs, res, err := parseFile(t, "shell-skip-high.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	var use *agentcli.ToolUse
	var out *agentcli.ToolResult
	for _, ev := range evs {
		switch ev.Kind {
		case agentcli.EventToolUse:
			use = ev.Tool
		case agentcli.EventToolResult:
			out = ev.ToolResult
		}
	}
	if use == nil || use.Name != "Bash" || use.RawName != "Execute" || use.ID != "call_agentclitest_1" {
		t.Fatalf("tool use %+v", use)
	}
	if out == nil || out.ID != use.ID || out.IsError || !strings.HasPrefix(out.Output, "hi\n") {
		t.Fatalf("tool result %+v", out)
	}
	if res.Text != "done after shell" || res.Turns != 2 {
		t.Errorf("result %+v", res)
	}
}

// A model call that failed: droid prints two error lines and no
// completion, and exits 1.
func TestParseAPIError(t *testing.T) {
	_, res, err := parseFile(t, "err400.jsonl", 1)
	var re *agentcli.ResultError
	if !errors.As(err, &re) || re.APIStatus != 400 || !strings.Contains(re.Message, "400 Bad Request") || !strings.Contains(re.Message, "Exec failed") {
		t.Fatalf("err = %#v", err)
	}
	if res == nil || !res.IsError || res.SessionID != "f02bf132-47e7-4564-b1f7-52e41507158c" {
		t.Errorf("result %+v", res)
	}
}

// Lines of the future are kept, never fatal; output without a completion
// is no result.
func TestParseTolerates(t *testing.T) {
	p := newParser()
	for _, l := range []string{`{"type":"hologram","x":1}`, `not json`, `{"type":"message","role":"narrator","text":"?"}`, `{"type":"tool_call"}`, `[]`} {
		evs := p.Line([]byte(l))
		if len(evs) == 0 {
			t.Errorf("%s: no event", l)
		}
		for _, ev := range evs {
			if ev.Kind != agentcli.EventUnknown && ev.Kind != agentcli.EventNotice && ev.Kind != agentcli.EventToolUse && ev.Kind != agentcli.EventText {
				t.Errorf("%s: event %+v", l, ev)
			}
		}
	}
	_, err := spec.End(p, driver.Exit{})
	if !errors.Is(err, agentcli.ErrNoResult) {
		t.Fatalf("err = %v; want ErrNoResult", err)
	}
	p = newParser()
	p.Line([]byte(`{"type":"completion","finalText":"ok","session_id":"s"}`))
	if _, err := spec.End(p, driver.Exit{Code: 2}); !errors.Is(err, agentcli.ErrResult) {
		t.Fatalf("a completion and exit 2: %v; want a ResultError", err)
	}
}
