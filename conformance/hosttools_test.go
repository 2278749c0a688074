//go:build unix

package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/driver"
)

// Host tools (Request.Tools), on every real CLI: agentcli's own MCP
// server serves them; the scripted model calls them by the name each CLI
// gives them.

// hostToolName is the name under which cli offers host tool tool to the
// model (as agentclitest records it).
func hostToolName(cli, tool string) string { return agentclitest.HostToolName(cli, tool) }

// hostCalls records the calls of the test's host tools.
type hostCalls struct {
	mu    sync.Mutex
	calls []string // tool: input zone
}

func (h *hostCalls) add(s string) {
	h.mu.Lock()
	h.calls = append(h.calls, s)
	h.mu.Unlock()
}

func (h *hostCalls) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

const (
	nowMarker  = "NOW-MARKER-5e0c"
	failMarker = "FAIL-MARKER-77a1"
)

// hostTools returns the test's two host tools: now, which answers
// nowMarker and the zone it was given, and fail, whose handler fails.
func hostTools(calls *hostCalls) []agentcli.Tool {
	type nowIn struct {
		Zone string `json:"zone" jsonschema:"the time zone, such as UTC"`
	}
	now := agentcli.NewTool("now", "Returns the current time in a time zone.", func(ctx context.Context, in nowIn) (string, error) {
		calls.add("now:" + in.Zone)
		return nowMarker + " in " + in.Zone, nil
	})
	fail := agentcli.NewTool("fail", "Always fails.", func(ctx context.Context, in struct{}) (string, error) {
		calls.add("fail")
		return "", errors.New(failMarker + ": the tool failed")
	})
	return []agentcli.Tool{now, fail}
}

// TestHostTools: one-shot, in bypass mode and (with both tools approved
// in advance, Tool.Approved) in the zero mode, deny: the scripted model
// calls the host tool now (with an input) and then fail. Each handler
// runs with its input, now's output reaches the next model request,
// fail's error reaches the model as its text, and the events name the
// tools by their own names (Kind ToolOther), fail's result an error.
func TestHostTools(t *testing.T) {
	for _, c := range []struct {
		cli  string
		mode agentcli.PermissionMode
	}{
		{"opencode", agentcli.PermissionBypass}, {"gemini", agentcli.PermissionBypass},
		{"claude", agentcli.PermissionBypass}, {"codex", agentcli.PermissionBypass},
		{"opencode", ""}, {"gemini", ""}, {"claude", ""}, {"codex", ""},
		{"copilot", agentcli.PermissionBypass}, {"copilot", ""},
		{"qwen", agentcli.PermissionBypass}, {"qwen", ""},
		{"droid", agentcli.PermissionBypass}, {"droid", ""},
	} {
		cli := c.cli
		name := cli + "/" + string(driver.Mode(&agentcli.Request{Permission: c.mode}))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cli,
				agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: hostToolName(cli, "now"), Args: map[string]any{"zone": "UTC"}}},
				agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: hostToolName(cli, "fail"), Args: map[string]any{}}},
				agentclitest.Turn{Text: "done"})
			b := openBackend(t, cli, nil)
			calls := &hostCalls{}
			req, tag := e.request("use the tools")
			req.Tools = hostTools(calls)
			req.Permission = c.mode
			if c.mode == "" {
				req.Tools[0].Approved, req.Tools[1].Approved = true, true
			}
			evs, err := stream(t, context.Background(), b, req, tag)
			if err != nil {
				t.Fatalf("Stream: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			checkHostRun(t, e, cli, evs, calls, []string{"now:UTC", "fail"})
		})
	}
}

