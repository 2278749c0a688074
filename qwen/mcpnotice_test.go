package qwen

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// testdata/mcp-failed.jsonl is a one-shot run of qwen 0.24.4 given two MCP
// servers: broken-srv, whose command does not exist, and probe-srv, which
// starts (captured with the conformance kit; its stderr said "Warning: MCP
// server(s) failed to start: broken-srv").

func TestParseMCPFailed(t *testing.T) {
	evs, res, err := parseFile(t, "mcp-failed.jsonl", 0)
	if err != nil || res.Text != "done" {
		t.Fatalf("res %+v, err %v", res, err)
	}
	var notices []string
	for _, ev := range evs {
		if ev.Kind == agentcli.EventNotice {
			notices = append(notices, ev.Text)
			if ev.SessionID == "" || ev.SessionID != evs[0].SessionID {
				t.Errorf("notice in session %q; want the init's, %q", ev.SessionID, evs[0].SessionID)
			}
		}
	}
	want := `MCP server "broken-srv" did not start (disconnected); its tools are not available`
	if evs[0].Kind != agentcli.EventInit || evs[1].Kind != agentcli.EventNotice || len(notices) != 1 || notices[0] != want {
		t.Errorf("events start %s %s; notices %q; want init, then one notice: %s", evs[0].Kind, evs[1].Kind, notices, want)
	}
	if kinds(evs)[agentcli.EventInit] != 1 {
		t.Errorf("kinds %v", kinds(evs))
	}
}

func TestParseMCPStatuses(t *testing.T) {
	line := `{"type":"system","subtype":"init","session_id":"s","model":"m","mcp_servers":[` +
		`{"name":"a","status":"connected"},{"name":"b","status":"disconnected"},{"name":"c","status":"connecting"},` +
		`{"name":"d","status":"failed"},{"name":"e","status":"someday"},{"name":"b","status":"disconnected"},` +
		`{"status":"disconnected"},null]}`
	p := newParser()
	evs := p.Line([]byte(line))
	var texts []string
	for _, ev := range evs[1:] {
		texts = append(texts, ev.Text)
	}
	want := []string{
		`MCP server "b" did not start (disconnected); its tools are not available`,
		`MCP server "d" did not start (failed); its tools are not available`,
	}
	if len(evs) == 0 || evs[0].Kind != agentcli.EventInit || strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("events %+v; want the init, then notices:\n%s", evs, strings.Join(want, "\n"))
	}
}

// TestParseMCPFailedSession: the turns of a live session share one
// driver.MCPStartNotices (live.go): a server is reported once, though
// every turn's init line lists it.
func TestParseMCPFailedSession(t *testing.T) {
	data, err := os.ReadFile("testdata/mcp-failed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var session driver.MCPStartNotices
	n := 0
	for range 3 {
		p := driver.Lines(Name, &parser{mcp: &session})
		for line := range bytes.Lines(data) {
			for _, ev := range p.Line(bytes.TrimSuffix(line, []byte("\n"))) {
				if ev.Kind == agentcli.EventNotice {
					n++
				}
			}
		}
	}
	if n != 1 {
		t.Errorf("%d notices in three turns; want 1", n)
	}
}
