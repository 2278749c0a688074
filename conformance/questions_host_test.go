//go:build unix

package conformance

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/driver"
)

// TestQuestionsAllowList: on a CLI whose own question tool an allow list
// leaves out (qwen's --core-tools), a one-shot run in bypass mode with an
// allow list and OnQuestion offers agentcli's question tool up front
// instead (and not the CLI's own); the model's call of it reaches
// OnQuestion, and the answer reaches the next model request.
func TestQuestionsAllowList(t *testing.T) {
	for _, c := range []struct{ cli, own string }{{"qwen", "ask_user_question"}} {
		t.Run(c.cli, func(t *testing.T) {
			t.Parallel()
			call := questionCall(c.cli)
			call.Name = hostToolName(c.cli, driver.QuestionTool)
			e := newEnv(t, c.cli, agentclitest.Turn{Tool: call}, agentclitest.Turn{Text: "done"})
			b := openBackend(t, c.cli, nil)
			req, tag := e.request("ask me")
			req.Permission = agentcli.PermissionBypass
			req.AllowedTools = []string{agentcli.ToolNameRead}
			var mu sync.Mutex
			var got []agentcli.Question
			req.OnQuestion = func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
				mu.Lock()
				got = append(got, *q)
				mu.Unlock()
				return &agentcli.Answer{Answers: [][]string{{"Blue"}}}, nil
			}
			res, _, err := run(t, b, req, tag)
			if err != nil {
				t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			if res.Text != "done" {
				t.Errorf("Text = %q", res.Text)
			}
			main := e.main()
			if len(main) != 2 {
				t.Fatalf("%d main model calls, want 2: %s", len(main), describe(e.srv.Requests()))
			}
			if tools := main[0].Tools; !slices.Contains(tools, call.Name) || slices.Contains(tools, c.own) {
				t.Errorf("the first model request offers %v: want %s and not %s", tools, call.Name, c.own)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || len(got[0].Items) != 1 || got[0].Items[0].Text != "Which color?" {
				t.Fatalf("questions %+v, want Which color?", got)
			}
			if out := toolOutputs(main[1]); !strings.Contains(out, `"Blue"`) {
				t.Errorf("the answer did not reach the model; tool results %q", out)
			}
		})
	}
}
