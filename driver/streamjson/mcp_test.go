package streamjson_test

import (
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/streamjson"
)

func TestMCPNotices(t *testing.T) {
	failed := func(s string) bool { return s == "failed" }
	servers := []driver.MCPServerStatus{{Name: "a", Status: "connected"}, {Name: "b", Status: "failed"}, {Name: "c", Status: "pending"}, {Name: "b", Status: "failed", Error: "e"}}
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
