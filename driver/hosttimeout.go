package driver

import "time"

// HostToolTimeout is the time limit a backend gives the CLI for one call
// of a host tool, on agentcli's own MCP server (see HostTools), where the
// CLI has a setting for it: 2^31-1 ms (just under 25 days), the longest
// delay a JavaScript timer accepts (a longer one fires at once). A CLI's
// own default (60 s to 10 minutes) would cut off a host tool that runs a
// build or a test suite; with this limit a call ends when its handler
// returns or when the run ends (its ctx, Request.Timeout, an interrupt),
// which already bound the handler. A backend writes it in the unit its
// CLI takes (milliseconds, or whole seconds), for agentcli's server only.
const HostToolTimeout = (1<<31 - 1) * time.Millisecond
