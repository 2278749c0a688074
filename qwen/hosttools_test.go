package qwen

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
)

func TestHostArgs(t *testing.T) {
	host := agentcli.MCPServer{Name: agentcli.HostServerName, URL: "http://127.0.0.1:1/mcp"}
	tool := agentcli.Tool{Name: "now"}
	ask := func(context.Context, *agentcli.Question) (*agentcli.Answer, error) { return nil, nil }
	pre := &agentcli.Hooks{PreToolUse: func(context.Context, *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
		return agentcli.PreToolUseOutput{}
	}}
	for _, c := range []struct {
		name string
		req  agentcli.Request
		want []string
	}{
		{"host tools", agentcli.Request{Tools: []agentcli.Tool{tool}, MCPServers: []agentcli.MCPServer{host}},
			[]string{"--allowed-tools=mcp__agentcli"}},
		// A server of the caller's named agentcli (no host tools) is not
		// approved.
		{"caller's server", agentcli.Request{MCPServers: []agentcli.MCPServer{host}}, nil},
		// An allow list keeps agentcli's server.
		{"allow list", agentcli.Request{Tools: []agentcli.Tool{tool}, AllowedTools: []string{"Read"},
			MCPServers: []agentcli.MCPServer{{Name: "other", Command: "x"}, host}},
			[]string{"--core-tools=read_file", "--core-tools=zoom_image", "--allowed-tools=read_file", "--allowed-tools=zoom_image",
				"--allowed-tools=mcp__agentcli", "--allowed-mcp-server-names=agentcli"}},
	} {
		if got := toolArgs(&c.req, false); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// A bypass run whose OnQuestion gets ask_user_question is a live turn
	// that keeps the tool; under an allow list it is not qwen's.
	q := &agentcli.Request{Permission: agentcli.PermissionBypass, OnQuestion: ask}
	if !spec.LiveRun(q) || slices.Contains(toolArgs(q, oneShot(q)), "--exclude-tools=ask_user_question") {
		t.Errorf("OnQuestion under bypass: live %v, args %q", spec.LiveRun(q), toolArgs(q, oneShot(q)))
	}
	if !spec.Questions(q) || spec.Questions(&agentcli.Request{OnQuestion: ask, AllowedTools: []string{"Read"}}) {
		t.Error("Questions: qwen's own tool unless an allow list leaves it out")
	}
	// Hooks are qwen's own settings hooks: a bypass run with them stays
	// one-shot in yolo mode.
	h := &agentcli.Request{Permission: agentcli.PermissionBypass, Hooks: pre}
	if approvalMode(h) != "yolo" || spec.LiveRun(h) {
		t.Errorf("PreToolUse under bypass: mode %s, live %v", approvalMode(h), spec.LiveRun(h))
	}
}

func TestHostMCPConfig(t *testing.T) {
	servers := []agentcli.MCPServer{{Name: agentcli.HostServerName, URL: "http://127.0.0.1:1/mcp"}, {Name: "s", Command: "x"}}
	for _, host := range []bool{true, false} {
		var cfg struct {
			MCPServers map[string]map[string]any `json:"mcpServers"`
		}
		if err := json.Unmarshal(mcpConfig(servers, host), &cfg); err != nil {
			t.Fatal(err)
		}
		if got := cfg.MCPServers[agentcli.HostServerName]["alwaysLoadTools"] == true; got != host {
			t.Errorf("host %v: agentcli's entry %v", host, cfg.MCPServers[agentcli.HostServerName])
		}
		// qwen's limit for one call (ms), raised for agentcli's server only.
		if got := cfg.MCPServers[agentcli.HostServerName]["timeout"] == float64(2147483647); got != host {
			t.Errorf("host %v: agentcli's entry %v, want timeout 2147483647 exactly with host tools", host, cfg.MCPServers[agentcli.HostServerName])
		}
		if _, ok := cfg.MCPServers["s"]["alwaysLoadTools"]; ok {
			t.Errorf("another server is loaded up front: %v", cfg.MCPServers["s"])
		}
		if _, ok := cfg.MCPServers["s"]["timeout"]; ok {
			t.Errorf("another server's timeout is set: %v", cfg.MCPServers["s"])
		}
	}
}
