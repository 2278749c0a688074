package droid

import (
	"math"
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// Hostile output: deep nesting, nesting beyond jsonscan.MaxDepth, kept
// JSON that is not valid, token counts out of range.
func TestRobust(t *testing.T) {
	nested := func(n int) string {
		return backendtest.Nested(`{"type":"tool_result","id":"t","isError":false,"value":`, "[", "]", `,"session_id":"s"}`, n)
	}
	backendtest.CheckHostileLines(t, &spec, newParser,
		[]string{backendtest.Nested("", "[", "]", "", 500), nested(500),
			backendtest.Nested(`{"type":"tool_call","id":"t","toolName":"Execute","parameters":`, `{"a":`, "}", "}", 500)},
		[]string{backendtest.Nested("", "[", "]", "", 20000), nested(20000)},
		[]string{
			`{"type":"completion","finalText":"x","x":{"a":tru}}`,
			`{"type":"error","source":"cli","message":"m","x":[1,}`,
			`{"type":"tool_call","id":"t","toolName":"Execute","parameters":{"a":tru}}`,
		})
	for _, c := range []struct {
		usage string
		want  int64
	}{
		{`{"input_tokens":-10,"output_tokens":-1,"cache_read_input_tokens":-3,"cache_creation_input_tokens":-4}`, 0},
		{`{"input_tokens":1e30,"output_tokens":99999999999999999999,"cache_read_input_tokens":1e300,"cache_creation_input_tokens":9.3e18}`, math.MaxInt64},
	} {
		line := `{"type":"completion","finalText":"x","numTurns":1,"usage":` + c.usage + `}`
		r := backendtest.Parse(&spec, newParser(), [][]byte{[]byte(line)}, driver.Exit{})
		if err := backendtest.CheckEvents(r); err != nil {
			t.Fatal(err)
		}
		u := r.Result.Usage
		if u.InputTokens != c.want || u.OutputTokens != c.want || u.CacheReadTokens != c.want || u.CacheWriteTokens != c.want {
			t.Errorf("%s: usage %+v, want every count %d", c.usage, u, c.want)
		}
	}
}

// TestRobustOracle: the oracle lost the usage of a completion whose
// counts are beyond int64 (and with it Result.Usage).
func TestRobustOracle(t *testing.T) {
	line := `{"type":"completion","finalText":"x","usage":{"input_tokens":1e30,"output_tokens":2}}`
	r := backendtest.Parse(&spec, newOracleParser(), [][]byte{[]byte(line)}, driver.Exit{})
	if r.Result == nil || r.Result.Usage.OutputTokens == 2 {
		t.Fatalf("the oracle kept the usage: %+v", r.Result)
	}
}

// A huge line handed over for keeps costs the line, not a copy as well:
// its text, tool output or tool input stays in the line's memory.
func TestHugeLineOwned(t *testing.T) {
	backendtest.CheckOwnedShapes(t, newParser, map[string]string{
		"text":        `{"type":"message","role":"assistant","id":"m","text":BIG,"session_id":"s"}`,
		"tool input":  `{"type":"tool_call","id":"t","toolId":"Create","toolName":"Create","parameters":{"file_path":"/x","content":BIG},"session_id":"s"}`,
		"tool result": `{"type":"tool_result","id":"t","toolId":"Read","isError":false,"value":BIG,"session_id":"s"}`,
		"tool error":  `{"type":"tool_result","id":"t","toolId":"Read","isError":true,"error":{"type":"x","message":BIG},"session_id":"s"}`,
		"completion":  `{"type":"completion","finalText":BIG,"numTurns":1,"session_id":"s"}`,
	})
}
