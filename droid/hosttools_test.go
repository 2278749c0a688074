package droid

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// expandLikeDroid expands a value as droid 0.225.2 expands an MCP
// server's env and header values (its own code, read in the binary:
// every ${NAME} replaced by the variable's value or "", in one pass).
func expandLikeDroid(v string, env map[string]string) string {
	return regexp.MustCompile(`\$\{([^}]+)\}`).ReplaceAllStringFunc(v, func(m string) string {
		return env[m[2:len(m)-1]]
	})
}

// TestMCPSettingsEscape: every env and header value of the runtime
// settings, expanded as droid expands it with the variable runtimeSettings
// sets, is the caller's value byte for byte; command, args and URL are
// left as they are.
func TestMCPSettingsEscape(t *testing.T) {
	hostile := []string{"plain", "$HOME", "${HOME}", "${NOPE:-x}", "$${HOME}", "${", "}", "${}", `\${HOME}`, "a$", "é😀${HOME}"}
	env := map[string]string{dollarVar: "$", "HOME": "/home/x", "NOPE": "n"}
	for _, v := range hostile {
		servers, escaped := mcpSettings([]agentcli.MCPServer{
			{Name: "s", Command: "/bin/" + v, Args: []string{v}, Env: []string{"K=" + v}},
			{Name: "h", URL: "http://127.0.0.1:1/mcp?" + v, Headers: map[string]string{"X": v}},
		}, true)
		if escaped != strings.Contains(v, "$") {
			t.Errorf("%q: escaped = %v", v, escaped)
		}
		s := servers["s"].(map[string]any)
		if got := expandLikeDroid(s["env"].(map[string]string)["K"], env); got != v {
			t.Errorf("env value %q arrives as %q", v, got)
		}
		if s["command"] != "/bin/"+v || !slices.Equal(s["args"].([]string), []string{v}) || s["type"] != "stdio" {
			t.Errorf("stdio server %v: command and args must be as given (%q)", s, v)
		}
		h := servers["h"].(map[string]any)
		if got := expandLikeDroid(h["headers"].(map[string]string)["X"], env); got != v {
			t.Errorf("header value %q arrives as %q", v, got)
		}
		if h["url"] != "http://127.0.0.1:1/mcp?"+v || h["type"] != "http" {
			t.Errorf("HTTP server %v: the URL must be as given (%q)", h, v)
		}
	}
	if servers, _ := mcpSettings(nil, true); servers != nil {
		t.Errorf("no servers: %v, want nil", servers)
	}
}

// TestMCPSettingsHostTimeout: agentcli's own server (host) gets droid's
// limit for one call, "timeout", driver.HostToolTimeout in ms; the
// caller's servers keep droid's default, and so does a server named
// agentcli in a request without host tools.
func TestMCPSettingsHostTimeout(t *testing.T) {
	for _, host := range []bool{true, false} {
		servers, _ := mcpSettings([]agentcli.MCPServer{{Name: "h", URL: "http://127.0.0.1:1/mcp"},
			{Name: agentcli.HostServerName, URL: "http://127.0.0.1:2/mcp"}}, host)
		if _, ok := servers["h"].(map[string]any)["timeout"]; ok {
			t.Errorf("host %v: the caller's server has a timeout: %v", host, servers["h"])
		}
		got, ok := servers[agentcli.HostServerName].(map[string]any)["timeout"]
		if host && got != int64(2147483647) || !host && ok {
			t.Errorf("host %v: agentcli's entry %v", host, servers[agentcli.HostServerName])
		}
	}
}

// TestMCPArgs: a one-shot run names its MCP servers with --add-tools
// (droid hides their tools otherwise) when it has no --only-tools list;
// with one (the zero mode), agentcli's own server joins it and the
// caller's servers do not (their tools are not reading tools).
func TestMCPArgs(t *testing.T) {
	onQuestion := func(context.Context, *agentcli.Question) (*agentcli.Answer, error) { return nil, nil }
	host := agentcli.MCPServer{Name: agentcli.HostServerName, URL: "http://127.0.0.1:1/mcp"}
	user := agentcli.MCPServer{Name: "docs-1", Command: "docs"}
	for _, c := range []struct {
		name       string
		req        agentcli.Request
		want, omit []string
	}{
		{"bypass", agentcli.Request{Permission: agentcli.PermissionBypass, OnQuestion: onQuestion, MCPServers: []agentcli.MCPServer{user, host}},
			[]string{"--add-tools=MCP:docs-1,MCP:agentcli"}, []string{"--only-tools"}},
		{"deny", agentcli.Request{OnQuestion: onQuestion, MCPServers: []agentcli.MCPServer{user, host}},
			[]string{"--only-tools=" + strings.Join(readOnly, ",") + ",MCP:agentcli"}, []string{"--add-tools"}},
		{"deny, no host", agentcli.Request{MCPServers: []agentcli.MCPServer{user}},
			[]string{"--only-tools=" + strings.Join(readOnly, ",")}, []string{"--add-tools", "MCP:"}},
		{"bypass, no servers", agentcli.Request{Permission: agentcli.PermissionBypass}, nil, []string{"--add-tools", "--only-tools", "--settings"}},
	} {
		args := buildArgs(&c.req, "", "")
		for _, w := range c.want {
			if !slices.Contains(args, w) {
				t.Errorf("%s: args %q lack %q", c.name, args, w)
			}
		}
		for _, o := range c.omit {
			if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, o) }) {
				t.Errorf("%s: args %q have %q", c.name, args, o)
			}
		}
	}
	if args := buildArgs(&agentcli.Request{}, "", "/tmp/x/runtime-settings.json"); !slices.Contains(args, "--settings=/tmp/x/runtime-settings.json") {
		t.Errorf("args %q lack the runtime settings file", args)
	}
	if args := liveArgs(&agentcli.Request{}, "/tmp/x/runtime-settings.json"); !slices.Equal(args, []string{"exec", "--output-format=acp-daemon", "--settings=/tmp/x/runtime-settings.json"}) {
		t.Errorf("live args %q", args)
	}
}

