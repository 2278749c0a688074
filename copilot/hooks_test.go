package copilot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// The hook endpoint's answers in copilot's terms (checked on copilot
// 1.0.102 by conformance TestHooks, TestHooksRewrite and
// TestLiveHooksAll).
func TestHookAnswer(t *testing.T) {
	var seen []agentcli.ToolUse
	req := &agentcli.Request{Hooks: &agentcli.Hooks{PreToolUse: func(_ context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
		seen = append(seen, in.Tool)
		switch {
		case strings.Contains(string(in.Tool.Input), "rm"):
			return agentcli.PreToolUseOutput{Deny: true, Reason: "no rm"}
		case strings.Contains(string(in.Tool.Input), "old"):
			return agentcli.PreToolUseOutput{Input: json.RawMessage(`{"command":"echo new"}`)}
		}
		return agentcli.PreToolUseOutput{}
	}}}
	req.Tools = []agentcli.Tool{agentcli.NewTool("now", "", func(context.Context, struct{}) (string, error) { return "", nil })}
	h := driver.NewRunHooks(Name, req)
	host := driver.LocalHostTools(Name, req, h)
	for _, c := range []struct {
		in   hookInput
		want string
	}{
		{hookInput{Event: "PreToolUse", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"rm -rf x"}`)},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm"}}`},
		{hookInput{Event: "PreToolUse", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"echo old"}`)},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo new"}}}`},
		{hookInput{Event: "PreToolUse", ToolName: "Read", ToolInput: json.RawMessage(`"not an object"`)}, `{}`},
		{hookInput{Event: "PreToolUse", ToolName: "agentcli-now", ToolInput: json.RawMessage(`{"command":"rm"}`)}, `{}`},
		{hookInput{Event: "PreToolUse", ToolName: "mcp__agentcli__now", ToolInput: json.RawMessage(`{"command":"rm"}`)}, `{}`},
		{hookInput{Event: "PostToolUse", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"rm"}`)}, `{}`},
	} {
		got, _ := json.Marshal(hookAnswer(context.Background(), h, host, &c.in))
		if string(got) != c.want {
			t.Errorf("%s %s %s: %s, want %s", c.in.Event, c.in.ToolName, c.in.ToolInput, got, c.want)
		}
	}
	if len(seen) != 3 || seen[0].Name != agentcli.ToolNameBash || seen[0].Kind != agentcli.ToolExecute || seen[2].Name != agentcli.ToolNameRead || string(seen[2].Input) != "{}" {
		t.Errorf("PreToolUse saw %+v", seen)
	}
}
