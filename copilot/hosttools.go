package copilot

// Host tools and questions, checked against copilot 1.0.102.
//
// Host tools (Request.Tools) are served by agentcli's MCP server
// (driver.HostTools), which reaches copilot like any of the request's
// MCP servers: an "http" entry of the private --additional-mcp-config
// file in a run and a live session alike. Copilot offers its tools as
// agentcli-TOOL and waits for the server before the first model request.
// The server decides each call itself, so copilot must not ask about
// them: --allow-tool=agentcli (copilot's rule for every tool of one MCP
// server) approves them in advance, in every mode. An allow list keeps
// the server (--available-tools=...,agentcli and no "tools" filter on its
// entry); --allow-tool and --available-tools are repeated flags or split
// at commas, and the server's name holds none.
//
// Questions (Request.OnQuestion): copilot's own question tool, ask_user,
// is not offered headless (not in -p runs, not in ACP sessions: checked
// in the model requests), so copilot has no way of its own to ask the
// host; a run or session with OnQuestion gets agentcli's question tool
// (driver.QuestionTool) among the host tools, and --no-ask-user keeps
// copilot's own out of the way should a later version offer it.

import (
	"slices"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// hostServer reports whether agentcli's MCP server is among req's
// servers (driver.IsHostServer). It is pure.
func hostServer(req *agentcli.Request) bool {
	return slices.ContainsFunc(req.MCPServers, func(s agentcli.MCPServer) bool { return driver.IsHostServer(req, s.Name) })
}

// addHost makes p keep agentcli's MCP server and approve its tools (see
// above).
func (p *toolPolicy) addHost() {
	name := agentcli.HostServerName
	p.host = true
	if p.available != nil && !slices.Contains(p.available, name) {
		p.available = append(p.available, name)
	}
	if p.servers != nil {
		p.servers[name] = nil
	}
	if !slices.Contains(p.allow, name) {
		p.allow = append(p.allow, name)
	}
}

// questionArgs returns --no-ask-user for a request with OnQuestion (see
// above). It is pure.
func questionArgs(req *agentcli.Request) []string {
	if req.OnQuestion != nil {
		return []string{"--no-ask-user"}
	}
	return nil
}
