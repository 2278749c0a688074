package streamjson_test

import (
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
	"github.com/agentcli/agentcli/driver/streamjson"
)

func TestDecodeMCPServers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []streamjson.MCPServer
	}{
		// claude 2.1.330's and qwen's init lines (captured).
		{`[{"name":"broken-srv","status":"failed","source":"dynamic"},{"name":"probe-srv","status":"connected","source":"dynamic"}]`,
			[]streamjson.MCPServer{{"broken-srv", "failed"}, {"probe-srv", "connected"}}},
		{`[{"name":"broken-srv","status":"disconnected"},{"name":"probe-srv","status":"connected"}]`,
			[]streamjson.MCPServer{{"broken-srv", "disconnected"}, {"probe-srv", "connected"}}},
		{`[]`, nil},
		{`null`, nil},
		{`{"name":"x","status":"failed"}`, nil},
		{`[1,{"name":2,"status":["failed"]},{"status":"failed","future":{"a":[1]},"name":"a\u0041"}]`,
			[]streamjson.MCPServer{{}, {}, {"aA", "failed"}}},
	} {
		var d jsonscan.Decoder
		d.Reset([]byte(c.in))
		got := streamjson.DecodeMCPServers(&d, nil)
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

func TestMCPNotices(t *testing.T) {
	failed := func(s string) bool { return s == "failed" }
	servers := []streamjson.MCPServer{{"a", "connected"}, {"b", "failed"}, {"c", "pending"}, {"b", "failed"}}
	var n *driver.MCPStartNotices
	base := agentcli.Event{SessionID: "s"}
	evs := streamjson.MCPNotices(nil, &n, servers[:1], failed, base)
	if len(evs) != 0 || n != nil {
		t.Fatalf("no failed server: %+v, notices %v", evs, n)
	}
	for range 2 {
		evs = streamjson.MCPNotices(evs, &n, servers, failed, base)
	}
	if len(evs) != 1 || evs[0].Kind != agentcli.EventNotice || evs[0].SessionID != "s" || evs[0].Text != driver.MCPStartNotice("b", "failed", "") {
		t.Errorf("events %+v; want one notice for b", evs)
	}
}