// checkHostRun checks a run whose model called now and then fail.
func checkHostRun(t *testing.T, e *env, cli string, evs []agentcli.Event, calls *hostCalls, wantCalls []string) {
	t.Helper()
	if got := calls.list(); !slices.Equal(got, wantCalls) {
		t.Errorf("handler calls %v, want %v", got, wantCalls)
	}
	main := e.main()
	if len(main) != 3 {
		t.Fatalf("%d main model calls, want 3: %s", len(main), describe(e.srv.Requests()))
	}
	checkOffered(t, cli, main[0])
	if out := toolOutputs(main[1]); !strings.Contains(out, nowMarker+" in UTC") {
		t.Errorf("now's output did not reach the model; tool results %q", out)
	}
	if out := toolOutputs(main[2]); !strings.Contains(out, "error: "+failMarker) {
		t.Errorf("fail's error did not reach the model as its text; tool results %q", out)
	}
	uses := map[string]agentcli.ToolUse{}
	results := map[string]agentcli.ToolResult{}
	for _, ev := range evs {
		switch ev.Kind {
		case agentcli.EventToolUse:
			uses[ev.Tool.Name] = *ev.Tool
		case agentcli.EventToolResult:
			results[ev.ToolResult.ID] = *ev.ToolResult
		}
	}
	for _, tool := range []string{"now", "fail"} {
		u, ok := uses[tool]
		if !ok {
			t.Errorf("no EventToolUse named %q; events: %s", tool, describeEvents(evs))
			continue
		}
		if u.Kind != agentcli.ToolOther || !strings.HasSuffix(u.RawName, tool) {
			t.Errorf("tool use %+v: want Kind other and a raw name ending in %q", u, tool)
		}
		r, ok := results[u.ID]
		if !ok {
			t.Errorf("no EventToolResult for %s (id %q); events: %s", tool, u.ID, describeEvents(evs))
			continue
		}
		if (tool == "fail") != r.IsError {
			t.Errorf("%s's result IsError = %v; output %q", tool, r.IsError, r.Output)
		}
	}
	if u := uses["now"]; !strings.Contains(string(u.Input), `"UTC"`) {
		t.Errorf("now's tool use input %s, want the zone", u.Input)
	}
}

// checkOffered checks that the model request r offers the host tools now
// and fail: among its tools or, on droid, which defers MCP tools (their
// schemas come with its ToolSearch tool), by name in its list of
// deferred tools.
func checkOffered(t *testing.T, cli string, r agentclitest.ModelRequest) {
	t.Helper()
	for _, tool := range []string{"now", "fail"} {
		n := hostToolName(cli, tool)
		if !slices.Contains(r.Tools, n) && !(cli == "droid" && slices.Contains(r.Tools, "ToolSearch") && hasTextPart(r.Messages, n)) {
			t.Errorf("the first model request does not offer %s: tools %v", n, r.Tools)
		}
	}
}

// toolOutputs joins the tool results of a model request.
func toolOutputs(r agentclitest.ModelRequest) string {
	var out []string
	for _, tr := range r.ToolResults {
		out = append(out, tr.Output)
	}
	return strings.Join(out, "\n")
}

// describeEvents summarizes events for failure messages.
func describeEvents(evs []agentcli.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "\n  %s", describeEvent(ev))
	}
	return b.String()
}

// refusalMarker is the message of the test's refusals.
const refusalMarker = "NOPE-MARKER-31d2"

// TestHostToolsAsk: a one-shot run under PermissionAsk: the callback is
// asked about each host tool by the tool's own name (Kind other, the
// model's input), allows now and refuses fail with a message. now's
// handler runs and its output reaches the model; fail's does not run,
// and the refusal's message reaches the model.
func TestHostToolsAsk(t *testing.T) {
	for _, cli := range hostCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cli,
				agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: hostToolName(cli, "now"), Args: map[string]any{"zone": "CET"}}},
				agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: hostToolName(cli, "fail"), Args: map[string]any{}}},
				agentclitest.Turn{Text: "done"})
			b := openBackend(t, cli, nil)
			calls := &hostCalls{}
			req, tag := e.request("use the tools")
			req.Tools = hostTools(calls)
			req.Permission = agentcli.PermissionAsk
			perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
				if r.Tool.Name == "now" {
					return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
				}
				return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: refusalMarker}
			}}
			req.OnPermission = perms.callback
			res, _, err := run(t, b, req, tag)
			if err != nil {
				t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			if res.Text != "done" {
				t.Errorf("Text = %q", res.Text)
			}
			var asked []string
			for _, r := range perms.requests() {
				asked = append(asked, r.Tool.Name)
				if r.Tool.Kind != agentcli.ToolOther {
					t.Errorf("permission request %+v: Kind %q, want other", r.Tool, r.Tool.Kind)
				}
				if r.Tool.Name == "now" && !strings.Contains(string(r.Tool.Input), `"CET"`) {
					t.Errorf("the request about now has input %s, want the model's", r.Tool.Input)
				}
			}
			if !slices.Equal(asked, []string{"now", "fail"}) {
				t.Errorf("asked about %v, want [now fail]", asked)
			}
			if got := calls.list(); !slices.Equal(got, []string{"now:CET"}) {
				t.Errorf("handler calls %v, want [now:CET]", got)
			}
			main := e.main()
			if len(main) != 3 {
				t.Fatalf("%d main model calls, want 3: %s", len(main), describe(e.srv.Requests()))
			}
			if out := toolOutputs(main[1]); !strings.Contains(out, nowMarker+" in CET") {
				t.Errorf("now's output did not reach the model; tool results %q", out)
			}
			if out := toolOutputs(main[2]); !strings.Contains(out, "error: "+refusalMarker) {
				t.Errorf("the refusal did not reach the model; tool results %q", out)
			}
		})
	}
}

