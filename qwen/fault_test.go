package qwen

import (
	"context"
	"fmt"
	"iter"
	"os"
	"strconv"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

func TestMain(m *testing.M) {
	fakecli.MaybeRun()
	backendtest.UsePinnedCLIs(Name)
	os.Exit(m.Run())
}

// bypass runs the fault matrix's one-shot requests under PermissionBypass:
// a qwen run in any other mode is one turn of a live session (LiveRun),
// which the live fault cases cover.
type bypass struct{ agentcli.Backend }

func (b bypass) req(r *agentcli.Request) *agentcli.Request {
	if r == nil || r.Permission != "" {
		return r
	}
	c := *r
	c.Permission = agentcli.PermissionBypass
	return &c
}

func (b bypass) Run(ctx context.Context, r *agentcli.Request) (*agentcli.Result, error) {
	return b.Backend.Run(ctx, b.req(r))
}

func (b bypass) Stream(ctx context.Context, r *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return b.Backend.Stream(ctx, b.req(r))
}

// kit scripts qwen's stream-json output for the fault matrix, in the
// shapes of real 0.24.4 output (testdata).
var kit = backendtest.Kit{
	Name:       Name,
	New:        func(o *agentcli.Options) agentcli.Backend { return bypass{New(o)} },
	TempPrefix: "agentcli-run-",
	Success: func(text, sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","uuid":%q,"session_id":%q,"cwd":"/tmp","tools":["read_file"],"mcp_servers":[],"model":"qwen-test","permission_mode":"yolo","qwen_code_version":"0.24.4"}`, sess, sess),
			fmt.Sprintf(`out {"type":"stream_event","uuid":"u1","session_id":%q,"parent_tool_use_id":null,"event":{"type":"goal_state","goal_state":{"v":2,"goal":null,"activity":"idle"}}}`, sess),
			fmt.Sprintf(`out {"type":"assistant","uuid":"u2","session_id":%q,"parent_tool_use_id":null,"message":{"id":"u2","type":"message","role":"assistant","model":"qwen-test","content":[{"type":"text","text":%q}],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":0,"total_tokens":15}}}`, sess, text),
			fmt.Sprintf(`out {"type":"result","subtype":"success","uuid":"u3","session_id":%q,"is_error":false,"duration_ms":10,"duration_api_ms":5,"num_turns":1,"result":%q,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":0,"total_tokens":15},"permission_denials":[]}`, sess, text),
		}
	},
	Partial: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","session_id":%q,"model":"qwen-test"}`, sess),
			fmt.Sprintf(`out {"type":"stream_event","session_id":%q,"parent_tool_use_id":null,"event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}}}`, sess),
		}
	},
	Truncated: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","session_id":%q,"model":"qwen-test"}`, sess),
			`outraw {"type":"result","subtype":"success","is_error":false,"result":"hel`,
		}
	},
}

func TestFaultMatrix(t *testing.T) { backendtest.FaultMatrix(t, kit) }

// qwen's control protocol for the live fault cases (see live.go).
func init() {
	kit.Live = &backendtest.LiveKit{
		Handshake: func(string) []string {
			return []string{`expect "subtype":"initialize"`,
				`reply {"type":"control_response","response":{"subtype":"success","request_id":"$RID","response":{"subtype":"initialize"}}}`}
		},
		HandshakeError: func(msg string) []string {
			return []string{`expect "subtype":"initialize"`,
				`reply {"type":"control_response","response":{"subtype":"error","request_id":"$RID","error":` + strconv.Quote(msg) + `}}`}
		},
		Prompt:     func(string) []string { return []string{`expect "type":"user"`} },
		PromptMark: `"type":"user"`,
		Reply:      func(sess, _, text string) []string { return kit.Success(text, sess) },
		Ask: func(string, string) string {
			return `{"type":"control_request","request_id":"ask-$N","request":{"subtype":"can_use_tool","tool_name":"run_shell_command","tool_use_id":"tu-$N","input":{"command":"touch X"},"permission_suggestions":null,"blocked_path":null}}`
		},
		Answer:  `"request_id":"ask-`,
		Refusal: `"behavior":"deny"`,
		Interrupt: func(sess, _ string) []string {
			return []string{`expect "subtype":"interrupt"`,
				`out {"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"` + sess + `","num_turns":1,"error":{"message":"Operation cancelled by user"}}`}
		},
	}
}

// TestLiveFaults runs the backend itself (the matrix's wrapper has no
// live sessions).
func TestLiveFaults(t *testing.T) {
	k := kit
	k.New = func(o *agentcli.Options) agentcli.Backend { return New(o) }
	backendtest.LiveFaults(t, k)
}

// Without any credential a run fails at once with a *CredentialsError
// naming the variables; each way qwen finds one lets the run start.
func TestCredentials(t *testing.T) {
	backendtest.CheckCredentials(t, kit, credentialVars, []backendtest.CredentialWay{
		{Name: "OpenAI key", Env: []string{"OPENAI_API_KEY=sk-x"}},
		{Name: "OpenAI base URL", Env: []string{"OPENAI_BASE_URL=http://127.0.0.1:9/v1"}},
		{Name: "settings", Files: map[string]string{"~/.qwen/settings.json": `{"security":{"auth":{"selectedType":"openai","apiKey":"k"}}}`}},
		{Name: "QWEN_HOME", Env: []string{"QWEN_HOME=~/qh"}, Files: map[string]string{"~/qh/settings.json": `{"modelProviders":{}}`}},
		{Name: "project settings", Files: map[string]string{"./.qwen/settings.json": `{"envKey":"OPENAI_API_KEY"}`}},
		{Name: "home .env", Files: map[string]string{"~/.env": "OPENAI_API_KEY=k\n"}},
		{Name: "extra args", ExtraArgs: []string{"--debug"}},
	})
}
