package gemini

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/benchdata"
)

// Hostile output (issue 7): each case is checked on the parser, and
// TestRobustOracle shows that the oracle (the former parser) failed it.

type robustCase struct {
	name   string
	format format
	lines  string
	check  func(r backendtest.Run) error
}

const prettyDoc = "{\n  \"session_id\": \"s\",\n  \"response\": \"hello\",\n  \"stats\": {\n    \"models\": {\n      \"m\": {\n        \"tokens\": {\n          \"prompt\": 3,\n          \"candidates\": 2\n        }\n      }\n    }\n  }\n}"

func wantHello(r backendtest.Run) error {
	if r.Err != nil || r.Result == nil || r.Result.Text != "hello" || r.Result.SessionID != "s" {
		return fmt.Errorf("result %+v, err %v; want the document's answer", r.Result, r.Err)
	}
	return nil
}

var robustCases = []robustCase{
	{name: "stray line that is not JSON", format: formatJSON, lines: "{oops, not json\n" + prettyDoc, check: wantHello},
	{name: "stray start of a document", format: formatJSON, lines: "{\"partial\": [1,\n" + prettyDoc, check: wantHello},
	{name: "stray compact object with trailing text", format: formatJSON, lines: "{\"a\":1} and more\n" + prettyDoc, check: wantHello},
	{name: "a document that is not JSON, then one that is", format: formatJSON, lines: "{\n  \"a\": tru\n}\n" + prettyDoc, check: wantHello},
	{
		name:   "negative counts",
		format: formatStream,
		lines:  `{"type":"result","status":"success","stats":{"input_tokens":5,"output_tokens":-3,"cached":-10,"input":-1}}`,
		check: func(r backendtest.Run) error {
			if r.Result == nil || r.Result.Usage != (agentcli.Usage{}) {
				return fmt.Errorf("result %+v, want zero usage", r.Result)
			}
			return backendtest.CheckEvents(r)
		},
	},
	{
		name:   "negative and huge counts in the document",
		format: formatJSON,
		lines:  `{"session_id":"s","response":"x","stats":{"models":{"a":{"tokens":{"prompt":-5,"cached":-10,"candidates":9223372036854775807,"thoughts":9223372036854775807}},"b":{"tokens":{"input":-1,"candidates":5}}}}}`,
		check: func(r backendtest.Run) error {
			u := r.Result.Usage
			if u.InputTokens != 0 || u.CacheReadTokens != 0 || u.OutputTokens != math.MaxInt64 || u.ReasoningTokens != math.MaxInt64 {
				return fmt.Errorf("usage %+v, want clamped and saturated counts", u)
			}
			return backendtest.CheckEvents(r)
		},
	},
}

func TestRobust(t *testing.T) {
	for _, c := range robustCases {
		t.Run(c.name, func(t *testing.T) {
			r := backendtest.Parse(&spec, newParser(c.format), backendtest.SplitLines([]byte(c.lines)), driver.Exit{})
			if err := c.check(r); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRobustOracle: every case above is one the former parser got wrong.
func TestRobustOracle(t *testing.T) {
	for _, c := range robustCases {
		t.Run(c.name, func(t *testing.T) {
			r := backendtest.Parse(&spec, newOracleParser(c.format), backendtest.SplitLines([]byte(c.lines)), driver.Exit{})
			if c.check(r) == nil {
				t.Fatal("the oracle passes this case")
			}
		})
	}
}

// unterminated is a json document that never ends: n lines of members.
func unterminated(n int) [][]byte {
	lines := [][]byte{[]byte("{")}
	for range n {
		lines = append(lines, []byte(`  "k": "0123456789012345678901234567890123456789",`))
	}
	return lines
}

// A document that never ends is kept up to the limit only (the oracle
// buffered all of it: 1.1 GB with MaxLineBytes at 1 MiB), reported once,
// and skipped to its end without being kept.
func TestDocumentBounded(t *testing.T) {
	const limit = 4 << 10
	lines := append(unterminated(1000), []byte("}"))
	lines = append(lines, []byte(strings.ReplaceAll(prettyDoc, "\n", "")))
	p := newJSONParser()
	p.limit = limit
	notices, kept := 0, 0
	for _, l := range lines {
		for _, ev := range p.Line(l) {
			var tl *agentcli.LineTooLongError
			if ev.Kind == agentcli.EventNotice {
				notices++
				if !errors.As(ev.Err, &tl) || tl.Limit != limit {
					t.Fatalf("notice %+v, want a LineTooLongError", ev)
				}
			}
		}
		kept = max(kept, cap(p.doc.buf))
	}
	if notices != 1 || kept > 2*limit {
		t.Fatalf("%d notices, %d bytes kept; want 1 notice and at most %d bytes", notices, kept, 2*limit)
	}
	if res, err := spec.End(p, driver.Exit{}); err != nil || res.Text != "hello" {
		t.Fatalf("the document after the skipped one: %+v, %v", res, err)
	}

	o := newOracleParser(formatJSON)
	for _, l := range unterminated(1000) {
		o.Line(l)
	}
	if o.doc.Len() <= 10*limit {
		t.Fatalf("the oracle kept only %d bytes", o.doc.Len())
	}
}

// nestedLines is the document that cost the oracle quadratic time: a
// top-level object that stays open while n lines of "}" close members.
func nestedLines(n int) [][]byte {
	lines := [][]byte{[]byte(`{"session_id":"s","a":1`)}
	for range n {
		lines = append(lines, []byte(`,"b":{`), []byte(`}`))
	}
	return append(lines, []byte("}"))
}

// The document is decoded once, when its brackets balance, however many
// lines close a member (BenchmarkLinear shows the cost per byte).
func TestDocumentDecodedOnce(t *testing.T) {
	p := newJSONParser()
	lines := nestedLines(1000)
	for i, l := range lines {
		evs := p.Line(l)
		if i < len(lines)-1 && (len(evs) != 0 || p.jdoc != nil) {
			t.Fatalf("line %d: the document ended early: %+v", i, evs)
		}
	}
	if p.jdoc == nil || p.doc.active {
		t.Fatal("the document was not read")
	}
}

// A result line or tool parameters that are not valid JSON where no event
// reads them are a notice: json.Marshal must accept every event and result.
func TestInvalidKeptJSON(t *testing.T) {
	for _, line := range []string{
		`{"type":"result","status":"success","stats":{"input_tokens":1},"x":{"a":tru}}`,
		`{"type":"tool_use","tool_name":"x","tool_id":"t","parameters":{"a":tru}}`,
	} {
		r := backendtest.Parse(&spec, newParser(formatStream), backendtest.SplitLines([]byte(line)), driver.Exit{})
		if err := backendtest.CheckEvents(r); err != nil {
			t.Fatal(err)
		}
		if k := r.Events[0][0].Kind; k != agentcli.EventNotice {
			t.Fatalf("%s: got a %s event, want a notice", line, k)
		}
	}
}

// A stream of many batches, decoded on the runner's goroutines, yields
// what replaying its wire log line by line yields.
func TestLargeStreamReplay(t *testing.T) {
	backendtest.LargeStreamReplay(t, New, benchdata.Stream(benchdata.Gemini, 4<<20), benchdata.HugeLine(benchdata.Gemini, 1<<20))
}

// A huge line costs a run about its own size by default, not a decoded
// copy as well.
func TestHugeLineAllocs(t *testing.T) {
	backendtest.HugeLineAllocs(t, New, benchdata.HugeStream(benchdata.Gemini, 16<<20))
}
