package copilot

import "github.com/agentcli/agentcli"

// copilot's JSON output (1.0.102) follows each MCP server through
// session.mcp_server_status_changed lines, data {"serverName", "status",
// "error"?}: "pending", then "connected" or "failed" (with the error:
// "failed to spawn MCP server process: No such file or directory ..."),
// and sums them up, before the first model call, in one
// session.mcp_servers_loaded line, data {"servers": [{"name", "status",
// "error"?}]}. A server that failed leaves the run without its tools; it
// gets an EventNotice naming it, with copilot's error
// (driver.MCPStartNotices), once per run. Other statuses ("pending",
// which copilot waits out, and any of the future) are not failures.
//
// copilot's ACP sessions (live.go) report nothing of the kind: a server
// that fails to start there is not reported.

// mcpStatus appends the notice of a server whose status is "failed".
func (p *parser) mcpStatus(base agentcli.Event, name, status, detail string) {
	if status == "failed" {
		p.evs = p.mcp.Append(p.evs, base, name, status, detail)
	}
}
