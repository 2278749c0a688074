package copilot

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

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

// wireServer is one server of session.mcp_servers_loaded.
type wireServer struct {
	Name, Status, Error string
}

// decodeServers reads session.mcp_servers_loaded's servers into dst[:0];
// an entry that is not an object reads as an empty one.
func decodeServers(d *jsonscan.Decoder, dst []wireServer) []wireServer {
	dst = dst[:0]
	for range d.Array() {
		var s wireServer
		for k := range d.Object() {
			switch string(k) {
			case "name":
				s.Name = str(d)
			case "status":
				s.Status = str(d)
			case "error":
				s.Error = str(d)
			}
		}
		dst = append(dst, s)
	}
	return dst
}

// mcpStatus appends the notice of a server whose status is "failed".
func (p *parser) mcpStatus(base agentcli.Event, name, status, detail string) {
	if status == "failed" {
		p.evs = p.mcp.Append(p.evs, base, name, status, detail)
	}
}
