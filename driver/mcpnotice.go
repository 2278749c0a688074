package driver

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// MCPStartNotices reports the MCP servers a CLI says did not start, each
// once per run or session: a CLI that goes on without a server the
// request gave it (Request.MCPServers) would otherwise leave the program
// with an agent that mysteriously lacks tools. A backend keeps one per
// one-shot run, or one per live session shared by the parsers of its
// turns (a CLI that reports its servers at every turn is reported on
// once). Which statuses mean "did not start" is the CLI's to say: the
// backend decides, and unknown statuses are not failures. The zero value
// is ready to use; it is not safe for concurrent use.
type MCPStartNotices struct {
	seen map[string]struct{}
}

// maxMCPNoticeServers bounds how many server names one run or session
// remembers: a CLI that reports more is not believed past it.
const maxMCPNoticeServers = 256

// Append appends to evs, and returns, an EventNotice made from base (its
// SessionID and Subagent kept, Raw dropped: the line's own event keeps
// it) whose Text is MCPStartNotice(name, status, detail), unless a notice
// for name was appended before or name is empty.
func (n *MCPStartNotices) Append(evs []agentcli.Event, base agentcli.Event, name, status, detail string) []agentcli.Event {
	if name == "" {
		return evs
	}
	if _, ok := n.seen[name]; ok || len(n.seen) >= maxMCPNoticeServers {
		return evs
	}
	if n.seen == nil {
		n.seen = map[string]struct{}{}
	}
	n.seen[strings.Clone(name)] = struct{}{}
	ev := base
	ev.Kind, ev.Text, ev.Raw = agentcli.EventNotice, MCPStartNotice(name, status, detail), nil
	return append(evs, ev)
}

// MCPStartNotice returns the text of the notice for an MCP server that
// did not start: `MCP server "NAME" did not start (STATUS: DETAIL); its
// tools are not available`, without ": DETAIL" when detail is empty and
// without the parenthesis when both status and detail are. The name is
// quoted as a Go string; each part is cut to a bounded length, since a
// CLI's output is not trusted.
func MCPStartNotice(name, status, detail string) string {
	var b strings.Builder
	b.WriteString("MCP server ")
	b.WriteString(strconv.Quote(cutString(name, 128)))
	b.WriteString(" did not start")
	status, detail = cutString(status, 64), cutString(detail, 256)
	if status != "" || detail != "" {
		b.WriteString(" (")
		b.WriteString(printable(status))
		if status != "" && detail != "" {
			b.WriteString(": ")
		}
		b.WriteString(printable(detail))
		b.WriteString(")")
	}
	b.WriteString("; its tools are not available")
	return b.String()
}

// cutString returns s cut to at most n bytes, at a rune boundary, with
// "…" when it was cut.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// printable returns s with its non-graphic characters (control
// characters, newlines) escaped as in a Go string literal.
func printable(s string) string {
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

// MCPServerStatus is one server of a CLI's report on its MCP servers: its
// name, its status in the CLI's own words ("connected", "failed",
// "pending", ...) and the error the CLI gives, if any.
type MCPServerStatus struct {
	Name, Status, Error string
}

// DecodeMCPServers reads the value at the decoder's position, a CLI's
// list of MCP servers (an array of {"name", "status", "error"?, ...}
// objects, as in claude's and qwen's init line or copilot's
// session.mcp_servers_loaded), into dst[:0] and returns it. A value that
// is not an array reads as none, an entry that is not an object as an
// empty one, and a name, status or error that is not a string as "". The
// strings may share the line's memory.
func DecodeMCPServers(d *jsonscan.Decoder, dst []MCPServerStatus) []MCPServerStatus {
	dst = dst[:0]
	for range d.Array() {
		var s MCPServerStatus
		for k := range d.Object() {
			switch string(k) {
			case "name":
				s.Name, _ = d.UnsafeStr()
			case "status":
				s.Status, _ = d.UnsafeStr()
			case "error":
				s.Error, _ = d.UnsafeStr()
			}
		}
		dst = append(dst, s)
	}
	return dst
}
