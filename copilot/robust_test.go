package copilot

import (
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

func newTestParser() driver.Parser { return newParser("m", false) }

// Hostile output: deep nesting, nesting beyond jsonscan.MaxDepth, kept
// JSON that is not valid.
func TestRobust(t *testing.T) {
	args := func(n int) string {
		return backendtest.Nested(`{"type":"tool.execution_start","data":{"toolCallId":"c","toolName":"bash","arguments":`, `{"a":`, "}", "}}", n)
	}
	backendtest.CheckHostileLines(t, &spec, newTestParser,
		[]string{backendtest.Nested("", "[", "]", "", 500), args(500),
			backendtest.Nested(`{"type":"session.future","data":{"x":`, "[", "]", "}}", 500)},
		[]string{backendtest.Nested("", "[", "]", "", 20000), args(20000)},
		[]string{
			`{"type":"result","sessionId":"s","exitCode":0,"x":{"a":tru}}`,
			`{"type":"tool.execution_start","data":{"toolCallId":"c","toolName":"bash","arguments":{"a":tru}}}`,
			`{"type":"assistant.message","data":{"content":"x","toolRequests":[{"toolCallId":"c","name":"bash","arguments":[1,]}]}}`,
		})
}

// A huge line handed over for keeps costs the line, not a copy as well:
// its text, tool output or tool input stays in the line's memory.
func TestHugeLineOwned(t *testing.T) {
	backendtest.CheckOwnedShapes(t, newTestParser, map[string]string{
		"text":        `{"type":"assistant.message","data":{"messageId":"m","content":BIG,"toolRequests":[]},"id":"i"}`,
		"delta":       `{"type":"assistant.message_delta","data":{"messageId":"m","deltaContent":BIG},"id":"i"}`,
		"thinking":    `{"type":"assistant.reasoning","data":{"reasoningId":"r","content":BIG},"id":"i"}`,
		"tool input":  `{"type":"assistant.message","data":{"content":"","toolRequests":[{"toolCallId":"c","name":"create","arguments":{"path":"/x","file_text":BIG}}]},"id":"i"}`,
		"tool result": `{"type":"tool.execution_complete","data":{"toolCallId":"c","success":true,"result":{"content":BIG}},"id":"i"}`,
		"tool error":  `{"type":"tool.execution_complete","data":{"toolCallId":"c","success":false,"error":{"message":BIG,"code":"x"}},"id":"i"}`,
	})
}

// copilot 1.0.102 prints model.call_final_result (a type with nothing to
// normalize) with data.result a string, where tool.execution_complete has
// an object: it yields nothing. The oracle (the former parser) made each
// such line of a real run a parse-error notice.
func TestRobustOracle(t *testing.T) {
	line := []byte(`{"type":"model.call_final_result","data":{"model":"m","result":"ok","statusCode":200},"id":"i"}`)
	if evs := newTestParser().Line(line); len(evs) != 0 {
		t.Fatalf("events %+v, want none", evs)
	}
	if evs := newOracleParser("m", false).Line(line); len(evs) != 1 || evs[0].Kind != agentcli.EventNotice {
		t.Fatalf("the oracle yields %+v, want a notice", evs)
	}
}
