package agentcli_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// Switching the model and the permission mode of a live session, and
// steering its running turn. (The scripted backend of agentclitest stands
// in for a real CLI; its steered input runs queued, as on gemini.)
func ExampleSteer() {
	b := agentclitest.NewBackend(
		agentclitest.Reply("Fixed the tests.", "s1"),
		agentclitest.Reply("Updated the docs too.", "s1"),
	)
	ctx := context.Background()
	s, err := agentcli.StartSession(ctx, b, &agentcli.Request{Permission: agentcli.PermissionBypass})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	if err := agentcli.SetModel(ctx, s, "fast-model"); err != nil {
		fmt.Println(err)
	}
	if err := agentcli.SetPermission(ctx, s, agentcli.PermissionDeny); err != nil {
		fmt.Println(err)
	}
	steered := false
	for ev, err := range s.Stream(ctx, "Fix the tests.") {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Kind {
		case agentcli.EventInit:
			if !steered { // the turn is running: add to it
				steered = true
				if err := agentcli.Steer(ctx, s, "And update the docs."); err != nil {
					fmt.Println(err)
				}
			}
		case agentcli.EventText:
			fmt.Println("text:", ev.Text)
		case agentcli.EventResult:
			fmt.Println("result:", ev.Result.Text)
		}
	}
	for _, r := range b.Requests() {
		fmt.Println(r.Model, r.Permission, r.Prompt)
	}
	// Output:
	// text: Fixed the tests.
	// text: Updated the docs too.
	// result: Updated the docs too.
	// fast-model deny Fix the tests.
	// fast-model deny And update the docs.
}

// bareSession is a Session with none of the optional abilities.
type bareSession struct{ agentcli.Session }

func TestSwitchThroughWrappers(t *testing.T) {
	ctx := context.Background()
	b := agentclitest.NewBackend(agentclitest.Reply("one", "s1"))
	s, err := agentcli.StartSession(ctx, agentcli.WithLimit(agentcli.WithRetry(b, nil), 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := agentcli.SetModel(ctx, s, "m2"); err != nil {
		t.Fatalf("SetModel through WithLimit: %v", err)
	}
	if err := agentcli.SetPermission(ctx, s, agentcli.PermissionPlan); err != nil {
		t.Fatalf("SetPermission through WithLimit: %v", err)
	}
	if err := agentcli.Steer(ctx, s, "more"); !errors.Is(err, agentcli.ErrNoTurn) {
		t.Fatalf("Steer without a turn through WithLimit = %v, want ErrNoTurn", err)
	}
	var re *agentcli.RequestError
	if err := agentcli.SetModel(ctx, s, ""); !errors.As(err, &re) {
		t.Errorf("SetModel(\"\") = %v, want a RequestError", err)
	}
	if err := agentcli.Steer(ctx, s, " \n"); !errors.As(err, &re) {
		t.Errorf("Steer(blank) = %v, want a RequestError", err)
	}
	if _, err := s.Run(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if r := b.Requests()[0]; r.Model != "m2" || r.Permission != agentcli.PermissionPlan {
		t.Errorf("the turn ran with model %q, mode %q", r.Model, r.Permission)
	}
	sw := b.Switches()
	if len(sw) != 3 || sw[0].Kind != "model" || sw[1].Value != "plan" || sw[2].Kind != "steer" || !errors.Is(sw[2].Err, agentcli.ErrNoTurn) {
		t.Errorf("switches %+v", sw)
	}

	var ue *agentcli.UnsupportedError
	bare := bareSession{s}
	for name, err := range map[string]error{
		"SetModel":      agentcli.SetModel(ctx, bare, "m"),
		"SetPermission": agentcli.SetPermission(ctx, bare, agentcli.PermissionDeny),
		"Steer":         agentcli.Steer(ctx, bare, "x"),
	} {
		if !errors.As(err, &ue) || !errors.Is(err, agentcli.ErrUnsupported) {
			t.Errorf("%s on a session without it = %v, want an UnsupportedError", name, err)
		}
	}
}

// A scripted backend whose Caps say it cannot switch refuses as a real one
// does, and a closed session fails with ErrSessionClosed.
func TestScriptedSwitchCaps(t *testing.T) {
	ctx := context.Background()
	b := agentclitest.NewBackend()
	b.Caps = agentcli.Capabilities{Sessions: true, PermissionModes: []agentcli.PermissionMode{agentcli.PermissionDeny, agentcli.PermissionBypass},
		SetPermission: []agentcli.PermissionMode{agentcli.PermissionDeny}}
	s, err := agentcli.StartSession(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ue *agentcli.UnsupportedError
	if err := agentcli.SetModel(ctx, s, "m"); !errors.As(err, &ue) {
		t.Errorf("SetModel = %v", err)
	}
	if err := agentcli.SetPermission(ctx, s, agentcli.PermissionBypass); !errors.As(err, &ue) {
		t.Errorf("SetPermission(bypass) = %v", err)
	}
	if err := agentcli.SetPermission(ctx, s, agentcli.PermissionDeny); err != nil {
		t.Errorf("SetPermission(deny) = %v", err)
	}
	if err := agentcli.Steer(ctx, s, "x"); !errors.As(err, &ue) {
		t.Errorf("Steer = %v", err)
	}
	s.Close()
	b.Caps = agentcli.Capabilities{}
	if err := agentcli.SetModel(ctx, s, "m"); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Errorf("SetModel after Close = %v", err)
	}
}

// SetPermission switches what decides host tools too: a tool that ran
// unasked under bypass is refused after a switch to deny.
func TestSetPermissionHostTools(t *testing.T) {
	ctx := context.Background()
	type in struct{}
	ran := 0
	tool := agentcli.NewTool("count", "Counts.", func(ctx context.Context, _ in) (string, error) {
		ran++
		return "counted", nil
	})
	call := agentclitest.Reply("ok", "s1")
	call.HostCalls = []agentclitest.HostCall{{Tool: "count"}}
	b := agentclitest.NewBackend(call, call)
	s, err := agentcli.StartSession(ctx, b, &agentcli.Request{Permission: agentcli.PermissionBypass, Tools: []agentcli.Tool{tool}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if err := agentcli.SetPermission(ctx, s, agentcli.PermissionDeny); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	rs := b.HostResults()
	if ran != 1 || len(rs) != 2 || rs[0].IsError || !rs[1].IsError {
		t.Errorf("ran %d times; results %+v", ran, rs)
	}
}
