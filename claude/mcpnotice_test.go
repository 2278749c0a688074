package claude

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// mcpFailedLines is a one-shot run of claude 2.1.330 given two MCP
// servers: broken-srv, whose command does not exist, and probe-srv, which
// starts (captured with the conformance kit).
const mcpFailedLines = "testdata/lines/mcp-failed-2.1.330.jsonl"

const brokenNotice = `MCP server "broken-srv" did not start (failed); its tools are not available`

func TestParseMCPFailed(t *testing.T) {
	data, err := os.ReadFile(mcpFailedLines)
	if err != nil {
		t.Fatal(err)
	}
	_, evs := parseAll(nil, data)
	var notices []agentcli.Event
	for _, ev := range evs {
		if ev.Kind == agentcli.EventNotice {
			notices = append(notices, ev)
		}
	}
	if len(evs) < 2 || evs[0].Kind != agentcli.EventInit || evs[1].Kind != agentcli.EventNotice {
		t.Fatalf("kinds = %v; want init, notice, ...", kinds(evs))
	}
	if len(notices) != 1 || notices[0].Text != brokenNotice || notices[0].SessionID != evs[0].SessionID || notices[0].SessionID == "" {
		t.Fatalf("notices = %+v; want one: %s, in the init's session", notices, brokenNotice)
	}
	// Without the failed server, the same run yields the same events,
	// less the notice.
	connected := bytes.Replace(data, []byte(`{"name":"broken-srv","status":"failed","source":"dynamic"},`), nil, 1)
	if bytes.Equal(connected, data) {
		t.Fatal("the captured init line does not list broken-srv as failed")
	}
	_, want := parseAll(nil, connected)
	got := append(evs[:1:1], evs[2:]...)
	if len(got) != len(want) {
		t.Fatalf("kinds = %v; want %v", kinds(got), kinds(want))
	}
	for i := range got {
		if got[i].Kind != want[i].Kind || got[i].Text != want[i].Text || got[i].SessionID != want[i].SessionID {
			t.Errorf("event %d = %+v; want %+v", i, got[i], want[i])
		}
	}
}

func TestParseMCPStatuses(t *testing.T) {
	line := `{"type":"system","subtype":"init","session_id":"s","model":"m","mcp_servers":[` +
		`{"name":"a","status":"connected"},{"name":"b","status":"failed"},{"name":"c","status":"pending"},` +
		`{"name":"d","status":"needs-auth"},{"name":"e","status":"disabled"},{"name":"f","status":"rebooting"},` +
		`{"name":"","status":"failed"},{"name":"b","status":"failed"},"g",{"name":7,"status":"failed"}]}` + "\n"
	_, evs := parseAll(nil, []byte(line))
	var texts []string
	for _, ev := range evs[1:] {
		if ev.Kind != agentcli.EventNotice {
			t.Errorf("event %+v; want notices after the init", ev)
		}
		texts = append(texts, ev.Text)
	}
	want := []string{
		`MCP server "b" did not start (failed); its tools are not available`,
		`MCP server "d" did not start (needs-auth); its tools are not available`,
	}
	if evs[0].Kind != agentcli.EventInit || strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("events %v, notices:\n%s\nwant:\n%s", kinds(evs), strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
	// mcp_servers of an unexpected type: no notice, the init stays.
	for _, v := range []string{`null`, `{}`, `"failed"`, `[[]]`} {
		_, evs := parseAll(nil, []byte(`{"type":"system","subtype":"init","session_id":"s","mcp_servers":`+v+"}\n"))
		if len(evs) != 1 || evs[0].Kind != agentcli.EventInit {
			t.Errorf("mcp_servers %s: kinds = %v; want [init]", v, kinds(evs))
		}
	}
}

// TestParseMCPFailedSession: the turns of a live session share one
// driver.MCPStartNotices (live.go), so a server that failed is reported
// once, though every turn's init line lists it.
func TestParseMCPFailedSession(t *testing.T) {
	data, err := os.ReadFile(mcpFailedLines)
	if err != nil {
		t.Fatal(err)
	}
	var session driver.MCPStartNotices
	n := 0
	for range 3 {
		p := driver.Lines(Name, &parser{mcp: &session})
		for line := range bytes.Lines(data) {
			for _, ev := range p.Line(bytes.Clone(bytes.TrimSuffix(line, []byte("\n")))) {
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
