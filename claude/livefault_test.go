package claude

import (
	"strconv"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// claude's live protocol for the live fault cases: stream-json messages
// with control requests (see live.go).
func init() {
	kit.Live = &backendtest.LiveKit{
		Handshake: func(string) []string {
			return []string{`expect "subtype":"initialize"`,
				`reply {"type":"control_response","response":{"subtype":"success","request_id":"$RID","response":{}}}`}
		},
		HandshakeError: func(msg string) []string {
			return []string{`expect "subtype":"initialize"`,
				`reply {"type":"control_response","response":{"subtype":"error","request_id":"$RID","error":` + strconv.Quote(msg) + `}}`}
		},
		Prompt:     func(string) []string { return []string{`expect "type":"user"`} },
		PromptMark: `"type":"user"`,
		Reply:      func(sess, _, text string) []string { return kit.Success(text, sess) },
		Ask: func(string, string) string {
			return `{"type":"control_request","request_id":"ask-$N","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"touch X"},"tool_use_id":"tu-$N"}}`
		},
		Answer:  `"request_id":"ask-`,
		Refusal: `"behavior":"deny"`,
		Interrupt: func(sess, _ string) []string {
			return []string{`expect "subtype":"interrupt"`,
				`out {"type":"result","subtype":"error_during_execution","is_error":true,"result":"","session_id":"` + sess + `","terminal_reason":"aborted_streaming"}`}
		},
	}
}

func TestLiveFaults(t *testing.T) { backendtest.LiveFaults(t, kit) }
