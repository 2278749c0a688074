package qwen

import (
	"math"
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// Hostile output: deep nesting, nesting beyond jsonscan.MaxDepth, kept
// JSON that is not valid, token counts out of range.
func TestRobust(t *testing.T) {
	content := func(n int) string {
		return backendtest.Nested(`{"type":"user","message":{"content":[`, `{"type":"tool_result","tool_use_id":"t","content":[`, `]}`, `]},"session_id":"s"}`, n)
	}
	backendtest.CheckHostileLines(t, &spec, newParser,
		[]string{backendtest.Nested("", "[", "]", "", 500), content(500),
			backendtest.Nested(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"x","input":`, `{"a":`, "}", "}]}}", 500)},
		[]string{backendtest.Nested("", "[", "]", "", 20000), content(20000)},
		[]string{
			`{"type":"result","subtype":"success","is_error":false,"result":"x","x":{"a":tru}}`,
			`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"run_shell_command","input":{"a":tru}}]}}`,
		})
	for _, c := range []struct {
		usage string
		want  int64
	}{
		{`{"input_tokens":-10,"output_tokens":-1,"cache_read_input_tokens":-3,"cache_creation_input_tokens":-4}`, 0},
		{`{"input_tokens":1e300,"output_tokens":99999999999999999999,"cache_creation_input_tokens":1e30}`, math.MaxInt64},
	} {
		line := `{"type":"result","subtype":"success","is_error":false,"result":"x","usage":` + c.usage + `}`
		r := backendtest.Parse(&spec, newParser(), [][]byte{[]byte(line)}, driver.Exit{})
		if err := backendtest.CheckEvents(r); err != nil {
			t.Fatal(err)
		}
		u := r.Result.Usage
		if u.InputTokens != c.want || u.OutputTokens != c.want || u.CacheWriteTokens != c.want {
			t.Errorf("%s: usage %+v, want counts of %d", c.usage, u, c.want)
		}
	}
}

// TestRobustOracle: the oracle lost the usage of a result whose counts
// are beyond int64, and allocated over eight times the size of a line of nested content.
func TestRobustOracle(t *testing.T) {
	line := `{"type":"result","subtype":"success","is_error":false,"result":"x","usage":{"input_tokens":1e30,"output_tokens":2}}`
	r := backendtest.Parse(&spec, newOracleParser(), [][]byte{[]byte(line)}, driver.Exit{})
	if r.Result == nil || r.Result.Usage.OutputTokens == 2 {
		t.Fatalf("the oracle kept the usage: %+v", r.Result)
	}
	nested := []byte(backendtest.Nested(`{"type":"user","message":{"content":[`, `{"type":"tool_result","tool_use_id":"t","content":[`, `]}`, `]}}`, 500))
	if n := backendtest.Allocated(func() { newOracleParser().Line(nested) }); n < 8*uint64(len(nested)) {
		t.Fatalf("the oracle allocated only %d bytes for a %d-byte line", n, len(nested))
	}
}

// A huge line handed over for keeps costs the line, not a copy as well:
// its text, tool output or tool input stays in the line's memory.
func TestHugeLineOwned(t *testing.T) {
	backendtest.CheckOwnedShapes(t, newParser, map[string]string{
		"text":          `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":BIG}]},"session_id":"s"}`,
		"thinking":      `{"type":"assistant","message":{"role":"assistant","content":[{"type":"thinking","thinking":BIG}]},"session_id":"s"}`,
		"tool input":    `{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"write_file","input":{"file_path":"/x","content":BIG}}]},"session_id":"s"}`,
		"tool result":   `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":BIG}]},"session_id":"s"}`,
		"result blocks": `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":BIG}]}]},"session_id":"s"}`,
		"result":        `{"type":"result","subtype":"success","is_error":false,"result":BIG,"session_id":"s"}`,
	})
}