// TestLiveHostToolsDeny: a live session under the zero permission mode
// (deny) with an allow list that names no host tool: both host tools
// are offered all the same; now, approved in advance (Tool.Approved),
// runs in turn 1; fail is refused in turn 2 without running, and the
// model is told so. One CLI process serves both turns.
func TestLiveHostToolsDeny(t *testing.T) {
	for _, cli := range hostCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cli,
				agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: hostToolName(cli, "now"), Args: map[string]any{"zone": "UTC"}}},
				agentclitest.Turn{Text: "first"},
				agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: hostToolName(cli, "fail"), Args: map[string]any{}}},
				agentclitest.Turn{Text: "second"})
			b := openBackend(t, cli, nil)
			calls := &hostCalls{}
			req, tag := e.liveRequest()
			req.Tools = hostTools(calls)
			req.Tools[0].Approved = true
			if cli != "droid" { // droid's live sessions take no allow list (droid/live.go)
				req.AllowedTools = []string{agentcli.ToolNameRead}
			}
			s := liveSession(t, b, req, tag)
			var evs []agentcli.Event
			for i, want := range []string{"first", "second"} {
				turn, res, err := collectTurn(s, context.Background(), "turn "+want)
				if err != nil {
					t.Fatalf("turn %d: %s; requests: %s", i+1, errSummary(err), describe(e.srv.Requests()))
				}
				if res.Text != want {
					t.Errorf("turn %d: Text = %q, want %q", i+1, res.Text, want)
				}
				evs = append(evs, turn...)
			}
			if got := calls.list(); !slices.Equal(got, []string{"now:UTC"}) {
				t.Errorf("handler calls %v, want [now:UTC]", got)
			}
			main := e.main()
			if len(main) != 4 {
				t.Fatalf("%d main model calls, want 4: %s", len(main), describe(e.srv.Requests()))
			}
			checkOffered(t, cli, main[0])
			if out := toolOutputs(main[1]); !strings.Contains(out, nowMarker+" in UTC") {
				t.Errorf("now's output did not reach the model; tool results %q", out)
			}
			if out := toolOutputs(main[3]); !strings.Contains(out, "error: "+driver.DeniedMessage) {
				t.Errorf("fail's refusal did not reach the model; tool results %q", out)
			}
			var names []string
			for _, ev := range evs {
				if ev.Kind == agentcli.EventToolUse {
					names = append(names, ev.Tool.Name)
				}
			}
			if !slices.Equal(names, []string{"now", "fail"}) {
				t.Errorf("tool uses %v, want [now fail]; events: %s", names, describeEvents(evs))
			}
		})
	}
}

// questionCall returns the scripted model's call of cli's way of asking
// the user "Which color?" (options Red and Blue).
func questionCall(cli string) *agentclitest.ToolCall {
	return agentclitest.QuestionCall(cli, agentcli.Question{Items: []agentcli.QuestionItem{{ID: "color", Header: "Color", Text: "Which color?",
		Options: []agentcli.QuestionOption{{Label: "Red", Description: "warm"}, {Label: "Blue", Description: "cool"}}}}})
}

