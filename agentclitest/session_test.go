package agentclitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

func shell(cmd string) agentcli.PermissionRequest {
	return agentcli.PermissionRequest{
		Tool:  agentcli.ToolUse{ID: "call-1", Name: agentcli.ToolNameBash, RawName: "bash", Input: json.RawMessage(`{"command":"` + cmd + `"}`)},
		Title: cmd,
	}
}

func TestScriptedSession(t *testing.T) {
	b := agentclitest.NewBackend(
		agentclitest.Reply("one", "s1"),
		agentclitest.Call{Ask: []agentcli.PermissionRequest{shell("rm -rf /"), shell("ls")}, Result: &agentcli.Result{Text: "two", SessionID: "s1"}},
		agentclitest.Call{Delay: time.Hour},
		agentclitest.Reply("four", "s1"),
		agentclitest.Call{Err: &agentcli.ExitError{Backend: "scripted", Code: -1}},
	)
	b.Caps.PermissionModes = []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk}
	if _, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{Permission: agentcli.PermissionPlan}); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Fatalf("unsupported mode: %v", err)
	}
	req := &agentcli.Request{
		Permission: agentcli.PermissionAsk,
		OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
			if r.Title == "ls" {
				return agentcli.PermissionDecision{Kind: agentcli.AllowAlways}
			}
			return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "no"}
		},
	}
	s, err := agentcli.StartSession(context.Background(), b, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res, err := s.Run(context.Background(), "first"); err != nil || res.Text != "one" || s.ID() != "s1" {
		t.Fatalf("turn 1: %+v %v id %q", res, err, s.ID())
	}
	if res, err := s.Run(context.Background(), "second"); err != nil || res.Text != "two" {
		t.Fatalf("turn 2: %+v %v", res, err)
	}
	ds := b.Decisions()
	if len(ds) != 2 || ds[0].Decision.Kind != agentcli.RejectOnce || ds[0].Decision.Message != "no" ||
		ds[1].Decision.Kind != agentcli.AllowAlways || ds[1].Request.Tool.Kind != agentcli.ToolExecute || ds[0].Default {
		t.Fatalf("decisions %+v", ds)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background(), "third")
		done <- err
	}()
	for len(b.Requests()) < 3 {
		time.Sleep(time.Millisecond)
	}
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("turn 3: %v", err)
	}
	if res, err := s.Run(context.Background(), "fourth"); err != nil || res.Text != "four" {
		t.Fatalf("turn 4: %+v %v", res, err)
	}
	var ee *agentcli.ExitError
	if _, err := s.Run(context.Background(), "fifth"); !errors.As(err, &ee) {
		t.Fatalf("turn 5: %v", err)
	}
	if !errors.As(s.Err(), &ee) {
		t.Fatalf("Err() = %v after the crash", s.Err())
	}
	if _, err := s.Run(context.Background(), "sixth"); !errors.Is(err, agentcli.ErrSessionClosed) || !errors.As(err, &ee) {
		t.Fatalf("turn 6: %v", err)
	}
	var prompts []string
	for _, r := range b.Requests() {
		prompts = append(prompts, r.Prompt)
	}
	if fmt.Sprint(prompts) != "[first second third fourth fifth]" || b.Requests()[1].SessionID != "s1" {
		t.Fatalf("recorded %q", prompts)
	}
}

// The deadline applies the default decision; an interrupted turn answers
// its pending request with it at once; deny and bypass need no callback.
func TestScriptedPermissionDefaults(t *testing.T) {
	slow := func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		<-ctx.Done()
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}
	b := agentclitest.NewBackend(
		agentclitest.Call{Ask: []agentcli.PermissionRequest{shell("a")}, Result: &agentcli.Result{Text: "ok"}},
		agentclitest.Call{Ask: []agentcli.PermissionRequest{shell("b")}, Result: &agentcli.Result{Text: "never"}},
	)
	s, _ := b.StartSession(context.Background(), &agentcli.Request{Permission: agentcli.PermissionAsk, OnPermission: slow, PermissionTimeout: 50 * time.Millisecond})
	if res, err := s.Run(context.Background(), "x"); err != nil || res.Text != "ok" {
		t.Fatalf("turn 1: %+v %v", res, err)
	}
	done := make(chan error, 1)
	s2, _ := b.StartSession(context.Background(), &agentcli.Request{Permission: agentcli.PermissionAsk, OnPermission: slow})
	go func() {
		_, err := s2.Run(context.Background(), "y")
		done <- err
	}()
	for len(b.Requests()) < 2 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	s2.Interrupt(context.Background())
	select {
	case err := <-done:
		if !errors.Is(err, agentcli.ErrInterrupted) {
			t.Fatalf("turn 2: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the interrupted turn did not end")
	}
	ds := b.Decisions()
	if len(ds) != 2 || !ds[0].Default || !ds[1].Default || ds[0].Decision.Kind != agentcli.RejectOnce {
		t.Fatalf("decisions %+v", ds)
	}
	for mode, want := range map[agentcli.PermissionMode]agentcli.PermissionOptionKind{
		agentcli.PermissionBypass: agentcli.AllowOnce, agentcli.PermissionDeny: agentcli.RejectOnce,
	} {
		b := agentclitest.NewBackend(agentclitest.Call{Ask: []agentcli.PermissionRequest{shell("c")}, Result: &agentcli.Result{}})
		if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p", Permission: mode}); err != nil {
			t.Fatal(err)
		}
		if d := b.Decisions(); len(d) != 1 || d[0].Decision.Kind != want {
			t.Errorf("one-shot %s: %+v", mode, d)
		}
	}
}

