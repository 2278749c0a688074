package claude

import (
	"encoding/json"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// mcpConfig returns the --mcp-config file content for servers: Claude
// Code's {"mcpServers": {NAME: {...}}} with "type" "stdio" (command, args,
// env) or "http" (url, headers). It is pure. dollar reports that some
// value needed driver.DollarEnv in the CLI's environment. host says that
// the server named agentcli.HostServerName is agentcli's own (see
// driver.IsHostServer): its entry gets "timeout" driver.HostToolTimeout
// (ms), claude's per-server limit for one tool call, which also raises
// the wait for an HTTP response's first byte (60 s by default in claude
// 2.1.330: a host tool that ran longer was cut off with "The operation
// timed out.") and the idle limit (5 minutes for an HTTP server).
//
// Claude Code 2.1.330 expands ${NAME} and ${NAME:-default} in every string
// of an MCP server's configuration (command, args, env values, url,
// headers), with no escape; verified by a real run (conformance
// TestMCPServers). So each "${" of the caller's text is written as
// "${AGENTCLI_DOLLAR}{" (see driver.DollarVar), which expands back to
// "${". A "$" not followed by "{" is never expanded and is kept.
func mcpConfig(servers []agentcli.MCPServer, host bool) (content []byte, dollar bool) {
	esc := func(s string) string {
		if !strings.Contains(s, "${") {
			return s
		}
		dollar = true
		return strings.ReplaceAll(s, "${", "${"+driver.DollarVar+"}{")
	}
	// Header values are expanded twice.
	esc2 := func(s string) string {
		if !strings.Contains(s, "${") {
			return s
		}
		dollar = true
		return strings.ReplaceAll(s, "${", "${"+driver.DollarVar+"}{"+driver.DollarVar+"}{")
	}
	type server struct {
		Type    string            `json:"type"`
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		URL     string            `json:"url,omitempty"`
		Headers map[string]string `json:"headers,omitempty"`
		Timeout int64             `json:"timeout,omitempty"`
	}
	all := map[string]server{}
	for _, s := range servers {
		sv := server{Type: "stdio", Command: esc(s.Command), URL: esc(s.URL)}
		if s.URL != "" {
			sv.Type = "http"
		}
		for _, a := range s.Args {
			sv.Args = append(sv.Args, esc(a))
		}
		if env := driver.MCPEnv(s); env != nil {
			sv.Env = map[string]string{}
			for k, v := range env {
				sv.Env[k] = esc(v)
			}
		}
		if len(s.Headers) > 0 {
			sv.Headers = map[string]string{}
			for k, v := range s.Headers {
				sv.Headers[k] = esc2(v)
			}
		}
		if host && s.Name == agentcli.HostServerName {
			sv.Timeout = driver.HostToolTimeout.Milliseconds()
		}
		all[s.Name] = sv
	}
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": all}, "", "  ")
	return append(b, '\n'), dollar
}