// TestQuestions: the scripted model asks the user a question, each CLI
// its own way (claude's AskUserQuestion, codex's request_user_input,
// agentcli's question tool on gemini and opencode), in a one-shot run in
// bypass mode; Request.OnQuestion gets it (header, text, options) and
// answers "Blue", and the answer reaches the next model request.
func TestQuestions(t *testing.T) {
	for _, cli := range hostCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cli, agentclitest.Turn{Tool: questionCall(cli)}, agentclitest.Turn{Text: "done"})
			b := openBackend(t, cli, nil)
			if !b.Capabilities().Questions {
				t.Fatal("Capabilities().Questions is false")
			}
			req, tag := e.request("ask me")
			req.Permission = agentcli.PermissionBypass
			var mu sync.Mutex
			var got []agentcli.Question
			req.OnQuestion = func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
				mu.Lock()
				got = append(got, *q)
				mu.Unlock()
				return &agentcli.Answer{Answers: [][]string{{"Blue"}}}, nil
			}
			evs, err := stream(t, context.Background(), b, req, tag)
			if err != nil {
				t.Fatalf("Stream: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || len(got[0].Items) != 1 {
				t.Fatalf("questions %+v, want one with one item; tool results %q", got, toolOutputs(e.lastMain()))
			}
			it := got[0].Items[0]
			if it.Text != "Which color?" || it.Header != "Color" || len(it.Options) != 2 || it.Options[1].Label != "Blue" || it.Options[1].Description != "cool" {
				t.Errorf("question item %+v", it)
			}
			main := e.main()
			if len(main) != 2 {
				t.Fatalf("%d main model calls, want 2: %s", len(main), describe(e.srv.Requests()))
			}
			if out := toolOutputs(main[1]); !strings.Contains(out, "Blue") || strings.Contains(out, agentcli.NoAnswerMessage) {
				t.Errorf("the answer did not reach the model; tool results %q", out)
			}
			var asked bool
			for _, ev := range evs {
				if ev.Kind == agentcli.EventToolUse && ev.Tool.Name == agentcli.ToolNameAskUserQuestion {
					asked = true
				}
			}
			if !asked {
				t.Errorf("no EventToolUse named %s; events: %s", agentcli.ToolNameAskUserQuestion, describeEvents(evs))
			}
		})
	}
}

// TestQuestionsNobody: a live session under PermissionAsk without
// OnQuestion, on claude and qwen, whose own question tools are offered in
// that mode: the question is answered with NotAvailableMessage (a refusal
// the model sees), not left waiting, not answered empty, and the
// permission callback is not asked about it.
func TestQuestionsNobody(t *testing.T) {
	for _, cli := range []string{"claude", "qwen"} {
		t.Run(cli, func(t *testing.T) { t.Parallel(); questionsNobody(t, cli) })
	}
}

func questionsNobody(t *testing.T, cli string) {
	e := newEnv(t, cli, agentclitest.Turn{Tool: questionCall(cli)}, agentclitest.Turn{Text: "done"})
	b := openBackend(t, cli, nil)
	req, tag := e.request("ask me")
	req.Permission = agentcli.PermissionAsk
	perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}}
	req.OnPermission = perms.callback
	res, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
	}
	if res.Text != "done" {
		t.Errorf("Text = %q", res.Text)
	}
	if n := len(perms.requests()); n != 0 {
		t.Errorf("the permission callback was asked %d times", n)
	}
	if out := toolOutputs(e.lastMain()); !strings.Contains(out, agentcli.NotAvailableMessage) {
		t.Errorf("the model was not told the user is not available; tool results %q", out)
	}
}

// Hook markers.
const (
	hookDenyMarker = "HOOK-DENY-MARKER-0b7e"
	promptMarker   = "PROMPT-CONTEXT-MARKER-91fa"
	postMarker     = "POST-OUTPUT-MARKER-4c2d"
)

// hookLog records what the hooks saw.
type hookLog struct {
	mu   sync.Mutex
	pre  []agentcli.ToolUse
	post []agentcli.PostToolUseInput
	stop []string
}

// hooks returns hooks that refuse every call whose input mentions
// "hook-marker" (with hookDenyMarker as the reason), add promptMarker to
// each prompt, and record the rest.
func (l *hookLog) hooks() *agentcli.Hooks {
	return &agentcli.Hooks{
		PreToolUse: func(ctx context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
			l.mu.Lock()
			tool := in.Tool
			tool.Input = json.RawMessage(string(in.Tool.Input) + " " + strconv.Quote(in.Title))
			l.pre = append(l.pre, tool)
			l.mu.Unlock()
			if strings.Contains(string(in.Tool.Input)+in.Title, "hook-marker") {
				return agentcli.PreToolUseOutput{Deny: true, Reason: hookDenyMarker}
			}
			return agentcli.PreToolUseOutput{}
		},
		PostToolUse: func(ctx context.Context, in *agentcli.PostToolUseInput) agentcli.PostToolUseOutput {
			l.mu.Lock()
			l.post = append(l.post, *in)
			l.mu.Unlock()
			return agentcli.PostToolUseOutput{}
		},
		UserPromptSubmit: func(ctx context.Context, in *agentcli.UserPromptSubmitInput) agentcli.UserPromptSubmitOutput {
			return agentcli.UserPromptSubmitOutput{Context: promptMarker}
		},
		Stop: func(ctx context.Context, in *agentcli.StopInput) agentcli.StopOutput {
			l.mu.Lock()
			l.stop = append(l.stop, in.Text)
			l.mu.Unlock()
			return agentcli.StopOutput{}
		},
	}
}

