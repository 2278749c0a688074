//go:build unix

package conformance

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// TestLiveHooksAll: on a CLI whose PreToolUse sees every call
// (HookAll) through its own hook protocol, a live session under
// PermissionAsk with a host tool: PreToolUse sees the echo, the touch
// (which it refuses: the file is never made, and where the CLI passes
// the reason on, the model hears it) and the host tool's call once (in
// agentcli's MCP server); the permission callback is asked about the
// echo and the host tool only, never about the refused touch.
func TestLiveHooksAll(t *testing.T) {
	for _, cli := range []string{"copilot"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cli,
				agentclitest.Turn{Shell: "echo " + postMarker},
				agentclitest.Turn{Shell: "touch hook-marker"},
				agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: hostToolName(cli, "now"), Args: map[string]any{"zone": "UTC"}}},
				agentclitest.Turn{Text: "done"})
			b := openBackend(t, cli, nil)
			caps := b.Capabilities().Hooks
			if caps.PreToolUse != agentcli.HookAll {
				t.Fatalf("Capabilities().Hooks.PreToolUse = %q, want all", caps.PreToolUse)
			}
			calls := &hostCalls{}
			req, tag := e.liveRequest()
			req.Tools = hostTools(calls)[:1]
			req.Permission = agentcli.PermissionAsk
			perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
				return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
			}}
			req.OnPermission = perms.callback
			log := &hookLog{}
			req.Hooks = log.hooks()
			s := liveSession(t, b, req, tag)
			_, res, err := collectTurn(s, context.Background(), "run the commands")
			if err != nil {
				t.Fatalf("turn: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			if res.Text != "done" {
				t.Errorf("Text = %q", res.Text)
			}
			if fileExists(e.w.Dir, "hook-marker") {
				t.Error("hook-marker exists: the refused command ran")
			}
			if got := calls.list(); !slices.Equal(got, []string{"now:UTC"}) {
				t.Errorf("handler calls %v, want [now:UTC]", got)
			}
			log.mu.Lock()
			var seen []string
			for _, u := range log.pre {
				seen = append(seen, u.Name)
			}
			log.mu.Unlock()
			if want := []string{agentcli.ToolNameBash, agentcli.ToolNameBash, "now"}; !slices.Equal(seen, want) {
				t.Errorf("PreToolUse saw %q, want %q", seen, want)
			}
			var asked []string
			for _, r := range perms.requests() {
				asked = append(asked, r.Tool.Name)
				if strings.Contains(string(r.Tool.Input), "hook-marker") {
					t.Errorf("the callback was asked about the refused call: %+v", r.Tool)
				}
			}
			if want := []string{agentcli.ToolNameBash, "now"}; !slices.Equal(asked, want) {
				t.Errorf("the callback was asked about %q, want %q", asked, want)
			}
			main := e.main()
			if len(main) != 4 {
				t.Fatalf("%d main model calls, want 4: %s", len(main), describe(e.srv.Requests()))
			}
			if heard := strings.Contains(toolOutputs(main[2]), hookDenyMarker); caps.DenyReason && !heard {
				t.Errorf("the model did not hear the refusal's reason; tool results %q", toolOutputs(main[2]))
			}
			if !hasTextPart(main[0].Messages, promptMarker) {
				t.Errorf("UserPromptSubmit's context did not reach the model: %+v", main[0].Messages)
			}
		})
	}
}
