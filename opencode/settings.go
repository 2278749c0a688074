package opencode

import (
	"bytes"
	"encoding/json"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// configContent returns the opencode config of one run: "instructions"
// listing systemFile (when not ""), and "mcp" with one entry per server:
// {"type": "local", "command": [COMMAND, ARGS...], "environment": ENV} or
// {"type": "remote", "url": URL, "headers": HEADERS}. host says that the
// server named agentcli.HostServerName is agentcli's own: its entry gets
// "timeout" driver.HostToolTimeout (ms), opencode's limit for one call of
// its tools (otherwise the MCP SDK's 60 s; agentcli's server also sends
// progress, which resets that timer, for a live session's server, which
// ACP's session/new gives no timeout). It is pure.
//
// opencode 1.18.33 substitutes {env:NAME} and {file:PATH} in the raw text
// of a config file before it parses it, anywhere, strings included, with
// no escape. The substitution sees the text, not the decoded strings, so
// every "{" that starts "{env:" or "{file:" is written as the JSON escape
// \u007b, which the parser then decodes to "{" (verified by a real run:
// conformance TestMCPServers). json.Marshal never puts such a "{" outside
// a string.
func configContent(systemFile string, servers []agentcli.MCPServer, host bool) []byte {
	cfg := map[string]any{}
	if systemFile != "" {
		cfg["instructions"] = []string{systemFile}
	}
	if len(servers) > 0 {
		mcp := map[string]any{}
		for _, s := range servers {
			if s.URL != "" {
				e := map[string]any{"type": "remote", "url": s.URL}
				if len(s.Headers) > 0 {
					e["headers"] = s.Headers
				}
				if host && s.Name == agentcli.HostServerName {
					e["timeout"] = driver.HostToolTimeout.Milliseconds()
				}
				mcp[s.Name] = e
				continue
			}
			e := map[string]any{"type": "local", "command": append([]string{s.Command}, s.Args...)}
			if env := driver.MCPEnv(s); len(env) > 0 {
				e["environment"] = env
			}
			mcp[s.Name] = e
		}
		cfg["mcp"] = mcp
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	b = bytes.ReplaceAll(b, []byte("{env:"), []byte(`\u007benv:`))
	b = bytes.ReplaceAll(b, []byte("{file:"), []byte(`\u007bfile:`))
	return append(b, '\n')
}
