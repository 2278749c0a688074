package gemini

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
)

// TestToolLists: the settings and flags an allow or disallow list
// becomes. (Checked against gemini 0.61.0 by the conformance suite's
// TestToolLists.)
func TestToolLists(t *testing.T) {
	req := &agentcli.Request{
		AllowedTools:    []string{"Read", "Bash(git *)", "bash(go:*)", "mcp__docs__search"},
		DisallowedTools: []string{"WebFetch", "mcp__docs__drop"},
		MCPServers:      []agentcli.MCPServer{{Name: "docs", Command: "d"}, {Name: "fs", Command: "f"}},
	}
	s, _ := runSettings(req)
	b, _ := json.Marshal(s)
	var got struct {
		Tools struct {
			Core, Allowed, Exclude []string
		}
		MCPServers map[string]struct {
			IncludeTools, ExcludeTools []string
			Trust                      bool
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	wantCore := []string{"read_file", "read_many_files", "run_shell_command(git)", "run_shell_command(go)"}
	if !slices.Equal(got.Tools.Core, wantCore) || !slices.Equal(got.Tools.Allowed, wantCore) {
		t.Errorf("core %q, allowed %q; want %q", got.Tools.Core, got.Tools.Allowed, wantCore)
	}
	if !slices.Equal(got.Tools.Exclude, []string{"web_fetch"}) {
		t.Errorf("exclude %q", got.Tools.Exclude)
	}
	docs, ok := got.MCPServers["docs"]
	if _, fs := got.MCPServers["fs"]; fs || !ok || !slices.Equal(docs.IncludeTools, []string{"search"}) ||
		!slices.Equal(docs.ExcludeTools, []string{"drop"}) || !docs.Trust {
		t.Errorf("servers %+v", got.MCPServers)
	}
	if args := buildArgs(req, formatJSON); !slices.Contains(args, "--allowed-mcp-server-names=docs") {
		t.Errorf("argv %q", args)
	}
	// An allow list of MCP tools only: no built-in tool at all.
	s, _ = runSettings(&agentcli.Request{AllowedTools: []string{"mcp__docs"}})
	b, _ = json.Marshal(s)
	if string(b) != `{"tools":{"core":["agentcli.none"]}}` {
		t.Errorf("MCP-only allow list: %s", b)
	}
	for _, rules := range [][]string{{"Read(src/**)"}, {"Bash(git)"}, {"Bash(*)"}, {"Bash(git * x)"}} {
		if err := checkTools(&agentcli.Request{AllowedTools: rules}); !errors.Is(err, agentcli.ErrUnsupported) {
			t.Errorf("%q: %v, want ErrUnsupported", rules, err)
		}
	}
}
