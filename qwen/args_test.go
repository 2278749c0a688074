package qwen

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
)

func TestPromptText(t *testing.T) {
	for in, want := range map[string]string{
		"hello":              "hello",
		"/help":              " /help",
		" /help":             " /help",
		"//comment":          "//comment",
		"/* c */":            "/* c */",
		"@README.md":         `\@README.md`,
		"mail a@b.com @ x":   `mail a\@b.com \@ x`,
		`already \@x`:        `already \@x`,
		"/init @x":           ` /init \@x`,
		"--help":             "--help",
		"bad \xff utf8":      "bad \uFFFD utf8",
		"line\n@file\n/cmd ": "line\n\\@file\n/cmd ",
	} {
		if got := promptText(in); got != want {
			t.Errorf("promptText(%q) = %q, want %q", in, got, want)
		}
	}
	var m struct {
		Type    string
		Message struct{ Role, Content string }
	}
	if err := json.Unmarshal(userMessage("@x"), &m); err != nil || m.Type != "user" || m.Message.Role != "user" || m.Message.Content != `\@x` {
		t.Errorf("userMessage: %+v, %v", m, err)
	}
}

func TestApprovalModes(t *testing.T) {
	for _, c := range []struct {
		req     agentcli.Request
		mode    string
		oneShot bool
	}{
		{agentcli.Request{}, "default", false},
		{agentcli.Request{Permission: agentcli.PermissionDeny}, "default", false},
		{agentcli.Request{Permission: agentcli.PermissionAsk}, "default", false},
		{agentcli.Request{Permission: agentcli.PermissionPlan}, "plan", false},
		{agentcli.Request{Permission: agentcli.PermissionBypass}, "yolo", true},
		{agentcli.Request{Permission: agentcli.PermissionBypass, AllowedTools: []string{"Bash"}}, "yolo", true},
		{agentcli.Request{Permission: agentcli.PermissionBypass, AllowedTools: []string{"Bash(git *)"}}, "default", false},
	} {
		if got := approvalMode(&c.req); got != c.mode || oneShot(&c.req) != c.oneShot {
			t.Errorf("%+v: mode %s one-shot %v", c.req, got, oneShot(&c.req))
		}
		if c.req.Permission == agentcli.PermissionBypass && !c.oneShot && sessionRequest(&c.req).Permission != agentcli.PermissionDeny {
			t.Errorf("%+v: a bypass session in default mode does not refuse what qwen asks", c.req)
		}
	}
	if !spec.LiveRun(&agentcli.Request{Permission: agentcli.PermissionBypass, Effort: agentcli.EffortHigh}) {
		t.Error("a run with an effort is not live (the effort goes in initialize)")
	}
}

func TestToolArgs(t *testing.T) {
	for _, c := range []struct {
		req  agentcli.Request
		want []string
	}{
		{agentcli.Request{}, nil},
		{agentcli.Request{AllowedTools: []string{"Read", "bash(git *)"}}, []string{
			"--core-tools=read_file", "--core-tools=zoom_image", "--core-tools=run_shell_command",
			"--allowed-tools=read_file", "--allowed-tools=zoom_image", "--allowed-tools=run_shell_command(git *)",
			// An allow list starts only the MCP servers it names: none.
			"--allowed-mcp-server-names=agentcli.none"}},
		{agentcli.Request{AllowedTools: []string{"mcp__srv"}, MCPServers: []agentcli.MCPServer{{Name: "srv", Command: "x"}, {Name: "other", Command: "y"}}},
			[]string{"--core-tools=agentcli.none", "--allowed-tools=mcp__srv", "--allowed-mcp-server-names=srv"}},
		{agentcli.Request{DisallowedTools: []string{"Bash", "mcp__a__b", "web_fetch"}}, []string{
			"--exclude-tools=run_shell_command", "--exclude-tools=mcp__a__b", "--exclude-tools=web_fetch"}},
	} {
		if got := toolArgs(&c.req, false); !slices.Equal(got, c.want) {
			t.Errorf("%v %v: %q, want %q", c.req.AllowedTools, c.req.DisallowedTools, got, c.want)
		}
	}
	if got := toolArgs(&agentcli.Request{}, true); !slices.Equal(got, []string{"--exclude-tools=ask_user_question", "--exclude-tools=exit_plan_mode"}) {
		t.Errorf("one-shot: %q", got)
	}
}

func TestMCPConfig(t *testing.T) {
	var cfg struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	b := mcpConfig([]agentcli.MCPServer{
		{Name: "s", Command: "cmd", Args: []string{"$HOME", "${X}"}, Env: []string{"K=$V"}},
		{Name: "h", URL: "http://127.0.0.1/mcp", Headers: map[string]string{"A": "${B}"}},
	}, false)
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	s, h := cfg.MCPServers["s"], cfg.MCPServers["h"]
	if s["command"] != "cmd" || s["args"].([]any)[1] != "${X}" || s["env"].(map[string]any)["K"] != "$V" {
		t.Errorf("stdio %v", s)
	}
	if h["httpUrl"] != "http://127.0.0.1/mcp" || h["headers"].(map[string]any)["A"] != "${B}" || h["command"] != nil {
		t.Errorf("http %v", h)
	}
}

func TestInteractiveArgs(t *testing.T) {
	args, err := interactiveArgs(&agentcli.Request{Prompt: "-x", SystemPrompt: `"s"`, Model: "m", SessionID: "2f5b1456-2585-48ad-850a-0d7038329f7c"}, "/f")
	want := []string{"--approval-mode=default", `--append-system-prompt=""s""`, "--resume=2f5b1456-2585-48ad-850a-0d7038329f7c",
		"--model=m", "--mcp-config=/f", "--prompt-interactive=-x"}
	if err != nil || !slices.Equal(args, want) {
		t.Errorf("%q, %v; want %q", args, err, want)
	}
	_, err = interactiveArgs(&agentcli.Request{Permission: agentcli.PermissionDeny}, "")
	if !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("deny: %v", err)
	}
}

func TestUsageError(t *testing.T) {
	help := "Usage: qwen [options] [command]\n\nOptions:\n      --auth-type  Authentication type\n\n--json-schema cannot be used here.\n"
	if got := usageError(help); got != "--json-schema cannot be used here." {
		t.Errorf("usageError = %q", got)
	}
	if got := usageError("plain error"); got != "plain error" {
		t.Errorf("usageError = %q", got)
	}
}
