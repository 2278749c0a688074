package agentcli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// A live session: one CLI process, prompt after prompt. (The scripted
// backend of agentclitest stands in for a real CLI here; with
// agentcli.Open("claude", nil) the code is the same.)
func ExampleStartSession() {
	var b agentcli.Backend = agentclitest.NewBackend(
		agentclitest.Reply("Noted: apple.", "s1"),
		agentclitest.Reply("You said apple.", "s1"),
	)
	s, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{Timeout: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for _, p := range []string{"Remember apple.", "What did I say?"} {
		res, err := s.Run(context.Background(), p)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Text)
	}
	fmt.Println(s.ID())
	// Output:
	// Noted: apple.
	// You said apple.
	// s1
}

// A permission policy: the CLI asks before a tool runs, the callback
// decides. Shell commands that delete are refused with a message for the
// model; everything else may run for the rest of the session.
func ExamplePermissionFunc() {
	policy := func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		if r.Tool.Kind == agentcli.ToolExecute && strings.Contains(string(r.Tool.Input), "rm ") {
			return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "Deleting is not allowed here."}
		}
		return agentcli.PermissionDecision{Kind: agentcli.AllowAlways}
	}
	b := agentclitest.NewBackend(agentclitest.Call{
		Ask: []agentcli.PermissionRequest{
			{Tool: agentcli.ToolUse{Name: agentcli.ToolNameBash, Input: json.RawMessage(`{"command":"rm -rf build"}`)}},
			{Tool: agentcli.ToolUse{Name: agentcli.ToolNameRead, Input: json.RawMessage(`{"file_path":"go.mod"}`)}},
		},
		Result: &agentcli.Result{Text: "done"},
	})
	res, err := b.Run(context.Background(), &agentcli.Request{
		Prompt:            "Clean up and check go.mod.",
		Permission:        agentcli.PermissionAsk,
		OnPermission:      policy,
		PermissionTimeout: time.Minute, // unanswered requests are refused
	})
	fmt.Println(res.Text, err)
	for _, d := range b.Decisions() {
		fmt.Println(d.Request.Tool.Name, d.Decision.Kind, d.Decision.Allowed())
	}
	// Output:
	// done <nil>
	// Bash reject_once false
	// Read allow_always true
}

// Interrupt stops the running turn; the session takes the next prompt.
func ExampleSession_interrupt() {
	b := agentclitest.NewBackend(
		agentclitest.Call{Delay: time.Hour}, // a model that takes forever
		agentclitest.Reply("Short answer.", "s1"),
	)
	s, _ := agentcli.StartSession(context.Background(), b, nil)
	defer s.Close()
	go func() {
		for len(b.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		s.Interrupt(context.Background())
	}()
	_, err := s.Run(context.Background(), "Write a novel.")
	fmt.Println(errors.Is(err, agentcli.ErrInterrupted))
	res, _ := s.Run(context.Background(), "Just one line, please.")
	fmt.Println(res.Text)
	// Output:
	// true
	// Short answer.
}

// A permission mode the backend lacks fails before any CLI starts.
func ExampleUnsupportedError() {
	b := agentclitest.NewBackend()
	b.BackendName = "mycli"
	b.Caps.PermissionModes = []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk}
	_, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{Permission: agentcli.PermissionPlan})
	var ue *agentcli.UnsupportedError
	fmt.Println(errors.As(err, &ue), errors.Is(err, agentcli.ErrUnsupported))
	fmt.Println(err)
	// Output:
	// true true
	// mycli: permission mode plan not supported
}

// PermissionDecision's zero value refuses.
func ExamplePermissionDecision() {
	var d agentcli.PermissionDecision
	fmt.Println(d.Allowed())
	d = agentcli.PermissionDecision{Kind: agentcli.AllowOnce, Input: json.RawMessage(`{"command":"ls -la"}`)}
	fmt.Println(d.Allowed(), string(d.Input))
	// Output:
	// false
	// true {"command":"ls -la"}
}
