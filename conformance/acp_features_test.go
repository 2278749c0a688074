//go:build unix

package conformance

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// TestACPFeatures drives, through package acpagent, the features ACP
// carries for any agent (acpagent/features.go), on copilot, gemini and
// opencode as plain ACP agents (the generic backend, Options.Path and Args) and
// gemini's known agent (gemini-acp) for switching:
//
//   - host-tools: the scripted model calls the host tool now and then
//     fail, in bypass mode and, approved in advance, in the zero mode
//     (deny): each handler runs, its output or error reaches the model,
//     and the events name the tools by their own names;
//   - question: agentcli's question tool reaches OnQuestion and the
//     answer reaches the model;
//   - attachments: a one-shot run's images and text file reach the model
//     byte for byte;
//   - switch-model, switch-permission (gemini-acp): SetModel changes the
//     next turn's model; SetPermission goes bypass → deny → ask → bypass;
//   - switch-refused (opencode-acp): a mode configured otherwise at start
//     is an *UnsupportedError and the session's mode stays.
func TestACPFeatures(t *testing.T) {
	for _, c := range acpCases {
		t.Run(c.wire, func(t *testing.T) {
			t.Parallel()
			b := openACP(t, c, false)
			caps := b.Capabilities()
			if !caps.HostTools || !caps.Questions || !caps.SetModel || len(caps.Attachments) != 2 {
				t.Errorf("Capabilities: host tools %v, questions %v, set model %v, attachments %v", caps.HostTools, caps.Questions, caps.SetModel, caps.Attachments)
			}
			for _, mode := range []agentcli.PermissionMode{agentcli.PermissionBypass, ""} {
				t.Run("host-tools/"+cmpOr(mode, "deny"), func(t *testing.T) { testACPHostTools(t, c, b, mode) })
			}
			t.Run("question", func(t *testing.T) { testACPQuestion(t, c, b) })
			t.Run("attachments", func(t *testing.T) { testACPAttachments(t, c, b) })
			if c.wire == "gemini" {
				k := openACP(t, c, true)
				sc := switchCase{name: c.wire, model: "gemini-switch-model", atServer: "gemini-switch-model", allModes: true}
				t.Run("switch-model", func(t *testing.T) { testSwitchModel(t, sc, k) })
				t.Run("switch-permission", func(t *testing.T) { testSwitchPermission(t, sc, k) })
			}
			if c.wire == "opencode" {
				t.Run("switch-refused", func(t *testing.T) { testACPSwitchRefused(t, c) })
			}
		})
	}
}

func testACPHostTools(t *testing.T, c acpCase, b agentcli.Backend, mode agentcli.PermissionMode) {
	e := newEnv(t, c.wire,
		agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: hostToolName(c.wire, "now"), Args: map[string]any{"zone": "UTC"}}},
		agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: hostToolName(c.wire, "fail"), Args: map[string]any{}}},
		agentclitest.Turn{Text: "done"})
	calls := &hostCalls{}
	req, tag := e.request("use the tools")
	req.Tools = hostTools(calls)
	req.Permission = mode
	if mode == "" {
		req.Tools[0].Approved, req.Tools[1].Approved = true, true
	}
	evs, err := stream(t, context.Background(), b, req, tag)
	if err != nil {
		t.Fatalf("Stream: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
	}
	checkACPHostRun(t, e, c.wire, evs, calls)
}

// checkACPHostRun checks a run whose model called now and then fail, as
// checkHostRun does but for the input of the tool use events, which an
// ACP agent need not report (gemini sends it as the permission
// request's text only).
func checkACPHostRun(t *testing.T, e *env, cli string, evs []agentcli.Event, calls *hostCalls) {
	t.Helper()
	if got := calls.list(); !slices.Equal(got, []string{"now:UTC", "fail"}) {
		t.Errorf("handler calls %v, want [now:UTC fail]", got)
	}
	main := e.main()
	if len(main) != 3 {
		t.Fatalf("%d main model calls, want 3: %s", len(main), describe(e.srv.Requests()))
	}
	if out := toolOutputs(main[1]); !strings.Contains(out, nowMarker+" in UTC") {
		t.Errorf("now's output did not reach the model; tool results %q", out)
	}
	if out := toolOutputs(main[2]); !strings.Contains(out, "error: "+failMarker) {
		t.Errorf("fail's error did not reach the model as its text; tool results %q", out)
	}
	named := map[string]bool{}
	for _, ev := range evs {
		if ev.Kind == agentcli.EventToolUse && ev.Tool.Kind == agentcli.ToolOther {
			named[ev.Tool.Name] = true
		}
	}
	if !named["now"] || !named["fail"] {
		t.Errorf("tool uses named %v, want now and fail; events: %s", named, describeEvents(evs))
	}
}

func testACPQuestion(t *testing.T, c acpCase, b agentcli.Backend) {
	e := newEnv(t, c.wire, agentclitest.Turn{Tool: questionCall(c.wire)}, agentclitest.Turn{Text: "done"})
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
	if _, err := stream(t, context.Background(), b, req, tag); err != nil {
		t.Fatalf("Stream: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || len(got[0].Items) != 1 || got[0].Items[0].Text != "Which color?" {
		t.Fatalf("questions %+v, want the one asked", got)
	}
	if out := toolOutputs(e.lastMain()); !strings.Contains(out, "Blue") {
		t.Errorf("the answer did not reach the model; tool results %q", out)
	}
}

func testACPAttachments(t *testing.T, c acpCase, b agentcli.Backend) {
	f := newAttachFixture(t).only(b.Capabilities().Attachments)
	e := newEnv(t, c.wire, agentclitest.Turn{Text: "seen"})
	req, tag := e.request("Describe the attached files.")
	req.Attachments = f.atts
	res, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("Run: %s; requests %s", errSummary(err), describe(e.srv.Requests()))
	}
	if res.Text != "seen" {
		t.Errorf("Result.Text = %q", res.Text)
	}
	checkAttachments(t, c.wire, f, e.main())
}

// testACPSwitchRefused: opencode-acp starts opencode configured to ask
// (deny); bypass needs it configured not to, so the switch is refused
// and the session still refuses the command.
func testACPSwitchRefused(t *testing.T, c acpCase) {
	k := openACP(t, c, true)
	e := newEnv(t, c.wire)
	req, tag := e.liveRequest()
	perms := &permissions{decide: func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}}
	req.OnPermission = perms.callback
	s := liveSession(t, k, req, tag)
	var ue *agentcli.UnsupportedError
	if err := agentcli.SetPermission(context.Background(), s, agentcli.PermissionBypass); !errors.As(err, &ue) {
		t.Fatalf("SetPermission(bypass) = %v, want an *UnsupportedError", err)
	}
	if err := agentcli.SetPermission(context.Background(), s, agentcli.PermissionAsk); err != nil {
		t.Fatalf("SetPermission(ask): %s", errSummary(err))
	}
	if made, asked := permTurn(t, e, nil, s, perms, "ASKED"); !made || asked != 1 {
		t.Errorf("ask: made %v, asked %d; want made, asked once", made, asked)
	}
}
