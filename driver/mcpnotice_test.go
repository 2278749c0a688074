package driver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
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

func TestDecodeMCPServers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []driver.MCPServerStatus
	}{
		// claude 2.1.330's and qwen's init lines (captured).
		{`[{"name":"broken-srv","status":"failed","source":"dynamic"},{"name":"probe-srv","status":"connected","source":"dynamic"}]`,
			[]driver.MCPServerStatus{{"broken-srv", "failed", ""}, {"probe-srv", "connected", ""}}},
		{`[{"name":"broken-srv","status":"disconnected"},{"name":"probe-srv","status":"connected"}]`,
			[]driver.MCPServerStatus{{"broken-srv", "disconnected", ""}, {"probe-srv", "connected", ""}}},
		// copilot 1.0.102's session.mcp_servers_loaded (captured).
		{`[{"name":"broken-srv","status":"failed","error":"failed to spawn MCP server process: No such file or directory (os error 2)"},{"name":"probe-srv","status":"connected","serverMetadata":{"instructions":null}}]`,
			[]driver.MCPServerStatus{{"broken-srv", "failed", "failed to spawn MCP server process: No such file or directory (os error 2)"}, {"probe-srv", "connected", ""}}},
		{`[]`, nil},
		{`null`, nil},
		{`{"name":"x","status":"failed"}`, nil},
		{`[1,{"name":2,"status":["failed"]},{"status":"failed","future":{"a":[1]},"name":"a\u0041"}]`,
			[]driver.MCPServerStatus{{}, {}, {"aA", "failed", ""}}},
		{`[{"name":"x","status":"failed","error":{"message":"m"}}]`, []driver.MCPServerStatus{{"x", "failed", ""}}},
	} {
		var d jsonscan.Decoder
		d.Reset([]byte(c.in))
		got := driver.DecodeMCPServers(&d, nil)
		if err := d.Finish(); err != nil {
			t.Errorf("%s: %v", c.in, err)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v; want %v", c.in, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v; want %v", c.in, got, c.want)
				break
			}
		}
	}
}
