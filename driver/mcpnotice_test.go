package driver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

func ExampleMCPStartNotices() {
	// A CLI's init line listed two servers, one of which failed; a later
	// turn of the same session reports the same failure again.
	var n driver.MCPStartNotices
	base := agentcli.Event{SessionID: "s1"}
	var evs []agentcli.Event
	for range 2 {
		for _, s := range []struct{ name, status string }{{"docs", "connected"}, {"broken-srv", "failed"}} {
			if s.status == "failed" {
				evs = n.Append(evs, base, s.name, s.status, "")
			}
		}
	}
	for _, ev := range evs {
		fmt.Println(ev.Kind, ev.SessionID, ev.Text)
	}
	// Output:
	// notice s1 MCP server "broken-srv" did not start (failed); its tools are not available
}

func TestMCPStartNotice(t *testing.T) {
	for _, c := range []struct{ name, status, detail, want string }{
		{"a", "", "", `MCP server "a" did not start; its tools are not available`},
		{"a", "failed", "", `MCP server "a" did not start (failed); its tools are not available`},
		{"a", "", "no such file", `MCP server "a" did not start (no such file); its tools are not available`},
		{"a", "failed", "spawn: ENOENT", `MCP server "a" did not start (failed: spawn: ENOENT); its tools are not available`},
		{"a\nb\"", "fai\x1bled", "line1\nline2", `MCP server "a\nb\"" did not start (fai\x1bled: line1\nline2); its tools are not available`},
	} {
		if got := driver.MCPStartNotice(c.name, c.status, c.detail); got != c.want {
			t.Errorf("MCPStartNotice(%q, %q, %q) = %s; want %s", c.name, c.status, c.detail, got, c.want)
		}
	}
	long := driver.MCPStartNotice(strings.Repeat("é", 1000), strings.Repeat("s", 1000), strings.Repeat("d", 100000))
	if len(long) > 1024 || !strings.Contains(long, "é…") || strings.ContainsRune(long, '\uFFFD') {
		t.Errorf("long parts: %d bytes: %q", len(long), long)
	}
}

func TestMCPStartNoticesOncePerName(t *testing.T) {
	var n driver.MCPStartNotices
	base := agentcli.Event{Kind: agentcli.EventInit, SessionID: "s", Subagent: "t", Raw: []byte(`{"x":1}`)}
	evs := n.Append(nil, base, "", "failed", "")
	evs = n.Append(evs, base, "x", "failed", "")
	evs = n.Append(evs, base, "y", "needs-auth", "")
	evs = n.Append(evs, base, "x", "failed", "again")
	if len(evs) != 2 {
		t.Fatalf("%d events; want 2: %+v", len(evs), evs)
	}
	for _, ev := range evs {
		if ev.Kind != agentcli.EventNotice || ev.SessionID != "s" || ev.Subagent != "t" || ev.Raw != nil {
			t.Errorf("event %+v: want a notice with base's session and subagent and no Raw", ev)
		}
	}
	if !strings.Contains(evs[1].Text, `"y"`) || !strings.Contains(evs[1].Text, "needs-auth") {
		t.Errorf("Text = %q", evs[1].Text)
	}
	// A CLI that names servers without end is not believed without end.
	for i := range 10000 {
		evs = n.Append(evs[:0], base, fmt.Sprint("s", i), "failed", "")
	}
	if len(evs) != 0 {
		t.Errorf("the 10000th server still got a notice")
	}
}
