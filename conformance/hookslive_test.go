//go:build unix

package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// hooksLiveCLIs are the CLIs whose own hooks serve a live session as
// they serve a one-shot run, with PostToolUse's context for the model
// (Capabilities().Hooks: PreToolUse all, DenyReason, PostContext).
var hooksLiveCLIs = []string{"droid"}

// modeName is the name of cli's subtest that runs one-shot ("CLI/oneshot")
// or in a live session ("CLI/live").
func modeName(cli string, live bool) string {
	if live {
		return cli + "/live"
	}
	return cli + "/oneshot"
}

// TestHooksLive: hooks one-shot (bypass) and in a live session under
// PermissionAsk. The scripted model runs `echo`, whose PostToolUse sees
// its output and adds context, which reaches the next model request;
// then `touch hook-marker`, which PreToolUse refuses before the CLI asks
// about it: the file is never made, the permission callback never hears
// of it, and the model hears the refusal's reason.
func TestHooksLive(t *testing.T) {
	for _, cli := range hooksLiveCLIs {
		for _, live := range []bool{false, true} {
			t.Run(modeName(cli, live), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, cli,
					agentclitest.Turn{Shell: "echo " + postMarker},
					agentclitest.Turn{Shell: "touch hook-marker"},
					agentclitest.Turn{Text: "done"})
				b := openBackend(t, cli, nil)
				if h := b.Capabilities().Hooks; h.PreToolUse != agentcli.HookAll || !h.DenyReason || !h.PostContext {
					t.Fatalf("Capabilities().Hooks %+v; move %s out of hooksLiveCLIs", h, cli)
				}
				log := &hookLog{}
				hooks := log.hooks()
				const postContext = "POST-CONTEXT-MARKER-e51b"
				post := hooks.PostToolUse
				hooks.PostToolUse = func(ctx context.Context, in *agentcli.PostToolUseInput) agentcli.PostToolUseOutput {
					post(ctx, in)
					if strings.Contains(in.Result.Output, postMarker) {
						return agentcli.PostToolUseOutput{Context: postContext}
					}
					return agentcli.PostToolUseOutput{}
				}
				var res *agentcli.Result
				var err error
				var perms *permissions
				if live {
					req, tag := e.liveRequest()
					req.Permission = agentcli.PermissionAsk
					perms = &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
						return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
					}}
					req.OnPermission = perms.callback
					req.Hooks = hooks
					s := liveSession(t, b, req, tag)
					_, res, err = collectTurn(s, context.Background(), "run the commands")
				} else {
					req, tag := e.request("run the commands")
					req.Permission = agentcli.PermissionBypass
					req.Hooks = hooks
					res, _, err = run(t, b, req, tag)
				}
				if err != nil {
					t.Fatalf("turn: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
				}
				if res.Text != "done" {
					t.Errorf("Text = %q, want done", res.Text)
				}
				if fileExists(e.w.Dir, "hook-marker") {
					t.Error("hook-marker exists: the refused command ran")
				}
				main := e.main()
				if len(main) != 3 {
					t.Fatalf("%d main model calls, want 3: %s", len(main), describe(e.srv.Requests()))
				}
				if !hasTextPart(main[0].Messages, promptMarker) {
					t.Errorf("UserPromptSubmit's context did not reach the model: %+v", main[0].Messages)
				}
				if !hasTextPart(main[1].Messages, postContext) {
					t.Errorf("PostToolUse's context did not reach the model: %+v", main[1].Messages)
				}
				if out := toolOutputs(main[2]); !strings.Contains(out, hookDenyMarker) {
					t.Errorf("the refusal's reason did not reach the model; tool results %q", out)
				}
				log.mu.Lock()
				defer log.mu.Unlock()
				var bash []string
				for _, u := range log.pre {
					if u.Name == agentcli.ToolNameBash {
						bash = append(bash, string(u.Input))
					}
				}
				if len(bash) != 2 || !strings.Contains(bash[0], "echo") || !strings.Contains(bash[1], "hook-marker") {
					t.Errorf("PreToolUse saw the shell calls %q, want the echo and the touch", bash)
				}
				if len(log.stop) != 1 || log.stop[0] != "done" {
					t.Errorf("Stop saw %q, want [done]", log.stop)
				}
				if perms != nil {
					var asked []string
					for _, r := range perms.requests() {
						asked = append(asked, string(r.Tool.Input))
					}
					if len(asked) != 1 || !strings.Contains(asked[0], "echo") {
						t.Errorf("the permission callback was asked about %q, want the echo only", asked)
					}
				}
			})
		}
	}
}
