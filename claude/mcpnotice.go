package claude

// Claude Code lists the MCP servers of a run in its system/init line,
// mcp_servers [{"name", "status", "source"?}], with the status each has
// when the turn begins: "connected", "failed", "needs-auth", "pending"
// or "disabled" (claude 2.1.330). A server that is "failed" (its command
// did not start, it crashed or its URL did not answer) or "needs-auth"
// (it wants an OAuth login no one can give) leaves the run without its
// tools, which claude does not say otherwise: each gets an EventNotice
// after the EventInit (driver.MCPStartNotices), once per run or live
// session. "pending" is not a failure (claude waits for a server still
// starting before its first model request), nor is "disabled" (the
// user's choice), nor any status of the future.

// mcpFailed reports whether a status of mcp_servers means that the
// server's tools are not available.
func mcpFailed(status string) bool { return status == "failed" || status == "needs-auth" }
