package gemini

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// TestHookRelayEndpoint: the endpoint behind gemini's hook command
// refuses a post without the run's secret, and answers BeforeTool and
// AfterTool as gemini 0.61.0 reads them: a refusal with its reason, a
// changed input, PostToolUse's context; host tools' BeforeTool is left to
// agentcli's MCP server (the hook is not called).
func TestHookRelayEndpoint(t *testing.T) {
	var mu sync.Mutex
	var pre []agentcli.ToolUse
	var post []agentcli.ToolResult
	req := &agentcli.Request{
		Tools: []agentcli.Tool{agentcli.NewTool("now", "The time.", func(context.Context, struct{}) (string, error) { return "t", nil })},
		Hooks: &agentcli.Hooks{
			PreToolUse: func(_ context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
				mu.Lock()
				pre = append(pre, in.Tool)
				mu.Unlock()
				if strings.Contains(string(in.Tool.Input), "rm") {
					return agentcli.PreToolUseOutput{Deny: true, Reason: "DENY-REASON"}
				}
				if strings.Contains(string(in.Tool.Input), "old") {
					return agentcli.PreToolUseOutput{Input: json.RawMessage(`{"command":"echo new"}`)}
				}
				return agentcli.PreToolUseOutput{}
			},
			PostToolUse: func(_ context.Context, in *agentcli.PostToolUseInput) agentcli.PostToolUseOutput {
				mu.Lock()
				post = append(post, in.Result)
				mu.Unlock()
				return agentcli.PostToolUseOutput{Context: "CTX"}
			},
		},
	}
	hooks := driver.NewRunHooks("gemini", req)
	host := driver.LocalHostTools("gemini", req, hooks)
	srv := httptest.NewServer(driver.HookHandler(context.Background(), "Bearer s3cret", func(ctx context.Context, in *hookInput) any { return hookAnswer(ctx, hooks, host, in) }))
	defer srv.Close()

	post1 := func(auth, body string) (int, map[string]any) {
		t.Helper()
		r, err := http.NewRequest(http.MethodPost, srv.URL+"/hook", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if res.StatusCode == http.StatusOK {
			if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
		}
		return res.StatusCode, out
	}
	before := func(cmd string) string {
		return `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"` + cmd + `"}}`
	}
	for _, auth := range []string{"", "Bearer wrong", "s3cret"} {
		if code, _ := post1(auth, before("rm -rf x")); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, code)
		}
	}
	if code, _ := post1("Bearer s3cret", "not json"); code != http.StatusBadRequest {
		t.Errorf("bad input: status %d, want 400", code)
	}
	mu.Lock()
	if len(pre) != 0 {
		t.Errorf("refused posts called PreToolUse: %+v", pre)
	}
	mu.Unlock()

	cases := []struct {
		name, body, want string
	}{
		{"deny", before("rm -rf x"), `{"decision":"deny","reason":"DENY-REASON"}`},
		{"rewrite", before("echo old"), `{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"echo new"}}}`},
		{"allow", before("ls"), `{}`},
		{"host tool", `{"hook_event_name":"BeforeTool","tool_name":"mcp_agentcli_now","tool_input":{}}`, `{}`},
		{"after", `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"ls"},"tool_response":{"llmContent":"OUT","returnDisplay":"x"}}`,
			`{"hookSpecificOutput":{"additionalContext":"CTX","hookEventName":"AfterTool"}}`},
		{"unknown event", `{"hook_event_name":"Notification"}`, `{}`},
	}
	for _, c := range cases {
		code, out := post1("Bearer s3cret", c.body)
		got, _ := json.Marshal(out)
		if code != http.StatusOK || string(got) != c.want {
			t.Errorf("%s: %d %s, want 200 %s", c.name, code, got, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(pre) != 3 || pre[0].Name != agentcli.ToolNameBash || pre[0].RawName != "run_shell_command" {
		t.Errorf("PreToolUse saw %+v, want the three shell calls (not the host tool)", pre)
	}
	if len(post) != 1 || post[0].Output != "OUT" {
		t.Errorf("PostToolUse saw %+v, want the llmContent", post)
	}
}

// TestHookResponseText: llmContent, then returnDisplay, then the JSON.
func TestHookResponseText(t *testing.T) {
	for in, want := range map[string]string{
		`{"llmContent":"a","returnDisplay":"b"}`:            "a",
		`{"llmContent":[{"text":"a"}],"returnDisplay":"b"}`: "b",
		`{"llmContent":[1]}`:                                `{"llmContent":[1]}`,
		`"plain"`:                                           `"plain"`,
	} {
		if got := responseText(json.RawMessage(in)); got != want {
			t.Errorf("responseText(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestNativeHooks: gemini calls PreToolUse and PostToolUse itself in a
// one-shot run (Stop is the runner's), none in a live session.
func TestNativeHooks(t *testing.T) {
	if n := nativeHooks(nil, true); n != (driver.NativeHooks{}) {
		t.Errorf("live: %+v, want none", n)
	}
	if n := nativeHooks(nil, false); !n.PreToolUse || !n.PostToolUse || n.Stop {
		t.Errorf("one-shot: %+v, want PreToolUse and PostToolUse", n)
	}
}
