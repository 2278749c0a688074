package droid

// Host tools, questions and hooks travel in a runtime settings file of
// the run's own: `--settings=FILE` ("runtime settings file merged for
// this process only"), which droid exec and its ACP daemon (and the
// session process the daemon starts) both read, checked against droid
// 0.225.2. Its "mcp" key holds agentcli's MCP server, as droid's mcp.json
// does:
//
//	{"mcp": {"mcpServers": {"agentcli": {"type": "http", "url": URL, "headers": {"Authorization": "Bearer SECRET"}}}},
//	 "hooks": {...}}  (hooks.go)
//
// (ACP session/new's mcpServers would not do: droid 0.225.2's daemon
// fails every session that has some.) The model sees a host tool as
// agentcli___NAME (server, three underscores, tool); droid lists MCP
// tools to the model by name only ("deferred": their schemas come with
// its ToolSearch tool), and runs a direct call all the same. Questions
// are agentcli's question tool (droid's own AskUser is not offered in
// exec or ACP mode). A one-shot run skips droid's permission checks and
// keeps the server whatever its tool list (MCP:agentcli joins
// --only-tools); a live session's requests about the server's calls are
// allowed by the session (driver.HostTools decides them). The file is in
// the run's private temporary directory (0600: it holds the server's
// secret). It replaces a runtime settings file the caller named with
// FACTORY_RUNTIME_SETTINGS_PATH; the user's own settings, mcp.json and
// hooks still apply.

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// hostSelector is droid's tool-list selector of agentcli's MCP server.
const hostSelector = "MCP:" + agentcli.HostServerName

// runtimeSettings writes the runtime settings file of the run r (its host
// tools' server, its hooks) and returns its path, or "" when the run
// needs none.
func runtimeSettings(r *driver.Run) (string, error) {
	settings := map[string]any{}
	if h := r.HostTools(); h != nil {
		s := h.Server()
		settings["mcp"] = map[string]any{"mcpServers": map[string]any{s.Name: map[string]any{
			"type": "http", "url": s.URL, "headers": s.Headers,
		}}}
	}
	hooks, err := hookSettings(r)
	if err != nil {
		return "", err
	}
	if hooks != nil {
		settings["hooks"] = hooks
	}
	if len(settings) == 0 {
		return "", nil
	}
	b, err := json.Marshal(settings)
	if err != nil {
		return "", err
	}
	dir, err := r.TempDir()
	if err != nil {
		return "", err
	}
	f := filepath.Join(dir, "runtime-settings.json")
	return f, os.WriteFile(f, b, 0o600)
}

// hasHost reports whether req has agentcli's MCP server (see
// driver.IsHostServer). It is pure.
func hasHost(req *agentcli.Request) bool {
	for _, s := range req.MCPServers {
		if driver.IsHostServer(req, s.Name) {
			return true
		}
	}
	return false
}
