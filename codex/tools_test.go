package codex

import (
	"errors"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
)

// TestToolPolicy: which switches an allow or disallow list turns off,
// which sandbox each mode gets, and what codex cannot hold. (Checked
// against codex 0.169.0 by the conformance suite's TestToolLists.)
func TestToolPolicy(t *testing.T) {
	const (
		shell = "features.shell_tool"
		image = "features.view_image"
		web   = "web_search"
		agent = "features.multi_agent"
		goals = "features.goals"
	)
	cases := []struct {
		name     string
		req      agentcli.Request
		off      []string
		readOnly bool
	}{
		{"zero value", agentcli.Request{}, nil, true},
		{"bypass", agentcli.Request{Permission: agentcli.PermissionBypass}, nil, false},
		{"plan", agentcli.Request{Permission: agentcli.PermissionPlan}, nil, true},
		{"read only", agentcli.Request{AllowedTools: []string{"Read", "Grep"}, Permission: agentcli.PermissionBypass},
			[]string{shell, web, agent, goals}, true},
		{"shell keeps the patch tool", agentcli.Request{AllowedTools: []string{"read", "BASH"}, Permission: agentcli.PermissionBypass},
			[]string{web, agent, goals}, false},
		{"edit without shell", agentcli.Request{AllowedTools: []string{"Edit"}}, []string{shell, image, web, agent, goals}, false},
		{"codex's own names", agentcli.Request{AllowedTools: []string{"exec_command", "web_search"}, Permission: agentcli.PermissionBypass},
			[]string{image, agent, goals}, false},
		{"disallow", agentcli.Request{DisallowedTools: []string{"Bash", "WebSearch"}, Permission: agentcli.PermissionBypass},
			[]string{shell, web}, false},
		{"disallow everything that writes", agentcli.Request{DisallowedTools: []string{"Bash", "Edit"}, Permission: agentcli.PermissionBypass},
			[]string{shell}, true},
		{"ask", agentcli.Request{AllowedTools: []string{"Read"}, Permission: agentcli.PermissionAsk}, []string{shell, web, agent, goals}, false},
	}
	for _, c := range cases {
		p, err := policyFor(&c.req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var off []string
		for _, o := range p.overrides {
			off = append(off, o[0])
		}
		for _, k := range c.off {
			if !slices.Contains(off, k) {
				t.Errorf("%s: %s not switched off: %q", c.name, k, off)
			}
		}
		for _, k := range []string{shell, image, web, agent, goals} {
			if slices.Contains(off, k) && !slices.Contains(c.off, k) {
				t.Errorf("%s: %s switched off: %q", c.name, k, off)
			}
		}
		if p.readOnly != c.readOnly {
			t.Errorf("%s: read-only sandbox %v, want %v", c.name, p.readOnly, c.readOnly)
		}
	}
	for _, req := range []agentcli.Request{
		{AllowedTools: []string{"Bash(git *)"}},
		{DisallowedTools: []string{"Edit"}, Permission: agentcli.PermissionBypass},
		{AllowedTools: []string{"Bash"}, DisallowedTools: []string{"Write"}},
	} {
		if err := checkTools(&req); !errors.Is(err, agentcli.ErrUnsupported) {
			t.Errorf("allow %q disallow %q: %v, want ErrUnsupported", req.AllowedTools, req.DisallowedTools, err)
		}
	}
	// MCP rules: the servers a list does not allow are left out; the
	// tools it names are the server's enabled tools.
	req := &agentcli.Request{AllowedTools: []string{"mcp__docs__search"}, DisallowedTools: []string{"mcp__fs__rm"},
		MCPServers: []agentcli.MCPServer{{Name: "docs", Command: "d"}, {Name: "fs", Command: "f"}}, Permission: agentcli.PermissionBypass}
	if got := restrict(req).MCPServers; len(got) != 1 || got[0].Name != "docs" {
		t.Errorf("servers kept: %+v", got)
	}
	args := buildArgs(req, "")
	if !slices.Contains(args, `mcp_servers.docs.enabled_tools=["search"]`) || slices.ContainsFunc(args, func(a string) bool { return a == `mcp_servers.fs.command="f"` }) {
		t.Errorf("argv %q", args)
	}
}
