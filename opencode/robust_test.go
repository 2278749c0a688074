package opencode

import (
	"fmt"
	"math"
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
	check func(r backendtest.Run) error
}

func finish(tokens, cost string) string {
	return `{"type":"step_finish","sessionID":"s","part":{"type":"step-finish","messageID":"m","reason":"stop","cost":` + cost + `,"tokens":` + tokens + `}}` + "\n"
}

var robustCases = []robustCase{
	{
		name:  "count beyond int64",
		lines: finish(`{"input":1e23,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}`, "0"),
		check: func(r backendtest.Run) error {
			if r.Result == nil || r.Result.Usage.InputTokens != math.MaxInt64 {
				return fmt.Errorf("result %+v, want a saturated input count", r.Result)
			}
			return backendtest.CheckEvents(r)
		},
	},
	{
		name: "sums that would wrap",
		lines: finish(`{"input":9e18,"output":9e18,"reasoning":9e18,"cache":{"read":9e18,"write":9e18}}`, "0") +
			finish(`{"input":9e18,"output":9e18,"reasoning":9e18,"cache":{"read":9e18,"write":9e18}}`, "0"),
		check: func(r backendtest.Run) error {
			u := r.Result.Usage
			want := agentcli.Usage{InputTokens: math.MaxInt64, OutputTokens: math.MaxInt64, ReasoningTokens: math.MaxInt64,
				CacheReadTokens: math.MaxInt64, CacheWriteTokens: math.MaxInt64}
			if u != want {
				return fmt.Errorf("usage %+v, want every count saturated", u)
			}
			return backendtest.CheckEvents(r)
		},
	},
	{
		name:  "negative counts and cost",
		lines: finish(`{"input":-5,"output":-1,"reasoning":-2,"cache":{"read":-3,"write":-4}}`, "-0.5"),
		check: func(r backendtest.Run) error {
			if r.Result == nil || r.Result.Usage != (agentcli.Usage{}) || r.Result.CostUSD == nil || *r.Result.CostUSD != 0 {
				return fmt.Errorf("result %+v, want zero usage and cost", r.Result)
			}
			return backendtest.CheckEvents(r)
		},
	},
	{
		name:  "costs that sum to infinity",
		lines: finish(`{"input":1}`, "1e308") + finish(`{"input":1}`, "1e308"),
		check: func(r backendtest.Run) error {
			if r.Result == nil || r.Result.CostUSD == nil || *r.Result.CostUSD != math.MaxFloat64 {
				return fmt.Errorf("result %+v, want a saturated cost", r.Result)
			}
			return backendtest.CheckEvents(r)
		},
	},
	{
		name:  "exit code beyond int",
		lines: `{"type":"tool_use","sessionID":"s","part":{"callID":"c","tool":"bash","state":{"status":"completed","output":"x","metadata":{"exit":1e30}}}}`,
		check: func(r backendtest.Run) error {
			for _, evs := range r.Events {
				for _, ev := range evs {
					if ev.ToolResult != nil && (ev.ToolResult.ExitCode == nil || *ev.ToolResult.ExitCode != math.MaxInt32) {
						return fmt.Errorf("tool result %+v, want exit code MaxInt32", ev.ToolResult)
					}
				}
			}
			return nil
		},
	},
}

func TestRobust(t *testing.T) {
	for _, c := range robustCases {
		t.Run(c.name, func(t *testing.T) {
			r := backendtest.Parse(&spec, newParser(), backendtest.SplitLines([]byte(c.lines)), driver.Exit{})
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
			r := backendtest.Parse(&spec, newOracleParser(), backendtest.SplitLines([]byte(c.lines)), driver.Exit{})
			if c.check(r) == nil {
				t.Fatal("the oracle passes this case")
			}
		})
	}
}

// A line that may become Result.Raw (step_finish, done, error) or that
// carries a tool input, and is not valid JSON where no event reads it, is
// a notice: json.Marshal must accept every event and result.
func TestInvalidKeptJSON(t *testing.T) {
	for _, line := range []string{
		`{"type":"step_finish","part":{"tokens":{"input":1}},"x":{"a":tru}}`,
		`{"type":"error","error":{{}}}`,
		`{"type":"tool_use","part":{"callID":"c","tool":"bash","state":{"status":"completed","input":{"a":tru}}}}`,
	} {
		r := backendtest.Parse(&spec, newParser(), backendtest.SplitLines([]byte(line)), driver.Exit{})
		if err := backendtest.CheckEvents(r); err != nil {
			t.Fatal(err)
		}
		if k := r.Events[0][len(r.Events[0])-1].Kind; k != agentcli.EventNotice {
			t.Fatalf("%s: got a %s event, want a notice", line, k)
		}
	}
}

// A stream of many batches, decoded on the runner's goroutines, yields
// what replaying its wire log line by line yields.
func TestLargeStreamReplay(t *testing.T) {
	backendtest.LargeStreamReplay(t, New, benchdata.Stream(benchdata.OpenCode, 4<<20), benchdata.HugeLine(benchdata.OpenCode, 1<<20))
}

// A huge line costs a run about its own size by default, not a decoded
// copy as well.
func TestHugeLineAllocs(t *testing.T) {
	backendtest.HugeLineAllocs(t, New, benchdata.HugeStream(benchdata.OpenCode, 16<<20))
}
