package agentcli

// MCPServer is one Model Context Protocol server for Request.MCPServers.
// Exactly one of Command and URL is set: Command starts a local server
// that speaks MCP on its stdin and stdout (the stdio transport), URL
// names a remote one (the Streamable HTTP transport; the older
// HTTP+SSE transport is not supported). Env belongs to a stdio server,
// Headers to an HTTP one.
//
// The model sees the server's tools under names the CLI derives from Name
// and the tool's own name: "mcp__NAME__TOOL" with claude and codex,
// "mcp_NAME_TOOL" with gemini, "NAME_TOOL" with opencode.
type MCPServer struct {
	// Name identifies the server: 1 to 64 ASCII letters, digits, "_" and
	// "-", starting with a letter or digit, and unique within the
	// request (ignoring case).
	Name string

	// Command is the program of a stdio server, as a path or a name the
	// CLI looks up on its PATH.
	Command string
	// Args are the program's arguments.
	Args []string
	// Env holds "KEY=value" entries added to the server's environment.
	// KEY is a letter or "_" followed by letters, digits and "_". Which
	// other variables the server inherits is up to the CLI: codex, for
	// one, passes only a few (HOME, PATH, ...).
	Env []string

	// URL is the endpoint of a Streamable HTTP server (http or https).
	URL string
	// Headers are HTTP headers sent with every request to URL, e.g. an
	// Authorization header.
	Headers map[string]string
}

// Effort is a reasoning effort level for Request.Effort: how much the
// model thinks before it answers. Each backend maps the levels it supports
// (Capabilities.Efforts) to its CLI's own setting.
type Effort string

const (
	// EffortMinimal: as little reasoning as the model allows.
	EffortMinimal Effort = "minimal"
	// EffortLow: little reasoning.
	EffortLow Effort = "low"
	// EffortMedium: moderate reasoning.
	EffortMedium Effort = "medium"
	// EffortHigh: thorough reasoning.
	EffortHigh Effort = "high"
	// EffortXHigh: more than high, where the model has such a level.
	EffortXHigh Effort = "xhigh"
	// EffortMax: the most the model can do.
	EffortMax Effort = "max"
)

// Efforts lists every Effort level, from the least to the most reasoning.
func Efforts() []Effort {
	return []Effort{EffortMinimal, EffortLow, EffortMedium, EffortHigh, EffortXHigh, EffortMax}
}