func TestScriptedSessionClose(t *testing.T) {
	b := agentclitest.NewBackend(agentclitest.Call{Delay: time.Hour})
	s, _ := b.StartSession(context.Background(), nil)
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background(), "x")
		done <- err
	}()
	for len(b.Requests()) < 1 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	if err := <-done; !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Fatalf("turn: %v", err)
	}
	if !errors.Is(s.Err(), agentcli.ErrSessionClosed) {
		t.Fatalf("Err() = %v", s.Err())
	}
	if _, err := s.Run(context.Background(), "y"); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Fatalf("after close: %v", err)
	}
}

// Testing permission handling without a model: the scripted call asks,
// the code under test decides, the backend records the decision.
func ExampleBackend_StartSession() {
	b := agentclitest.NewBackend(agentclitest.Call{
		Ask: []agentcli.PermissionRequest{{
			Tool:  agentcli.ToolUse{Name: agentcli.ToolNameBash, Input: json.RawMessage(`{"command":"rm -rf build"}`)},
			Title: "rm -rf build",
		}},
		Result: &agentcli.Result{Text: "cleaned up", SessionID: "s1"},
	})

	// The policy under test: no rm.
	policy := func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		if r.Tool.Name == agentcli.ToolNameBash && len(r.Title) > 2 && r.Title[:2] == "rm" {
			return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "no rm"}
		}
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}
	s, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{
		Permission:   agentcli.PermissionAsk,
		OnPermission: policy,
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	res, err := s.Run(context.Background(), "Clean up.")
	fmt.Println(res.Text, err)
	for _, d := range b.Decisions() {
		fmt.Println(d.Request.Title, "→", d.Decision.Kind, d.Decision.Message)
	}
	// Output:
	// cleaned up <nil>
	// rm -rf build → reject_once no rm
}

// TestScriptedToolLists: the scripted backend answers permission requests
// from the request's tool lists before its mode, as the real backends do,
// and the zero mode refuses.
func TestScriptedToolLists(t *testing.T) {
	read := agentcli.PermissionRequest{Tool: agentcli.ToolUse{ID: "r", Name: agentcli.ToolNameRead, RawName: "read"}}
	cases := []struct {
		req  agentcli.Request
		want []agentcli.PermissionOptionKind // shell, read
	}{
		{agentcli.Request{Prompt: "p"}, []agentcli.PermissionOptionKind{agentcli.RejectOnce, agentcli.RejectOnce}},
		{agentcli.Request{Prompt: "p", AllowedTools: []string{"Read"}}, []agentcli.PermissionOptionKind{agentcli.RejectOnce, agentcli.AllowOnce}},
		{agentcli.Request{Prompt: "p", AllowedTools: []string{"Read"}, Permission: agentcli.PermissionBypass},
			[]agentcli.PermissionOptionKind{agentcli.RejectOnce, agentcli.AllowOnce}},
		{agentcli.Request{Prompt: "p", DisallowedTools: []string{"bash"}, Permission: agentcli.PermissionBypass},
			[]agentcli.PermissionOptionKind{agentcli.RejectOnce, agentcli.AllowOnce}},
	}
	for _, c := range cases {
		b := agentclitest.NewBackend(agentclitest.Call{Ask: []agentcli.PermissionRequest{shell("touch x"), read}, Result: &agentcli.Result{}})
		if _, err := b.Run(context.Background(), &c.req); err != nil {
			t.Fatal(err)
		}
		ds := b.Decisions()
		if len(ds) != 2 || ds[0].Decision.Kind != c.want[0] || ds[1].Decision.Kind != c.want[1] {
			t.Errorf("allow %q disallow %q mode %q: %+v", c.req.AllowedTools, c.req.DisallowedTools, c.req.Permission, ds)
		}
	}
}

// As the real backends: StartSession runs no turn, so a Request.Prompt is
// refused, and so is an empty turn prompt; neither consumes a scripted
// call.
func TestScriptedSessionPrompts(t *testing.T) {
	b := agentclitest.NewBackend(agentclitest.Reply("one", "s1"))
	_, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{Prompt: "first?"})
	var re *agentcli.RequestError
	if !errors.As(err, &re) || re.Field != "Prompt" {
		t.Fatalf("StartSession with a prompt: %v", err)
	}
	s, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(context.Background(), " \t"); !errors.As(err, &re) || re.Field != "Prompt" {
		t.Fatalf("empty prompt: %v", err)
	}
	if res, err := s.Run(context.Background(), "hi"); err != nil || res.Text != "one" {
		t.Fatalf("the scripted call: %v %v", res, err)
	}
	if n := len(b.Requests()); n != 1 {
		t.Errorf("%d requests recorded, want 1", n)
	}
}
