package claude

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
	name  string
	lines string
	exit  driver.Exit
	check func(r backendtest.Run) error
}

// nestedArrays is a line of n nested arrays.
func nestedArrays(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// nestedContent is a user line whose tool result nests content n deep.
func nestedContent(n int) string {
	return `{"type":"user","message":{"content":[` + strings.Repeat(`{"type":"tool_result","tool_use_id":"t","content":[`, n) +
		strings.Repeat(`]}`, n) + `]},"session_id":"s"}`
}

var robustCases = []robustCase{
	{
		name:  "is_error as a string",
		lines: `{"type":"result","subtype":"success","is_error":"true","result":"API Error: 500","session_id":"s"}`,
		check: func(r backendtest.Run) error {
			if !errors.Is(r.Err, agentcli.ErrResult) {
				return fmt.Errorf(`is_error "true": err = %v, want a result error`, r.Err)
			}
			return nil
		},
	},
	{
		name: "tool result is_error as a string",
		lines: `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"denied","is_error":"true"}]},"session_id":"s"}` + "\n" +
			`{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"x"}]},"is_api_error_message":"true","session_id":"s"}`,
		check: func(r backendtest.Run) error {
			if tr := r.Events[0][0].ToolResult; tr == nil || !tr.IsError {
				return fmt.Errorf("tool result %+v, want IsError", tr)
			}
			if k := r.Events[1][0].Kind; k != agentcli.EventNotice {
				return fmt.Errorf(`is_api_error_message "true" gave a %s event, want a notice`, k)
			}
			return nil
		},
	},
	{
		name:  "negative usage",
		lines: `{"type":"result","subtype":"success","is_error":false,"result":"x","total_cost_usd":-5,"usage":{"input_tokens":-10,"output_tokens":-1,"cache_read_input_tokens":-3,"cache_creation_input_tokens":-4,"output_tokens_details":{"thinking_tokens":-2}}}`,
		check: func(r backendtest.Run) error {
			if r.Result == nil || r.Result.Usage != (agentcli.Usage{}) || r.Result.CostUSD == nil || *r.Result.CostUSD != 0 {
				return fmt.Errorf("result %+v, want zero usage and cost", r.Result)
			}
			return backendtest.CheckEvents(r)
		},
	},
	{
		name:  "huge cost and counts",
		lines: `{"type":"result","subtype":"success","is_error":false,"result":"x","total_cost_usd":1e400,"usage":{"input_tokens":1e30,"output_tokens":99999999999999999999}}`,
		check: func(r backendtest.Run) error {
			if r.Result == nil || r.Result.CostUSD == nil || *r.Result.CostUSD != math.MaxFloat64 ||
				r.Result.Usage.InputTokens != math.MaxInt64 || r.Result.Usage.OutputTokens != math.MaxInt64 {
				return fmt.Errorf("result %+v, want saturated cost and counts", r.Result)
			}
			return backendtest.CheckEvents(r)
		},
	},
	{
		name:  "retry delay beyond int64",
		lines: `{"type":"system","subtype":"api_retry","attempt":1,"retry_delay_ms":1e300}`,
		check: func(r backendtest.Run) error {
			if rt := r.Events[0][0].Retry; rt == nil || rt.Delay != math.MaxInt64 {
				return fmt.Errorf("retry %+v, want a saturated delay", rt)
			}
			return nil
		},
	},
	{
		name:  "nested arrays",
		lines: nestedArrays(500),
		check: linearAlloc(nestedArrays(500)),
	},
	{
		name:  "nested tool result content",
		lines: nestedContent(500),
		check: linearAlloc(nestedContent(500)),
	},
}

// linearAlloc checks that parsing line allocates at most a small multiple
// of its size (the oracle allocated depth × size).
func linearAlloc(line string) func(backendtest.Run) error {
	return func(backendtest.Run) error {
		n := backendtest.Allocated(func() { newParser().Line([]byte(line)) })
		if n > 4*uint64(len(line))+64<<10 {
			return fmt.Errorf("parsing a %d-byte line allocated %d bytes", len(line), n)
		}
		return nil
	}
}

func TestRobust(t *testing.T) {
	for _, c := range robustCases {
		t.Run(c.name, func(t *testing.T) {
			r := backendtest.Parse(&spec, newParser(), backendtest.SplitLines([]byte(c.lines)), c.exit)
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
			if strings.HasPrefix(c.name, "nested") {
				line := []byte(c.lines)
				if n := backendtest.Allocated(func() { newOracleParser().Line(line) }); n < 16*uint64(len(line)) {
					t.Fatalf("the oracle allocated only %d bytes for a %d-byte line", n, len(line))
				}
				return
			}
			r := backendtest.Parse(&spec, newOracleParser(), backendtest.SplitLines([]byte(c.lines)), c.exit)
			if c.check(r) == nil {
				t.Fatal("the oracle passes this case")
			}
		})
	}
}

// Nesting beyond jsonscan.MaxDepth is a notice, not a hang or a crash.
func TestTooDeep(t *testing.T) {
	for _, line := range []string{nestedArrays(20000), nestedContent(20000)} {
		evs := newParser().Line([]byte(line))
		var pe *agentcli.ParseError
		if len(evs) != 1 || evs[0].Kind != agentcli.EventNotice || !errors.As(evs[0].Err, &pe) {
			t.Fatalf("%.40s…: events %+v, want one parse-error notice", line, evs)
		}
	}
}

// A line an event keeps as JSON (the result line, a tool input) that is not
// valid JSON where no event reads it is a notice: json.Marshal must accept
// every event and result.
func TestInvalidKeptJSON(t *testing.T) {
	for _, line := range []string{
		`{"type":"result","subtype":"success","is_error":false,"result":"x","x":{"a":tru}}`,
		`{"type":"assistant","message":{"model":"m","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"a":tru}}]}}`,
	} {
		r := backendtest.Parse(&spec, newParser(), backendtest.SplitLines([]byte(line)), driver.Exit{})
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
	backendtest.LargeStreamReplay(t, New, benchdata.Stream(benchdata.Claude, 4<<20), benchdata.HugeLine(benchdata.Claude, 1<<20))
}

// A huge line costs a run about its own size by default, not a decoded
// copy as well.
func TestHugeLineAllocs(t *testing.T) {
	backendtest.HugeLineAllocs(t, New, benchdata.HugeStream(benchdata.Claude, 16<<20))
}