// TestHooks: a one-shot run in bypass mode with the four hooks. The
// scripted model runs `echo` (PostToolUse sees its real output), then
// `touch hook-marker`, which PreToolUse refuses: the file is never made,
// and where the CLI passes a refusal's reason on
// (Capabilities.Hooks.DenyReason) the model hears it. UserPromptSubmit's
// context reaches the model with the prompt; Stop sees the final text.
func TestHooks(t *testing.T) {
	for _, cli := range hostCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cli,
				agentclitest.Turn{Shell: "echo " + postMarker},
				agentclitest.Turn{Shell: "touch hook-marker"},
				agentclitest.Turn{Text: "done"})
			b := openBackend(t, cli, nil)
			caps := b.Capabilities().Hooks
			if cli == "gemini" {
				// A one-shot run has gemini's own hooks (a live session,
				// which Capabilities describes, does not).
				caps.PreToolUse, caps.DenyReason, caps.PostOutput = agentcli.HookAll, true, true
			}
			req, tag := e.request("run the commands")
			req.Permission = agentcli.PermissionBypass
			log := &hookLog{}
			req.Hooks = log.hooks()
			res, _, err := run(t, b, req, tag)
			if err != nil {
				t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			if fileExists(e.w.Dir, "hook-marker") {
				t.Error("hook-marker exists: the refused command ran")
			}
			main := e.main()
			if len(main) < 2 {
				t.Fatalf("%d main model calls: %s", len(main), describe(e.srv.Requests()))
			}
			if !hasTextPart(main[0].Messages, promptMarker) {
				t.Errorf("UserPromptSubmit's context did not reach the model: %+v", main[0].Messages)
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			var bash []string
			for _, u := range log.pre {
				if u.Name == agentcli.ToolNameBash {
					bash = append(bash, string(u.Input))
				}
			}
			// Every CLI's PreToolUse sees the touch; those that see only
			// what they ask about (gemini) may let echo through unseen.
			if n := len(bash); n == 0 || !strings.Contains(bash[n-1], "hook-marker") || caps.PreToolUse == agentcli.HookAll && n != 2 {
				t.Errorf("PreToolUse saw the shell calls %q, want the echo and the touch", bash)
			}
			var sawOutput bool
			for _, p := range log.post {
				if p.Tool.Name == agentcli.ToolNameBash && strings.Contains(p.Result.Output, postMarker) && strings.Contains(string(p.Tool.Input), "echo") {
					sawOutput = true
				}
			}
			if !sawOutput && caps.PostOutput {
				t.Errorf("PostToolUse did not see echo's output: %+v", log.post)
			}
			if len(log.stop) == 0 || log.stop[len(log.stop)-1] != res.Text {
				t.Errorf("Stop saw %q, want the final text %q", log.stop, res.Text)
			}
			var heard bool
			for _, m := range main[1:] {
				if strings.Contains(toolOutputs(m), hookDenyMarker) || hasTextPart(m.Messages, hookDenyMarker) {
					heard = true
				}
			}
			if caps.DenyReason && !heard {
				t.Errorf("the model did not hear the refusal's reason; requests: %s", describe(e.srv.Requests()))
			}
			t.Logf("the model heard the reason: %v (DenyReason %v); %d model calls", heard, caps.DenyReason, len(main))
		})
	}
}

// hasTextPart reports whether any message contains text.
func hasTextPart(msgs []agentclitest.Message, text string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Text, text) {
			return true
		}
	}
	return false
}

