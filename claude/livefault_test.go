package claude

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
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

// An allow whose edited Input is not a JSON object cannot be applied: the
// call is refused, never run with its original input.
func TestLiveEditNotObject(t *testing.T) {
	for _, input := range []string{`"rm -rf /"`, `["touch","Y"]`, `null`} {
		script := append([]string{"live"}, kit.Live.Handshake("")...)
		script = append(script, `expect "type":"user"`,
			`out {"type":"control_request","request_id":"e1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"touch X"},"tool_use_id":"tu-e1"}}`,
			`expect "request_id":"e1"`)
		script = append(script, kit.Success("done", "sess-edit")...)
		script = append(script, "drain")
		b, dir := kit.Setup(t, nil, script...)
		s, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{
			Permission: agentcli.PermissionAsk,
			OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
				return agentcli.PermissionDecision{Kind: agentcli.AllowOnce, Input: json.RawMessage(input)}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(context.Background(), "edit it"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		rec, err := fakecli.ReadRecord(dir)
		if err != nil {
			t.Fatal(err)
		}
		var answer string
		for _, l := range strings.Split(rec.Stdin, "\n") {
			if strings.Contains(l, `"request_id":"e1"`) {
				answer = l
			}
		}
		if !strings.Contains(answer, `"behavior":"deny"`) || strings.Contains(answer, `"behavior":"allow"`) {
			t.Errorf("edited input %s: answered %s; want a refusal", input, answer)
		}
	}
}
