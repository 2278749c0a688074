package codex

import (
	"encoding/json"
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
	check func(r backendtest.Run) error
}

var robustCases = []robustCase{
	{
		name:  "negative usage",
		lines: `{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":-50,"cache_write_input_tokens":-1,"output_tokens":-7,"reasoning_output_tokens":-2}}`,
		check: func(r backendtest.Run) error {
			want := agentcli.Usage{InputTokens: 100}
			if r.Result == nil || r.Result.Usage != want {
				return fmt.Errorf("result %+v, want usage %+v", r.Result, want)
			}
			return backendtest.CheckEvents(r)
		},
	},
	{
		name:  "counts beyond int64",
		lines: `{"type":"turn.completed","usage":{"input_tokens":99999999999999999999,"cached_input_tokens":9223372036854775807,"cache_write_input_tokens":9223372036854775807,"output_tokens":1e30}}`,
		check: func(r backendtest.Run) error {
			u := r.Result.Usage
			if u.InputTokens != 0 || u.CacheReadTokens != math.MaxInt64 || u.CacheWriteTokens != math.MaxInt64 || u.OutputTokens != math.MaxInt64 {
				return fmt.Errorf("usage %+v, want saturated counts", u)
			}
			return backendtest.CheckEvents(r)
		},
	},
}

func TestRobust(t *testing.T) {
	for _, c := range robustCases {
		t.Run(c.name, func(t *testing.T) {
			r := backendtest.Parse(&spec, newParser(&agentcli.Request{}), backendtest.SplitLines([]byte(c.lines)), driver.Exit{})
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
			r := backendtest.Parse(&spec, newOracleParser(&agentcli.Request{}), backendtest.SplitLines([]byte(c.lines)), driver.Exit{})
			if c.check(r) == nil {
				t.Fatal("the oracle passes this case")
			}
		})
	}
}

// Deep nesting in a field no event reads costs linear time; beyond
// jsonscan.MaxDepth the line is a notice.
func TestTooDeep(t *testing.T) {
	line := `{"type":"item.completed","item":{"id":"i","type":"mcp_tool_call","arguments":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}`
	evs := newParser(&agentcli.Request{}).Line([]byte(line))
	if len(evs) != 1 || evs[0].Kind != agentcli.EventNotice {
		t.Fatalf("events %+v, want one notice", evs)
	}
}

// A terminal line that is not valid JSON (in a part no event reads) is a
// notice: it would be Result.Raw, which json.Marshal must accept.
func TestInvalidTerminalLine(t *testing.T) {
	r := backendtest.Parse(&spec, newParser(&agentcli.Request{}), backendtest.SplitLines([]byte(
		`{"type":"turn.completed","usage":{"input_tokens":1},"x":{"a":tru}}`)), driver.Exit{})
	if err := backendtest.CheckEvents(r); err != nil {
		t.Fatal(err)
	}
	if k := r.Events[0][0].Kind; k != agentcli.EventNotice {
		t.Fatalf("got a %s event, want a notice", k)
	}
}

// The tool inputs built without encoding/json are what json.Marshal writes.
func FuzzInputs(f *testing.F) {
	f.Add("go test ./... 2>&1 | tail -n 5 && echo \"<ok>\" \u2028", "add", true)
	f.Add("\xff\x00\t\b\f\r\n\u2029é", "", false)
	f.Fuzz(func(t *testing.T, s, kind string, done bool) {
		eq := func(got json.RawMessage, v any) {
			t.Helper()
			want, err := json.Marshal(v)
			if err != nil || string(got) != string(want) {
				t.Fatalf("built %s\njson.Marshal %s (%v)", got, want, err)
			}
		}
		eq(commandInput(s), map[string]string{"command": s})
		changes := []wireChange{{Path: s, Kind: kind}}
		eq(changesInput(changes), map[string]any{"changes": changes, "file_path": s})
		changes = append(changes, wireChange{Path: kind, Kind: s})
		eq(changesInput(changes), map[string]any{"changes": changes})
		eq(changesInput(nil), map[string]any{"changes": []wireChange(nil)})
		eq(changesInput([]wireChange{}), map[string]any{"changes": []wireChange{}})
		type todo struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		}
		st := map[bool]string{true: "completed", false: "pending"}
		eq(todosInput([]wireTodo{{Text: s, Completed: done}, {Text: kind}}),
			map[string]any{"todos": []todo{{s, st[done]}, {kind, "pending"}}})
		eq(todosInput(nil), map[string]any{"todos": []todo{}})
	})
}

// A stream of many batches, decoded on the runner's goroutines, yields
// what replaying its wire log line by line yields.
func TestLargeStreamReplay(t *testing.T) {
	backendtest.LargeStreamReplay(t, New, benchdata.Stream(benchdata.Codex, 4<<20), benchdata.HugeLine(benchdata.Codex, 1<<20))
}

// A huge line costs a run about its own size by default, not a decoded
// copy as well.
func TestHugeLineAllocs(t *testing.T) {
	backendtest.HugeLineAllocs(t, New, benchdata.HugeStream(benchdata.Codex, 16<<20))
}
