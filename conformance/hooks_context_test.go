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
)

// TestHooksContext: on the CLIs whose hooks add context after a call or
// make the turn go on (Capabilities.Hooks.PostContext, StopContinue) but
// cannot rewrite a call (TestHooksRewrite covers those that can), in
// bypass mode, a one-shot run and a live session's turn: PostToolUse
// sees `echo`'s output and its context reaches the next model request;
// the first Stop asks to go on, and the model gets another call with that
// instruction; the second Stop sees that the turn went on already.
func TestHooksContext(t *testing.T) {
	for _, cli := range hostCLIs {
		for _, live := range []bool{false, true} {
			name := cli + "/one-shot"
			if live {
				name = cli + "/live"
			}
			t.Run(name, func(t *testing.T) { hooksContext(t, cli, live) })
		}
	}
}

func hooksContext(t *testing.T, cli string, live bool) {
	b := openBackend(t, cli, nil)
	caps := b.Capabilities().Hooks
	if caps.Rewrite || !caps.PostContext && !caps.StopContinue {
		t.Skipf("Capabilities().Hooks %+v: TestHooksRewrite covers it, or nothing to test", caps)
	}
	t.Parallel()
	e := newEnv(t, cli,
		agentclitest.Turn{Shell: "echo " + postMarker},
		agentclitest.Turn{Text: "first stop"},
		agentclitest.Turn{Text: "done"})
	req, tag := e.request("run it")
	if live {
		req, tag = e.liveRequest()
	}
	req.Permission = agentcli.PermissionBypass
	var mu sync.Mutex
	var outputs, stops []string
	var continued []bool
	req.Hooks = &agentcli.Hooks{
		PostToolUse: func(ctx context.Context, in *agentcli.PostToolUseInput) agentcli.PostToolUseOutput {
			mu.Lock()
			outputs = append(outputs, in.Result.Output)
			mu.Unlock()
			return agentcli.PostToolUseOutput{Context: "POST-CONTEXT-MARKER"}
		},
		Stop: func(ctx context.Context, in *agentcli.StopInput) agentcli.StopOutput {
			mu.Lock()
			defer mu.Unlock()
			stops = append(stops, in.Text)
			continued = append(continued, in.Continued)
			if in.Continued || !caps.StopContinue {
				return agentcli.StopOutput{}
			}
			return agentcli.StopOutput{Continue: "STOP-CONTINUE-MARKER"}
		},
	}
	var res *agentcli.Result
	var err error
	if live {
		s := liveSession(t, b, req, tag)
		_, res, err = collectTurn(s, context.Background(), "run it")
	} else {
		res, _, err = run(t, b, req, tag)
	}
	if err != nil {
		t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(outputs) != 1 || !strings.Contains(outputs[0], postMarker) {
		t.Errorf("PostToolUse saw %q, want echo's output", outputs)
	}
	main := e.main()
	want := 2
	if caps.StopContinue {
		want = 3
	}
	if len(main) != want {
		t.Fatalf("%d main model calls, want %d: %s", len(main), want, describe(e.srv.Requests()))
	}
	if caps.PostContext && !hasTextPart(main[1].Messages, "POST-CONTEXT-MARKER") && !strings.Contains(toolOutputs(main[1]), "POST-CONTEXT-MARKER") {
		t.Errorf("PostToolUse's context did not reach the model: %+v", main[1].Messages)
	}
	if !caps.StopContinue {
		return
	}
	if !hasTextPart(main[2].Messages, "STOP-CONTINUE-MARKER") {
		t.Errorf("Stop's instruction did not reach the model: %+v", main[2].Messages)
	}
	if !slices.Equal(stops, []string{"first stop", "done"}) || !slices.Equal(continued, []bool{false, true}) {
		t.Errorf("Stop saw %q (continued %v), want [first stop done] ([false true])", stops, continued)
	}
	t.Logf("Text %q", res.Text)
	if !strings.HasSuffix(res.Text, "done") {
		t.Errorf("Text %q, want it to end with done", res.Text)
	}
}

// TestHooksBeforePermission: under PermissionAsk, PreToolUse comes
// before the permission callback: the scripted model runs `echo`, which
// PreToolUse lets through, and `touch hook-marker`, which it refuses;
// OnPermission (allowing everything) is never asked about the touch, the
// file is never made, the model hears the refusal's reason, and
// PreToolUse sees each call once.
func TestHooksBeforePermission(t *testing.T) {
	for _, cli := range []string{"qwen"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cli,
				agentclitest.Turn{Shell: "echo " + postMarker},
				agentclitest.Turn{Shell: "touch hook-marker"},
				agentclitest.Turn{Text: "done"})
			b := openBackend(t, cli, nil)
			req, tag := e.request("run the commands")
			req.Permission = agentcli.PermissionAsk
			perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
				return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
			}}
			req.OnPermission = perms.callback
			var mu sync.Mutex
			var seen []string
			req.Hooks = &agentcli.Hooks{PreToolUse: func(ctx context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
				mu.Lock()
				seen = append(seen, string(in.Tool.Input))
				mu.Unlock()
				if strings.Contains(string(in.Tool.Input), "hook-marker") {
					return agentcli.PreToolUseOutput{Deny: true, Reason: hookDenyMarker}
				}
				return agentcli.PreToolUseOutput{}
			}}
			if _, _, err := run(t, b, req, tag); err != nil {
				t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			if fileExists(e.w.Dir, "hook-marker") {
				t.Error("hook-marker exists: the refused command ran")
			}
			for _, r := range perms.requests() {
				if strings.Contains(string(r.Tool.Input), "hook-marker") {
					t.Errorf("OnPermission was asked about the call PreToolUse refused: %+v", r.Tool)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 2 || !strings.Contains(seen[0], "echo") || !strings.Contains(seen[1], "hook-marker") {
				t.Errorf("PreToolUse saw %q, want the echo and the touch, once each", seen)
			}
			var heard bool
			for _, m := range e.main()[1:] {
				if strings.Contains(toolOutputs(m), hookDenyMarker) {
					heard = true
				}
			}
			if !heard {
				t.Errorf("the model did not hear the refusal's reason; requests: %s", describe(e.srv.Requests()))
			}
			t.Logf("OnPermission was asked %d times", len(perms.requests()))
		})
	}
}
