package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentcli/agentcli"
)

func agentNamed(t *testing.T, name string) Agent {
	t.Helper()
	for _, a := range Agents {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no known agent %s", name)
	return Agent{}
}

// Every known agent is registered under its name, with a binary and a
// package to install it from; the generic backend as "acp".
func TestRegistered(t *testing.T) {
	names := map[string]bool{Name: true}
	for _, a := range Agents {
		if a.Binary == "" || a.Package == "" || a.Version == "" || names[a.Name] {
			t.Errorf("agent %+v: missing binary, package or version, or a duplicate name", a)
		}
		names[a.Name] = true
	}
	for name := range names {
		b, err := agentcli.Open(name, nil)
		if err != nil {
			t.Fatalf("Open(%s): %v", name, err)
		}
		if b.Capabilities().Resume {
			t.Errorf("%s: Resume before the agent said it can load a session", name)
		}
	}
}

// The generic backend without Options.Path has nothing to run: a
// *BinaryError (ErrNotFound) whose hint says what to set.
func TestGenericNeedsPath(t *testing.T) {
	b, err := agentcli.Open(Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Check(context.Background())
	var be *agentcli.BinaryError
	if !errors.As(err, &be) || !errors.Is(err, agentcli.ErrNotFound) || be.Hint == "" {
		t.Fatalf("Check = %v; want a *BinaryError with a hint", err)
	}
}

// Options.Args replace a known agent's arguments, and are copied.
func TestArgs(t *testing.T) {
	a := agentNamed(t, "qwen-acp")
	args := []string{"--acp", "--debug"}
	b := NewAgent(a, &agentcli.Options{Args: args}).(*backend)
	args[1] = "changed"
	if got := b.st.args; len(got) != 2 || got[1] != "--debug" {
		t.Fatalf("args %q", got)
	}
	if got := NewAgent(a, nil).(*backend).st.args; len(got) != 1 || got[0] != "--acp" {
		t.Fatalf("default args %q", got)
	}
}

func TestGuardPrompt(t *testing.T) {
	for in, want := range map[string]string{
		"/help":         "\u200b/help",
		"  /allow-all":  "\u200b  /allow-all",
		"say /help":     "say /help",
		"--help":        "--help",
		"":              "",
		"a\n/help":      "a\n/help",
		"\u200b/hidden": "\u200b/hidden",
	} {
		if got := guardPrompt(in); got != want {
			t.Errorf("guardPrompt(%q) = %q, want %q", in, got, want)
		}
	}
}

// ACP carries no tool lists: a request with one is refused before
// anything starts.
func TestValidate(t *testing.T) {
	for _, req := range []*agentcli.Request{{AllowedTools: []string{"Read"}}, {DisallowedTools: []string{"Bash"}}} {
		var ue *agentcli.UnsupportedError
		if err := validate("acp", req); !errors.As(err, &ue) {
			t.Errorf("validate(%+v) = %v; want an *UnsupportedError", req, err)
		}
	}
	if err := validate("acp", &agentcli.Request{Prompt: "hi"}); err != nil {
		t.Errorf("validate: %v", err)
	}
}

// The session's mode: a known agent's own mode for each permission mode
// when offered; none (the host answers) otherwise; plan needs a plan mode.
func TestModeOf(t *testing.T) {
	qwen := &state{agent: agentNamed(t, "qwen-acp")}
	generic := &state{agent: Agent{Name: Name}}
	copilot := &state{agent: agentNamed(t, "copilot-acp")}
	qwenModes := []string{"plan", "default", "auto-edit", "yolo"}
	copilotModes := []string{"https://agentclientprotocol.com/protocol/session-modes#agent", "https://agentclientprotocol.com/protocol/session-modes#plan"}
	for _, c := range []struct {
		st      *state
		mode    agentcli.PermissionMode
		offered []string
		want    string
		err     bool
	}{
		{qwen, agentcli.PermissionBypass, qwenModes, "yolo", false},
		{qwen, agentcli.PermissionAsk, qwenModes, "default", false},
		{qwen, "", qwenModes, "default", false}, // the zero mode is deny
		{qwen, agentcli.PermissionPlan, qwenModes, "plan", false},
		{qwen, agentcli.PermissionBypass, nil, "", false}, // not offered: the host's answers
		{qwen, agentcli.PermissionPlan, []string{"default"}, "", true},
		{generic, agentcli.PermissionBypass, qwenModes, "", false},
		{generic, agentcli.PermissionPlan, []string{"ask", "PLAN"}, "PLAN", false},
		{generic, agentcli.PermissionPlan, copilotModes, copilotModes[1], false},
		{generic, agentcli.PermissionPlan, []string{"ask", "code"}, "", true},
		{copilot, agentcli.PermissionPlan, copilotModes, copilotModes[1], false},
		{copilot, agentcli.PermissionAsk, copilotModes, "", false},
	} {
		got, err := c.st.modeOf(&agentcli.Request{Permission: c.mode})(c.offered)
		var ue *agentcli.UnsupportedError
		if got != c.want || (err != nil) != c.err || (err != nil && !errors.As(err, &ue)) {
			t.Errorf("%s %q of %q: %q, %v; want %q (error %v)", c.st.agent.Name, c.mode, c.offered, got, err, c.want, c.err)
		}
	}
}

// What the agent advertises at initialize decides Resume, and a request
// the agent cannot carry fails the start.
func TestOnInitialize(t *testing.T) {
	b := NewAgent(Agent{Name: "x", Binary: "x"}, nil).(*backend)
	check := func(req *agentcli.Request, init string) error {
		return b.st.onInitialize(req)(json.RawMessage(init))
	}
	plain := `{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"X","version":"1.2.3"}}`
	if err := check(&agentcli.Request{}, plain); err != nil {
		t.Fatal(err)
	}
	if b.Capabilities().Resume {
		t.Errorf("Resume without loadSession")
	}
	var ue *agentcli.UnsupportedError
	if err := check(&agentcli.Request{SessionID: "s"}, plain); !errors.As(err, &ue) {
		t.Errorf("resume without loadSession: %v", err)
	}
	if err := check(&agentcli.Request{MCPServers: []agentcli.MCPServer{{Name: "h", URL: "http://127.0.0.1:1/mcp"}}}, plain); !errors.As(err, &ue) {
		t.Errorf("an HTTP MCP server without mcpCapabilities.http: %v", err)
	}
	loads := `{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":true}},"future":{"x":1}}`
	if err := check(&agentcli.Request{SessionID: "s", MCPServers: []agentcli.MCPServer{{Name: "h", URL: "http://127.0.0.1:1/mcp"}}}, loads); err != nil {
		t.Errorf("an agent that loads sessions and takes HTTP servers: %v", err)
	}
	if !b.Capabilities().Resume {
		t.Errorf("no Resume after loadSession was advertised")
	}
	copilot := `{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"agentInfo":{"name":"Copilot","version":"1.0.102"}}`
	if err := check(&agentcli.Request{MCPServers: []agentcli.MCPServer{{Name: "s", Command: "srv"}}}, copilot); !errors.As(err, &ue) {
		t.Errorf("a stdio MCP server for copilot (which ignores them): %v", err)
	}
	var pe *agentcli.ProtocolError
	if err := check(&agentcli.Request{}, `[1,2]`); !errors.As(err, &pe) {
		t.Errorf("an answer that is not an object: %v", err)
	}
}

func TestCopilotNotice(t *testing.T) {
	for text, want := range map[string]bool{
		"Info: Disabled tools: bash": true,
		"Warning: model not listed":  true,
		"Info: ":                     false,
		"Information is power":       false,
		"ok":                         false,
	} {
		if got := copilotNotice(text); got != want {
			t.Errorf("copilotNotice(%q) = %v", text, got)
		}
	}
}