// TestHookAnswer: what the relay endpoint answers droid for each hook
// and outcome.
func TestHookAnswer(t *testing.T) {
	var seen []string
	req := &agentcli.Request{
		Tools: []agentcli.Tool{agentcli.NewTool("now", "now", func(context.Context, struct{}) (string, error) { return "", nil })},
		Hooks: &agentcli.Hooks{
			PreToolUse: func(_ context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
				seen = append(seen, in.Tool.Name+" "+string(in.Tool.Input))
				switch {
				case strings.Contains(string(in.Tool.Input), "rm"):
					return agentcli.PreToolUseOutput{Deny: true, Reason: "no rm"}
				case strings.Contains(string(in.Tool.Input), "old"):
					return agentcli.PreToolUseOutput{Input: json.RawMessage(`{"command":"new"}`)}
				}
				return agentcli.PreToolUseOutput{}
			},
			PostToolUse: func(_ context.Context, in *agentcli.PostToolUseInput) agentcli.PostToolUseOutput {
				return agentcli.PostToolUseOutput{Context: "ctx for " + in.Tool.Name + ": " + in.Result.Output}
			},
		},
	}
	hooks := driver.NewRunHooks(Name, req)
	host := driver.LocalHostTools(Name, req, hooks)
	answer := func(in hookInput) string {
		b, _ := json.Marshal(hookAnswer(context.Background(), hooks, host, &in))
		return string(b)
	}
	for _, c := range []struct {
		in   hookInput
		want string
	}{
		{hookInput{Event: "PreToolUse", ToolName: "Execute", ToolInput: json.RawMessage(`{"command":"ls"}`)}, `{}`},
		{hookInput{Event: "PreToolUse", ToolName: "Execute", ToolInput: json.RawMessage(`{"command":"rm -rf x"}`)},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm"}}`},
		{hookInput{Event: "PreToolUse", ToolName: "Execute", ToolInput: json.RawMessage(`{"command":"old"}`)},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":` + strings.TrimSuffix(mustJSON(driver.RewriteRefused), "\n") + `}}`},
		// agentcli's MCP server calls PreToolUse about host tools itself.
		{hookInput{Event: "PreToolUse", ToolName: "agentcli___now", ToolInput: json.RawMessage(`{"command":"rm"}`)}, `{}`},
		{hookInput{Event: "PostToolUse", ToolName: "Execute", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolResponse: json.RawMessage(`"a.txt"`)},
			`{"hookSpecificOutput":{"additionalContext":"ctx for Bash: a.txt","hookEventName":"PostToolUse"}}`},
		{hookInput{Event: "PostToolUse", ToolName: "agentcli___now", ToolResponse: json.RawMessage(`{"x":1}`)},
			`{"hookSpecificOutput":{"additionalContext":"ctx for now: {\"x\":1}","hookEventName":"PostToolUse"}}`},
	} {
		if got := answer(c.in); got != c.want {
			t.Errorf("%s %s %s:\n got %s\nwant %s", c.in.Event, c.in.ToolName, c.in.ToolInput, got, c.want)
		}
	}
	if want := []string{`Bash {"command":"ls"}`, `Bash {"command":"rm -rf x"}`, `Bash {"command":"old"}`}; !slices.Equal(seen, want) {
		t.Errorf("PreToolUse saw %q, want %q", seen, want)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestExtraSettingsRefused: a run that needs the runtime settings file
// refuses an ExtraArgs --settings, which would replace it.
func TestExtraSettingsRefused(t *testing.T) {
	for _, a := range []string{"--settings", "--settings=/tmp/mine.json"} {
		r := &driver.Run{Req: &agentcli.Request{ExtraArgs: []string{a, "x"},
			MCPServers: []agentcli.MCPServer{{Name: "docs", Command: "docs"}}}}
		f, _, err := runtimeSettings(r)
		var re *agentcli.RequestError
		if !errors.As(err, &re) || re.Field != "ExtraArgs" || f != "" {
			t.Errorf("ExtraArgs %q: %q, %v; want a *RequestError about ExtraArgs", a, f, err)
		}
	}
	if f, _, err := runtimeSettings(&driver.Run{Req: &agentcli.Request{ExtraArgs: []string{"--settings=/tmp/mine.json"}}}); f != "" || err != nil {
		t.Errorf("a run that needs no runtime settings: %q, %v", f, err)
	}
}
