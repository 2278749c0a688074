package copilot

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// What each request's modes and lists become on copilot's command line
// (the flags were checked by real runs; conformance TestToolLists runs
// them).
func TestToolFlags(t *testing.T) {
	bash := "bash,list_bash,list_powershell,powershell,read_bash,read_powershell,stop_bash,stop_powershell"
	for _, c := range []struct {
		name string
		req  agentcli.Request
		want []string
	}{
		{"deny, no lists", agentcli.Request{}, nil},
		{"bypass", agentcli.Request{Permission: agentcli.PermissionBypass}, []string{"--allow-all"}},
		{"only reading, bypass", agentcli.Request{Permission: agentcli.PermissionBypass, AllowedTools: []string{"Read"}},
			[]string{"--allow-all", "--available-tools=view"}},
		{"the shell approved in advance, deny", agentcli.Request{AllowedTools: []string{"Read", "Bash"}},
			[]string{"--available-tools=view," + bash, "--allow-tool=shell"}},
		{"writes approved", agentcli.Request{AllowedTools: []string{"Write", "edit"}},
			[]string{"--available-tools=create,edit", "--allow-tool=write"}},
		{"a shell pattern, bypass", agentcli.Request{Permission: agentcli.PermissionBypass, AllowedTools: []string{"Read", "Bash(git *)"}},
			[]string{"--allow-all-paths", "--allow-all-urls", "--available-tools=view," + bash, "--allow-tool=shell(git:*)"}},
		{"an exact command", agentcli.Request{AllowedTools: []string{"Bash(git status)"}},
			[]string{"--available-tools=" + bash, "--allow-tool=shell(git status)"}},
		{"the shell disallowed", agentcli.Request{Permission: agentcli.PermissionBypass, DisallowedTools: []string{"Bash"}},
			[]string{"--allow-all", "--excluded-tools=" + bash, "--deny-tool=shell"}},
		{"a command disallowed", agentcli.Request{DisallowedTools: []string{"Bash(rm:*)"}},
			[]string{"--deny-tool=shell(rm:*)"}},
		{"MCP tools", agentcli.Request{AllowedTools: []string{"mcp__docs", "mcp__web__fetch"}, DisallowedTools: []string{"mcp__docs__drop", "mcp__old"}},
			[]string{"--available-tools=docs,web-fetch", "--excluded-tools=docs-drop,old", "--allow-tool=docs", "--allow-tool=web(fetch)",
				"--deny-tool=docs(drop)", "--deny-tool=old"}},
		{"an allow list of unknown tools only", agentcli.Request{AllowedTools: []string{"mystery_tool"}},
			[]string{"--available-tools=mystery_tool"}},
	} {
		p, err := policyFor(&c.req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := p.args(); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// Rules copilot cannot hold are refused before anything starts.
func TestToolRulesUnsupported(t *testing.T) {
	for _, req := range []agentcli.Request{
		{AllowedTools: []string{"Bash(echo a,b)"}},
		{AllowedTools: []string{"Edit(src/**)"}},
		{AllowedTools: []string{"Bash(git * --force)"}},
		{AllowedTools: []string{"mcp__view"}},
		{DisallowedTools: []string{"ba*"}},
		{AllowedTools: []string{"Read"}, MCPServers: []agentcli.MCPServer{{Name: "bash", Command: "x"}}},
	} {
		var ue *agentcli.UnsupportedError
		if err := validate(&req); !errors.As(err, &ue) || ue.Backend != Name {
			t.Errorf("%+v: %v; want an UnsupportedError", req, err)
		}
	}
}

// The MCP configuration: the servers an allow list names, with its tools
// as their filter, every "$" of the caller's values written as a reference
// to a variable holding "$" (copilot expands $NAME and ${NAME}), and no
// server an allow list does not name.
func TestMCPConfig(t *testing.T) {
	servers := []agentcli.MCPServer{
		{Name: "docs", Command: "srv-$X", Args: []string{"${HOME}", "a$"}, Env: []string{"TOKEN=s3$cr3t"}},
		{Name: "web", URL: "http://127.0.0.1/mcp?q=$HOME", Headers: map[string]string{"Authorization": "Bearer $T"}},
		{Name: "left-out", Command: "x"},
	}
	p, err := policyFor(&agentcli.Request{AllowedTools: []string{"mcp__docs__search", "mcp__web"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := mcpConfig(servers, p)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Type, Command, URL string
			Args               []string
			Env, Headers       map[string]string
			Tools              []string
		}
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	d, w := cfg.MCPServers["docs"], cfg.MCPServers["web"]
	const dollar = "${" + dollarVar + "}"
	if len(cfg.MCPServers) != 2 || d.Type != "local" || d.Command != "srv-"+dollar+"X" ||
		!slices.Equal(d.Args, []string{dollar + "{HOME}", "a" + dollar}) || d.Env["TOKEN"] != "s3"+dollar+"cr3t" ||
		!slices.Equal(d.Tools, []string{"search"}) {
		t.Fatalf("docs: %+v (all: %s)", d, b)
	}
	if w.Type != "http" || w.URL != "http://127.0.0.1/mcp?q="+dollar+"HOME" || w.Headers["Authorization"] != "Bearer "+dollar+"T" ||
		!slices.Equal(w.Tools, []string{"*"}) {
		t.Fatalf("web: %+v", w)
	}
	if strings.Contains(string(b), "left-out") {
		t.Fatalf("a server the allow list does not name: %s", b)
	}
}

// TestMCPConfigHostTimeout: agentcli's own server (a request with host
// tools) gets copilot's limit for one call, "timeout",
// driver.HostToolTimeout in ms; the caller's server keeps copilot's
// default, and so does a server named agentcli without host tools.
func TestMCPConfigHostTimeout(t *testing.T) {
	servers := []agentcli.MCPServer{{Name: "web", URL: "http://127.0.0.1:1/mcp"}, {Name: agentcli.HostServerName, URL: "http://127.0.0.1:2/mcp"}}
	for _, host := range []bool{true, false} {
		req := &agentcli.Request{MCPServers: servers}
		if host {
			req.Tools = []agentcli.Tool{{Name: "now"}}
		}
		p, err := policyFor(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := mcpConfig(servers, p)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			MCPServers map[string]map[string]any `json:"mcpServers"`
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
		if _, ok := cfg.MCPServers["web"]["timeout"]; ok {
			t.Errorf("host %v: the caller's server has a timeout: %s", host, b)
		}
		if got := cfg.MCPServers[agentcli.HostServerName]["timeout"] == float64(2147483647); got != host {
			t.Errorf("host %v: agentcli's entry %v, want timeout 2147483647 exactly with host tools", host, cfg.MCPServers[agentcli.HostServerName])
		}
	}
}
