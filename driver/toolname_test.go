package driver

import (
	"testing"

	"github.com/agentcli/agentcli"
)

func TestParseRule(t *testing.T) {
	for in, want := range map[string]Rule{
		"Bash":              {Text: "Bash", Name: "Bash"},
		" Bash(git *) ":     {Text: "Bash(git *)", Name: "Bash", Pattern: "git *", HasPattern: true},
		"mcp__docs":         {Text: "mcp__docs", Name: "mcp__docs", MCPServer: "docs"},
		"mcp__docs__search": {Text: "mcp__docs__search", Name: "mcp__docs__search", MCPServer: "docs", MCPTool: "search"},
		"run_shell_command": {Text: "run_shell_command", Name: "run_shell_command"},
	} {
		got, err := ParseRule(in)
		if err != nil || got != want {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "  ", "-x", "--tools", "Bash(", "Bash()", "(x)", "Bash)", "a b", "mcp__", "mcp__x(y)", "Bash(x)y", "é"} {
		if r, err := ParseRule(in); err == nil {
			t.Errorf("ParseRule(%q) = %+v, want an error", in, r)
		}
	}
}

func TestJudge(t *testing.T) {
	bash := &agentcli.ToolUse{Name: "Bash", RawName: "run_shell_command"}
	read := &agentcli.ToolUse{Name: "Read", RawName: "read_file"}
	mcp := &agentcli.ToolUse{Name: "mcp__docs__search", RawName: "mcp__docs__search"}
	oc := &agentcli.ToolUse{Name: "docs_search", RawName: "docs_search"} // opencode's spelling
	cases := []struct {
		allowed, disallowed []string
		t                   *agentcli.ToolUse
		want                Verdict
	}{
		{nil, nil, bash, VerdictDefer},
		{[]string{"Read"}, nil, bash, VerdictRefuse},
		{[]string{"read"}, nil, read, VerdictAllow},
		{[]string{"run_shell_command"}, nil, bash, VerdictAllow},
		{[]string{"Bash(git *)"}, nil, bash, VerdictDefer},
		{[]string{"Bash"}, []string{"bash"}, bash, VerdictRefuse},
		{nil, []string{"Bash(rm *)"}, bash, VerdictDefer},
		{[]string{"mcp__docs"}, nil, mcp, VerdictAllow},
		{[]string{"mcp__docs__search"}, nil, oc, VerdictAllow},
		{[]string{"mcp__docs__other"}, nil, mcp, VerdictRefuse},
		{[]string{"mcp__doc"}, nil, mcp, VerdictRefuse},
		{[]string{"-x"}, nil, bash, VerdictRefuse},
	}
	for _, c := range cases {
		if got := Judge(c.allowed, c.disallowed, c.t); got != c.want {
			t.Errorf("Judge(%q, %q, %s) = %d, want %d", c.allowed, c.disallowed, c.t.Name, got, c.want)
		}
	}
}

func TestToolsResolve(t *testing.T) {
	tools := Tools{"run_shell_command": agentcli.ToolNameBash, "shell": agentcli.ToolNameBash, "read_file": agentcli.ToolNameRead}
	if got := tools.Resolve("bash"); len(got) != 2 || got[0] != "run_shell_command" || got[1] != "shell" {
		t.Errorf("Resolve(bash) = %q", got)
	}
	if got := tools.Resolve("READ_FILE"); len(got) != 1 || got[0] != "read_file" {
		t.Errorf("Resolve(READ_FILE) = %q", got)
	}
	if got := tools.Resolve("Glob"); got != nil {
		t.Errorf("Resolve(Glob) = %q", got)
	}
}
