package opencode

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/backendtest"
)

func TestLiveArgsAndPermissions(t *testing.T) {
	if got := liveArgs(&agentcli.Request{ExtraArgs: []string{"--print-logs"}, Prompt: "-x"}); !slices.Equal(got, []string{"acp", "--print-logs"}) {
		t.Errorf("liveArgs = %q", got)
	}
	if permissionEnv(&agentcli.Request{Permission: agentcli.PermissionBypass}, "") != "" {
		t.Error("bypass changes the permission config")
	}
	cases := []struct {
		prev string
		mode agentcli.PermissionMode
		want string
	}{
		{"", agentcli.PermissionAsk, `{"bash":"ask","codesearch":"ask","edit":"ask","external_directory":"ask","webfetch":"ask","websearch":"ask"}`},
		// The zero value is deny.
		{"", "", `{"bash":"deny","codesearch":"deny","edit":"deny","external_directory":"deny","webfetch":"deny","websearch":"deny"}`},
		{`"allow"`, agentcli.PermissionDeny, `{"*":"allow","bash":"deny","codesearch":"deny","edit":"deny","external_directory":"deny","webfetch":"deny","websearch":"deny"}`},
		{`{"read":"ask","bash":"allow"}`, agentcli.PermissionPlan, `{"read":"ask","bash":"deny","edit":"deny"}`},
		{`not json`, agentcli.PermissionPlan, `{"bash":"deny","edit":"deny"}`},
	}
	// The tools of the request's MCP servers follow ask and deny; plan
	// leaves them to opencode's plan agent.
	servers := []agentcli.MCPServer{{Name: "docs", URL: "http://127.0.0.1:1/mcp"}, {Name: "my-srv", Command: "srv"}}
	for m, want := range map[agentcli.PermissionMode]string{
		agentcli.PermissionAsk:    `{"bash":"ask","codesearch":"ask","edit":"ask","external_directory":"ask","webfetch":"ask","websearch":"ask","docs_*":"ask","my-srv_*":"ask"}`,
		agentcli.PermissionDeny:   `{"bash":"deny","codesearch":"deny","edit":"deny","external_directory":"deny","webfetch":"deny","websearch":"deny","docs_*":"deny","my-srv_*":"deny"}`,
		agentcli.PermissionPlan:   `{"bash":"deny","edit":"deny"}`,
		agentcli.PermissionBypass: ``,
	} {
		if got := permissionEnv(&agentcli.Request{Permission: m, MCPServers: servers}, ""); got != want {
			t.Errorf("with MCP servers, %s: %s, want %s", m, got, want)
		}
	}
	for _, c := range cases {
		got := permissionEnv(&agentcli.Request{Permission: c.mode}, c.prev)
		if got != c.want {
			t.Errorf("permissionEnv(%s, %s) = %s, want %s", c.prev, c.mode, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("invalid JSON %s", got)
		}
	}
}

// TestToolListPermissions: an allow list denies everything first and
// allows its tools after; a disallow list denies last, so it wins; a
// shell pattern allows the prefix alone and with arguments; what opencode
// cannot hold is refused. (Checked against opencode 1.18.33 by the
// conformance suite's TestToolLists.)
func TestToolListPermissions(t *testing.T) {
	cases := []struct {
		req  agentcli.Request
		want string
	}{
		{agentcli.Request{AllowedTools: []string{"Read", "grep"}}, `{"*":"deny","read":"allow","grep":"allow"}`},
		{agentcli.Request{AllowedTools: []string{"Write", "Edit", "mcp__docs__search", "mcp__fs"}, Permission: agentcli.PermissionBypass},
			`{"*":"deny","edit":"allow","docs_search":"allow","fs_*":"allow"}`},
		{agentcli.Request{AllowedTools: []string{"Bash(git *)", "Bash(go:*)"}}, `{"*":"deny","bash":{"*":"deny","git":"allow","git *":"allow","go":"allow","go *":"allow"}}`},
		{agentcli.Request{AllowedTools: []string{"Bash(git *)"}, Permission: agentcli.PermissionAsk}, `{"*":"deny","bash":{"*":"ask","git":"allow","git *":"allow"}}`},
		{agentcli.Request{AllowedTools: []string{"Bash(git *)", "Bash"}}, `{"*":"deny","bash":"allow"}`},
		{agentcli.Request{AllowedTools: []string{"Bash"}, DisallowedTools: []string{"Bash(rm *)"}, Permission: agentcli.PermissionBypass},
			`{"*":"deny","bash":{"*":"allow","rm":"deny","rm *":"deny"}}`},
		{agentcli.Request{DisallowedTools: []string{"Bash", "mcp__docs"}, Permission: agentcli.PermissionBypass}, `{"bash":"deny","docs_*":"deny"}`},
		{agentcli.Request{AllowedTools: []string{"Read"}, Permission: agentcli.PermissionPlan}, `{"*":"deny","read":"allow","bash":"deny","edit":"deny"}`},
	}
	for _, c := range cases {
		if err := checkTools(&c.req); err != nil {
			t.Errorf("%v: %v", c.req.AllowedTools, err)
		}
		if got := permissionEnv(&c.req, ""); got != c.want {
			t.Errorf("allow %q, disallow %q, %s: %s, want %s", c.req.AllowedTools, c.req.DisallowedTools, c.req.Permission, got, c.want)
		}
	}
	for _, rules := range [][]string{{"Read(src/**)"}, {"Bash(git *x)"}, {"Bash(*)"}} {
		if err := checkTools(&agentcli.Request{AllowedTools: rules}); !errors.Is(err, agentcli.ErrUnsupported) {
			t.Errorf("%q: %v, want ErrUnsupported", rules, err)
		}
	}
}

func TestLiveGuardAndToolName(t *testing.T) {
	for in, want := range map[string]string{"/init": "\u200b/init", " /help": "\u200b /help", "@a.go": "@a.go", "x /y": "x /y"} {
		if got := guardPrompt(in); got != want {
			t.Errorf("guardPrompt(%q) = %q, want %q", in, got, want)
		}
	}
	for title, want := range map[string]string{"bash": "bash", "apply_patch": "apply_patch", "touch x": "", "Read": "", "": ""} {
		if got := toolName("call_1", title); got != want {
			t.Errorf("toolName(%q) = %q, want %q", title, got, want)
		}
	}
	// The tools of the request's MCP servers are "NAME_TOOL".
	name := mcpToolName([]agentcli.MCPServer{{Name: "My-srv", Command: "x"}})
	for title, want := range map[string]string{"My-srv_probe": "My-srv_probe", "My-srv_ x": "", "bash": "bash", "Other_probe": "", "My-srv": ""} {
		if got := name("call_1", title); got != want {
			t.Errorf("mcpToolName(%q) = %q, want %q", title, got, want)
		}
	}
}

// realBackend returns the pinned opencode and a request wired to srv. The
// calling test must have called backendtest.RunIsolated.
func realBackend(t *testing.T, srv *agentclitest.Server) (agentcli.Backend, *agentcli.Request, string) {
	t.Helper()
	return backendtest.RealBackend(t, "opencode", srv, New)
}

// One-shot Runs with PermissionAsk, PermissionDeny and PermissionPlan go
// through a live session: the command never runs. Under ask opencode ends the turn at the refusal (no second model
// call); under deny and plan it takes the tool away and the turn goes on.
func TestLiveOneShotReal(t *testing.T) {
	for _, m := range []agentcli.PermissionMode{agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan} {
		t.Run(string(m), func(t *testing.T) {
			if backendtest.RunIsolated(t) {
				return
			}
			srv := agentclitest.NewServer(agentclitest.Turn{Shell: "touch NOPE"}, agentclitest.Turn{Text: "fine"})
			defer srv.Close()
			b, req, dir := realBackend(t, srv)
			res, asked := backendtest.RunRefusing(t, b, req, dir, m)
			wantText, wantAsked := "fine", 0
			if m == agentcli.PermissionAsk {
				wantText, wantAsked = "", 1
			}
			if res.Text != wantText || asked != wantAsked {
				t.Errorf("Result.Text = %q after %d permission requests; want %q after %d", res.Text, asked, wantText, wantAsked)
			}
		})
	}
}
