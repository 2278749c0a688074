package agentclitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

func TestScriptedHostCalls(t *testing.T) {
	var ran []string
	type in struct {
		Zone string `json:"zone"`
	}
	now := agentcli.NewTool("now", "the time", func(ctx context.Context, i in) (string, error) {
		ran = append(ran, "now:"+i.Zone)
		return "noon in " + i.Zone, nil
	})
	fail := agentcli.NewTool("fail", "fails", func(ctx context.Context, _ struct{}) (string, error) {
		ran = append(ran, "fail")
		return "", errors.New("boom")
	})
	b := agentclitest.NewBackend(agentclitest.Call{
		HostCalls: []agentclitest.HostCall{
			{Tool: "now", Input: json.RawMessage(`{"zone":"UTC"}`)},
			{Tool: "fail"},
			{Tool: "now", Input: json.RawMessage(`{"zone":"CET"}`)},
		},
		Result: &agentcli.Result{Text: "done"},
	})
	var asked []string
	var stops []string
	req := &agentcli.Request{Prompt: "p", Permission: agentcli.PermissionAsk, Tools: []agentcli.Tool{now, fail},
		OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
			asked = append(asked, r.Tool.Name)
			return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
		},
		Hooks: &agentcli.Hooks{
			PreToolUse: func(ctx context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
				if strings.Contains(string(in.Tool.Input), "CET") {
					return agentcli.PreToolUseOutput{Deny: true, Reason: "not CET"}
				}
				return agentcli.PreToolUseOutput{}
			},
			Stop: func(ctx context.Context, in *agentcli.StopInput) agentcli.StopOutput {
				stops = append(stops, in.Text)
				return agentcli.StopOutput{}
			},
		}}
	var uses []string
	for ev, err := range b.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == agentcli.EventToolUse {
			uses = append(uses, ev.Tool.Name)
		}
	}
	res := b.HostResults()
	if len(res) != 3 || res[0].Output != "noon in UTC" || res[0].IsError ||
		res[1].Output != "error: boom" || !res[1].IsError || res[2].Output != "error: not CET" || !res[2].IsError {
		t.Errorf("host results %+v", res)
	}
	if strings.Join(ran, ",") != "now:UTC,fail" || strings.Join(asked, ",") != "now,fail" || strings.Join(uses, ",") != "now,fail,now" {
		t.Errorf("ran %v, asked %v, uses %v", ran, asked, uses)
	}
	if d := b.HookDecisions(); len(d) != 3 || !d[2].Output.Deny {
		t.Errorf("hook decisions %+v", d)
	}
	if strings.Join(stops, ",") != "done" {
		t.Errorf("Stop saw %v", stops)
	}
}

func TestScriptedQuestions(t *testing.T) {
	q := agentcli.Question{Items: []agentcli.QuestionItem{{Header: "Color", Text: "Which color?",
		Options: []agentcli.QuestionOption{{Label: "Red"}, {Label: "Blue"}}}}}
	b := agentclitest.NewBackend(
		agentclitest.Call{Questions: []agentcli.Question{q}, Result: &agentcli.Result{Text: "ok"}},
		agentclitest.Call{Questions: []agentcli.Question{q}, Result: &agentcli.Result{Text: "ok"}})
	req := &agentcli.Request{Prompt: "p", Permission: agentcli.PermissionBypass,
		OnQuestion: func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
			return &agentcli.Answer{Answers: [][]string{{q.Items[0].Options[1].Label}}}, nil
		}}
	if _, err := b.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.OnQuestion = nil
	if _, err := b.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	a := b.Answers()
	if len(a) != 2 || a[0].Answer == nil || a[0].Answer.Answers[0][0] != "Blue" || a[1].Answer != nil || a[1].Message != agentcli.NotAvailableMessage {
		t.Errorf("answers %+v", a)
	}
}

func TestScriptedSessionHooks(t *testing.T) {
	b := agentclitest.NewBackend(
		agentclitest.Call{PreToolUse: []agentcli.ToolUse{{Name: agentcli.ToolNameBash, Input: json.RawMessage(`{"command":"rm -rf /"}`)}},
			Result: &agentcli.Result{Text: "one"}},
		agentclitest.Call{Events: []agentcli.Event{
			{Kind: agentcli.EventToolUse, Tool: &agentcli.ToolUse{ID: "1", Name: agentcli.ToolNameBash}},
			{Kind: agentcli.EventToolResult, ToolResult: &agentcli.ToolResult{ID: "1", Output: "hello"}},
		}, Result: &agentcli.Result{Text: "two"}})
	var prompts, outputs []string
	req := &agentcli.Request{Permission: agentcli.PermissionBypass, Hooks: &agentcli.Hooks{
		PreToolUse: func(ctx context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
			return agentcli.PreToolUseOutput{Deny: strings.Contains(string(in.Tool.Input), "rm -rf"), Reason: "no"}
		},
		PostToolUse: func(ctx context.Context, in *agentcli.PostToolUseInput) agentcli.PostToolUseOutput {
			outputs = append(outputs, in.Result.Output)
			return agentcli.PostToolUseOutput{}
		},
		UserPromptSubmit: func(ctx context.Context, in *agentcli.UserPromptSubmitInput) agentcli.UserPromptSubmitOutput {
			prompts = append(prompts, in.Prompt)
			return agentcli.UserPromptSubmitOutput{}
		},
	}}
	s, err := agentcli.StartSession(context.Background(), b, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []string{"first", "second"} {
		if _, err := s.Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if d := b.HookDecisions(); len(d) != 1 || !d[0].Output.Deny || d[0].Tool.Kind != agentcli.ToolExecute {
		t.Errorf("hook decisions %+v", d)
	}
	if strings.Join(prompts, ",") != "first,second" || strings.Join(outputs, ",") != "hello" {
		t.Errorf("prompts %v, outputs %v", prompts, outputs)
	}
}
