package qwen

// qwen lists the MCP servers of a run in its system/init line,
// mcp_servers [{"name", "status"}], printed once it has waited for every
// server to connect or fail (0.24.4): "connected", or "disconnected" for
// a server that did not start (its command missing, a crash, a URL that
// does not answer; also one the user's settings exclude), which leaves
// the run without its tools. qwen says so only on stderr ("Warning: MCP
// server(s) failed to start: NAMES"). Each such server, and one whose
// status is "failed", gets an EventNotice after the EventInit
// (driver.MCPStartNotices), once per run or live session; "connecting"
// (which qwen waits out) and any status of the future are not failures.

// mcpFailed reports whether a status of mcp_servers means that the
// server's tools are not available.
func mcpFailed(status string) bool { return status == "disconnected" || status == "failed" }
