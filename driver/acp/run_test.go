package acp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// Replay reads the recorded configuration back before adjust sees it,
// with the servers the log names; a recorded configuration that cannot
// be read is the sequence's one *agentcli.ParseError, and adjust is not
// called.
func TestReplayReadsRecorded(t *testing.T) {
	r := &driver.Run{Req: &agentcli.Request{}, Options: &agentcli.Options{}}
	var got acp.Config
	var names []string
	adjust := func(c *acp.Config, servers []agentcli.MCPServer) {
		got = *c
		for _, s := range servers {
			names = append(names, s.Name)
		}
	}
	rec := json.RawMessage(`{"session_id":"s1","mode":"plan","mcp":["a","b"]}`)
	for range acp.Replay(r, "b", rec, wirelog.NewReader(strings.NewReader("")), acp.Config{Dir: "/d"}, adjust) {
	}
	if got.SessionID != "s1" || got.Mode != "plan" || got.Dir != "/d" || strings.Join(names, ",") != "a,b" {
		t.Errorf("adjust saw %+v with servers %q", got, names)
	}

	called := false
	var errs []error
	for _, err := range acp.Replay(r, "b", json.RawMessage(`{"mcp":`), wirelog.NewReader(strings.NewReader("")), acp.Config{},
		func(*acp.Config, []agentcli.MCPServer) { called = true }) {
		errs = append(errs, err)
	}
	var pe *agentcli.ParseError
	if len(errs) != 1 || !errors.As(errs[0], &pe) || pe.Backend != "b" || called {
		t.Errorf("unreadable record: %v (adjust called: %v)", errs, called)
	}
}
