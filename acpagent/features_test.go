package acpagent

import (
	"context"
	"errors"
	"testing"

	"github.com/agentcli/agentcli"
)

func TestHostToolName(t *testing.T) {
	req := &agentcli.Request{Tools: []agentcli.Tool{{Name: "now"}}}
	name := hostToolName(req)
	for _, c := range []struct{ id, title, want string }{
		{"x1", "agentcli-now", "mcp__agentcli__now"},                                                   // copilot
		{"x2", "agentcli_now", "mcp__agentcli__now"},                                                   // opencode
		{"mcp_agentcli_now__mcp_agentcli_now_17_0", "now (agentcli MCP Server)", "mcp__agentcli__now"}, // gemini
		{"mcp__agentcli__now", "", "mcp__agentcli__now"},
		{"x3", "agentcli-nowhere", ""},           // not a host tool
		{"x4", "agentcli-now please", ""},        // a description, not a name
		{"other_now__x", "other-now", ""},        // another server's
		{"mcp_agentcli_other__x", "Run now", ""}, // not served
	} {
		if got := name(c.id, c.title); got != c.want {
			t.Errorf("hostToolName(%q, %q) = %q, want %q", c.id, c.title, got, c.want)
		}
	}
	if hostToolName(&agentcli.Request{}) != nil {
		t.Error("a request without host tools has a RawName hook")
	}
	if q := hostToolName(&agentcli.Request{OnQuestion: func(context.Context, *agentcli.Question) (*agentcli.Answer, error) { return nil, nil }}); q == nil || q("", "agentcli-ask_question") == "" {
		t.Error("the question tool is not recognised")
	}
}

func TestSwitching(t *testing.T) {
	full := Agent{Name: "full", Modes: map[string]string{"bypass": "yolo", "ask": "default", "deny": "default", "plan": "plan"}}
	part := Agent{Name: "part", Modes: map[string]string{"plan": "spec"}}
	envd := Agent{Name: "envd", Env: map[string][]string{"ask": {"X=1"}, "deny": {"X=1"}}}
	for _, c := range []struct {
		a     Agent
		start agentcli.PermissionMode
		to    agentcli.PermissionMode
		want  string
		err   bool
	}{
		{full, "", agentcli.PermissionBypass, "yolo", false},
		{full, agentcli.PermissionPlan, agentcli.PermissionAsk, "default", false},
		{part, "", agentcli.PermissionAsk, "", false},
		{part, "", agentcli.PermissionPlan, "", true},
		{part, agentcli.PermissionPlan, agentcli.PermissionDeny, "", true},
		{envd, "", agentcli.PermissionAsk, "", false},
		{envd, "", agentcli.PermissionBypass, "", true},
	} {
		st := &state{agent: c.a}
		sw := st.switching(&agentcli.Request{Permission: c.start})
		got, err := sw.Mode(c.to)
		var ue *agentcli.UnsupportedError
		if got != c.want || (err != nil) != c.err || (err != nil && !errors.As(err, &ue)) {
			t.Errorf("%s from %q to %s: %q, %v", c.a.Name, c.start, c.to, got, err)
		}
	}
	if got := switchModes(full); len(got) != 4 {
		t.Errorf("switchModes(full) = %v", got)
	}
	if got := switchModes(part); len(got) != 3 {
		t.Errorf("switchModes(part) = %v", got)
	}
}