// TestHooksRewrite: on the CLIs whose hooks cannot change a call's
// input, a changed input refuses the call (never runs it unchanged). On
// those that can,
// add context after it and make the turn go on (claude), in bypass mode:
// PreToolUse rewrites `echo original` into `echo rewritten-by-hook`,
// which is what runs (PostToolUse sees its output); PostToolUse's context
// reaches the next model request; the first Stop asks to go on, and the
// model gets another call with that instruction.
func TestHooksRewrite(t *testing.T) {
	for _, cli := range hostCLIs {
		t.Run(cli, func(t *testing.T) {
			b := openBackend(t, cli, nil)
			caps := b.Capabilities().Hooks
			t.Parallel()
			if !caps.Rewrite {
				checkRewriteRefused(t, cli, b)
				return
			}
			// Context and continue where the CLI has them (copilot
			// rewrites, but has neither).
			turns := []agentclitest.Turn{{Shell: "echo original"}, {Text: "first stop"}, {Text: "done"}}
			if !caps.StopContinue {
				turns = slices.Delete(turns, 1, 2)
			}
			e := newEnv(t, cli, turns...)
			req, tag := e.request("run it")
			req.Permission = agentcli.PermissionBypass
			var mu sync.Mutex
			var outputs, stops []string
			req.Hooks = &agentcli.Hooks{
				PreToolUse: func(ctx context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
					if in.Tool.Name == agentcli.ToolNameBash {
						return agentcli.PreToolUseOutput{Input: json.RawMessage(`{"command":"echo rewritten-by-hook"}`)}
					}
					return agentcli.PreToolUseOutput{}
				},
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
					if in.Continued {
						return agentcli.StopOutput{}
					}
					return agentcli.StopOutput{Continue: "STOP-CONTINUE-MARKER"}
				},
			}
			res, _, err := run(t, b, req, tag)
			if err != nil {
				t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(outputs) != 1 || !strings.Contains(outputs[0], "rewritten-by-hook") {
				t.Errorf("PostToolUse saw %q, want the rewritten command's output", outputs)
			}
			main := e.main()
			if len(main) != len(turns) {
				t.Fatalf("%d main model calls, want %d: %s", len(main), len(turns), describe(e.srv.Requests()))
			}
			if out := toolOutputs(main[1]); !strings.Contains(out, "rewritten-by-hook") {
				t.Errorf("the model got %q, want the rewritten command's output", out)
			}
			if caps.PostContext && !hasTextPart(main[1].Messages, "POST-CONTEXT-MARKER") {
				t.Errorf("PostToolUse's context did not reach the model: %+v", main[1].Messages)
			}
			wantStops := []string{"done"}
			if caps.StopContinue {
				wantStops = []string{"first stop", "done"}
				if !hasTextPart(main[2].Messages, "STOP-CONTINUE-MARKER") {
					t.Errorf("Stop's instruction did not reach the model: %+v", main[2].Messages)
				}
			}
			if res.Text != "done" || !slices.Equal(stops, wantStops) {
				t.Errorf("Text %q, Stop saw %q", res.Text, stops)
			}
		})
	}
}

// checkRewriteRefused: PreToolUse changes the input of `touch
// rewrite-marker` on a CLI that cannot apply it: the call is refused.
func checkRewriteRefused(t *testing.T, cli string, b agentcli.Backend) {
	e := newEnv(t, cli, agentclitest.Turn{Shell: "touch rewrite-marker"}, agentclitest.Turn{Text: "done"}, agentclitest.Turn{Text: "done"})
	req, tag := e.request("run it")
	req.Permission = agentcli.PermissionBypass
	var seen int
	var mu sync.Mutex
	req.Hooks = &agentcli.Hooks{PreToolUse: func(ctx context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
		mu.Lock()
		seen++
		mu.Unlock()
		return agentcli.PreToolUseOutput{Input: json.RawMessage(`{"command":"echo rewritten"}`)}
	}}
	if _, _, err := run(t, b, req, tag); err != nil {
		t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
	}
	if fileExists(e.w.Dir, "rewrite-marker") {
		t.Error("rewrite-marker exists: the call ran unchanged")
	}
	mu.Lock()
	defer mu.Unlock()
	if seen == 0 {
		t.Error("PreToolUse was not called")
	}
}

// hostCLIs are the CLIs with host tools, questions and hooks: all of them
// (a request for one through the worker pool, which cannot carry Go
// functions, is refused: cluster's tests).
var hostCLIs = []string{"opencode", "gemini", "claude", "codex", "copilot", "qwen", "droid"}
