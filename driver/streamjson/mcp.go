package streamjson

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// MCPServer is one entry of a system/init line's mcp_servers: an MCP
// server the CLI was configured with and the status of its connection
// when the line was printed ("connected", "failed", "pending", ...: each
// CLI's own words).
type MCPServer struct {
	Name, Status string
}

// DecodeMCPServers reads the value at the decoder's position, an init
// line's mcp_servers (an array of {"name", "status", ...} objects), into
// dst[:0] and returns it. A value that is not an array reads as none, an
// entry that is not an object as an empty one, and a name or status that
// is not a string as "". The strings may share the line's memory.
func DecodeMCPServers(d *jsonscan.Decoder, dst []MCPServer) []MCPServer {
	dst = dst[:0]
	for range d.Array() {
		var s MCPServer
		for k := range d.Object() {
			switch string(k) {
			case "name":
				s.Name = str(d)
			case "status":
				s.Status = str(d)
			}
		}
		dst = append(dst, s)
	}
	return dst
}

// MCPNotices appends to dst, and returns, through *n (made when nil) an
// EventNotice from base for each of servers whose status failed reports
// as one that did not start (see driver.MCPStartNotices): once per name
// for as long as *n lives.
func MCPNotices(dst []agentcli.Event, n **driver.MCPStartNotices, servers []MCPServer, failed func(status string) bool, base agentcli.Event) []agentcli.Event {
	for _, s := range servers {
		if !failed(s.Status) {
			continue
		}
		if *n == nil {
			*n = &driver.MCPStartNotices{}
		}
		dst = (*n).Append(dst, base, s.Name, s.Status, "")
	}
	return dst
}
