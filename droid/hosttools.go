package droid

// MCP servers, host tools, questions and hooks travel in a runtime
// settings file of the run's own: `--settings=FILE` ("runtime settings
// file merged for this process only"), which droid exec and its ACP
// daemon (and the session process the daemon starts) both read, checked
// against droid 0.225.2. Its "mcp" key holds the request's MCP servers,
// agentcli's own (host tools, questions) among them, as droid's mcp.json
// does:
//
//	{"mcp": {"mcpServers": {"agentcli": {"type": "http", "url": URL, "headers": {"Authorization": "Bearer SECRET"}},
//	                        NAME: {"type": "stdio", "command": C, "args": [...], "env": {...}}}},
//	 "blockOnMcpLoad": true,  (see blockOnMcpLoad)
//	 "hooks": {...}}  (hooks.go)
//
// (ACP session/new's mcpServers would not do: droid 0.225.2's daemon
// fails every session that has some.) The model sees a server's tool as
// SERVER___TOOL (three underscores); droid lists MCP tools to the model
// by name only ("deferred": their schemas come with its ToolSearch tool),
// and runs a direct call all the same. A one-shot run must name the
// servers with --add-tools (buildArgs), or droid hides their tools; a
// live session lists them unasked. Questions are agentcli's question
// tool (droid's own AskUser is not offered in exec or ACP mode). A
// one-shot run skips droid's permission checks and keeps agentcli's
// server whatever its tool list (MCP:agentcli joins --only-tools); a
// live session's requests about the server's calls are allowed by the
// session (driver.HostTools decides them). The file is in the run's
// private temporary directory (0600: it holds credentials). It replaces
// a runtime settings file the caller named with
// FACTORY_RUNTIME_SETTINGS_PATH; the user's own settings, mcp.json and
// hooks still apply.

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// hostSelector is droid's tool-list selector of agentcli's MCP server.
const hostSelector = "MCP:" + agentcli.HostServerName

// runtimeSettings writes the runtime settings file of the run r (its MCP
// servers, agentcli's among them, and its hooks) and returns its path, or
// "" when the run needs none, and the environment entries droid then
// needs (see dollarVar).
func runtimeSettings(r *driver.Run) (string, []string, error) {
	settings := map[string]any{}
	var env []string
	if servers, escaped := mcpSettings(r.Req.MCPServers, r.HostTools() != nil); servers != nil {
		settings["mcp"] = map[string]any{"mcpServers": servers}
		settings[blockOnMcpLoad] = true
		if escaped {
			env = append(env, dollarVar+"=$")
		}
	}
	hooks, err := hookSettings(r)
	if err != nil {
		return "", nil, err
	}
	if hooks != nil {
		settings["hooks"] = hooks
	}
	if len(settings) == 0 {
		return "", nil, nil
	}
	for _, a := range r.Req.ExtraArgs {
		if a == "--settings" || strings.HasPrefix(a, "--settings=") {
			// droid would read the caller's file instead of agentcli's:
			// no MCP server, no hook.
			return "", nil, &agentcli.RequestError{Backend: Name, Field: "ExtraArgs",
				Reason: "--settings replaces the runtime settings file that carries the request's MCP servers, host tools and hooks"}
		}
	}
	b, err := json.Marshal(settings)
	if err != nil {
		return "", nil, err
	}
	dir, err := r.TempDir()
	if err != nil {
		return "", nil, err
	}
	f := filepath.Join(dir, "runtime-settings.json")
	return f, env, os.WriteFile(f, b, 0o600)
}

// blockOnMcpLoad is the key of droid's setting (a general one, at the
// root of a runtime settings file) that makes a session wait for its MCP
// servers before each model turn. Droid 0.225.2 starts MCP servers in
// the background, and without it a live session's first turn (ACP, or
// its JSON-RPC) can call the model before a slow server's tools are
// listed: the model is not offered them (reproduced by conformance
// TestMCPSlowServer with a server that starts 3 s late). With it, droid
// polls the servers' status every 250 ms until none is still connecting
// (a server that failed does not hold it), for at most
// FACTORY_MCP_BLOCKING_LOAD_TIMEOUT_MS (60 s unless the environment says
// otherwise), then goes on without what is not there; the run's context
// and Timeout bound the wait as they bound the turn. droid exec already
// waits when it has a tool list (--add-tools or --only-tools, which a run
// with MCP servers always has: buildArgs); the setting costs it nothing.
const blockOnMcpLoad = "blockOnMcpLoad"

// dollarVar is a variable whose value, "$", the runtime settings refer to
// for every "$" of an MCP server's environment values and header values:
// droid 0.225.2 expands ${NAME} in them, from its own environment, in one
// pass and with no escape (a variable it does not know becomes ""), and
// takes command, arguments and URL as they are. "${AGENTCLI_DROID_DOLLAR}"
// expands to "$" and nothing after it is expanded again, so every value
// arrives as given (checked with hostile values by conformance
// TestMCPServers, TestMCPHTTPServer and TestLiveMCPServers).
const dollarVar = "AGENTCLI_DROID_DOLLAR"

// dollar escapes s for droid's expansion (see dollarVar).
func dollar(s string) string { return strings.ReplaceAll(s, "$", "${"+dollarVar+"}") }

// mcpSettings returns the "mcpServers" of droid's runtime settings for
// servers (nil for none), and whether a value was escaped (see
// dollarVar). host says that the server named agentcli.HostServerName is
// agentcli's own, whose entry gets "timeout" driver.HostToolTimeout. It
// is pure.
func mcpSettings(servers []agentcli.MCPServer, host bool) (map[string]any, bool) {
	if len(servers) == 0 {
		return nil, false
	}
	escaped := false
	esc := func(v string) string {
		e := dollar(v)
		escaped = escaped || e != v
		return e
	}
	out := map[string]any{}
	for _, s := range servers {
		if s.URL != "" {
			h := map[string]string{}
			for k, v := range s.Headers {
				h[k] = esc(v)
			}
			e := map[string]any{"type": "http", "url": s.URL, "headers": h}
			if host && s.Name == agentcli.HostServerName {
				// droid's limit for one call of the server's tools
				// (ms; 3 minutes by default in droid 0.225.2): a host
				// tool's call ends when its handler returns or the
				// run ends.
				e["timeout"] = driver.HostToolTimeout.Milliseconds()
			}
			out[s.Name] = e
			continue
		}
		env := map[string]string{}
		for k, v := range driver.MCPEnv(s) {
			env[k] = esc(v)
		}
		args := s.Args
		if args == nil {
			args = []string{}
		}
		out[s.Name] = map[string]any{"type": "stdio", "command": s.Command, "args": args, "env": env}
	}
	return out, escaped
}

// mcpSelectors returns droid's tool-list selectors of req's MCP servers
// (MCP:NAME, percent-encoded). It is pure.
func mcpSelectors(req *agentcli.Request) []string {
	var out []string
	for _, s := range req.MCPServers {
		out = append(out, "MCP:"+url.PathEscape(s.Name))
	}
	return out
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
