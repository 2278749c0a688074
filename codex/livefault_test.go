package codex

import (
	"strconv"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// codex's live protocol for the live fault cases: app-server JSON-RPC
// without "jsonrpc" (see live.go).
func init() {
	kit.Live = &backendtest.LiveKit{
		Handshake: func(sess string) []string {
			return []string{
				`expect "method":"initialize"`, `reply {"id":$ID,"result":{"userAgent":"fake"}}`,
				`expect "method":"thread/start"`, `reply {"id":$ID,"result":{"thread":{"id":"` + sess + `"},"model":"gpt-test"}}`,
			}
		},
		HandshakeError: func(msg string) []string {
			return []string{`expect "method":"initialize"`, `reply {"id":$ID,"error":{"code":-32603,"message":` + strconv.Quote(msg) + `}}`}
		},
		Prompt:     codexPrompt,
		PromptMark: `"method":"turn/start"`,
		Reply:      codexReply,
		Ask: func(sess, turn string) string {
			return `{"id":"ask-$N","method":"item/commandExecution/requestApproval","params":{"threadId":"` + sess + `","turnId":"` + turn + `","itemId":"i$N","command":"touch X"}}`
		},
		Answer:  `"id":"ask-`,
		Refusal: `"decline"`,
		Interrupt: func(sess, turn string) []string {
			return []string{`expect "method":"turn/interrupt"`, `reply {"id":$ID,"result":{}}`, codexCompleted(sess, turn, "interrupted")}
		},
	}
}

func codexPrompt(turn string) []string {
	return []string{`expect "method":"turn/start"`, `reply {"id":$ID,"result":{"turn":{"id":"` + turn + `","status":"inProgress"}}}`}
}

func codexReply(sess, turn, text string) []string {
	return []string{
		`out {"method":"item/completed","params":{"threadId":"` + sess + `","turnId":"` + turn + `","item":{"type":"agentMessage","id":"m-` + turn + `","text":` + strconv.Quote(text) + `}}}`,
		codexCompleted(sess, turn, "completed"),
	}
}

func codexCompleted(sess, turn, status string) string {
	return `out {"method":"turn/completed","params":{"threadId":"` + sess + `","turn":{"id":"` + turn + `","status":"` + status + `"}}}`
}

func TestLiveFaults(t *testing.T) { backendtest.LiveFaults(t, kit) }
