package streamjson

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// MCPNotices appends to dst, and returns, through *n (made when nil) an
// EventNotice from base for each of servers (an init line's mcp_servers,
// see driver.DecodeMCPServers) whose status failed reports as one that
// did not start (see driver.MCPStartNotices): once per name for as long
// as *n lives.
func MCPNotices(dst []agentcli.Event, n **driver.MCPStartNotices, servers []driver.MCPServerStatus, failed func(status string) bool, base agentcli.Event) []agentcli.Event {
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
