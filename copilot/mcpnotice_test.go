package copilot

import (
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// testdata/mcp-failed.jsonl is the output of copilot 1.0.102, one-shot
// (`copilot --output-format=json --no-auto-update --allow-all
// --additional-mcp-config=@FILE`), given two MCP servers: broken-srv,
// whose command does not exist, and probe-srv, which starts (captured
// with the conformance kit; exit 0, nothing on stderr).

func TestParseMCPFailed(t *testing.T) {
	data, err := os.ReadFile("testdata/mcp-failed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	p := newParser("m", false)
	var evs []agentcli.Event
	for _, line := range strings.SplitAfter(string(data), "\n") {
		evs = append(evs, p.Line([]byte(strings.TrimSuffix(line, "\n")))...)
	}
	var notices []string
	for _, ev := range evs {
		if ev.Kind == agentcli.EventNotice {
			notices = append(notices, ev.Text)
		}
	}
	want := `MCP server "broken-srv" did not start (failed: failed to spawn MCP server process: No such file or directory (os error 2): No such file or directory (os error 2)); its tools are not available`
	if len(notices) != 1 || notices[0] != want {
		t.Errorf("notices %q; want one: %s", notices, want)
	}
	if k := kinds(evs); k[agentcli.EventUnknown] != 0 || k[agentcli.EventText] != 1 {
		t.Errorf("kinds %v", k)
	}
	// The notice comes with the first line that says so, before the
	// model's answer.
	for _, ev := range evs {
		if ev.Kind == agentcli.EventNotice {
			break
		}
		if ev.Kind == agentcli.EventText || ev.Kind == agentcli.EventTextDelta {
			t.Fatalf("%s before the notice", ev.Kind)
		}
	}
}

func TestParseMCPStatuses(t *testing.T) {
	p := newParser("m", false)
	var texts []string
	for _, line := range []string{
		`{"type":"session.mcp_server_status_changed","data":{"serverName":"a","status":"pending"}}`,
		`{"type":"session.mcp_server_status_changed","data":{"serverName":"b","status":"connected"}}`,
		`{"type":"session.mcp_server_status_changed","data":{"serverName":"a","status":"failed","error":"spawn: ENOENT"}}`,
		`{"type":"session.mcp_server_status_changed","data":{"serverName":"c","status":"rebooting"}}`,
		`{"type":"session.mcp_servers_loaded","data":{"servers":[{"name":"a","status":"failed","error":"again"},{"name":"b","status":"connected"},{"name":"d","status":"failed"},7]}}`,
	} {
		for _, ev := range p.Line([]byte(line)) {
			if ev.Kind != agentcli.EventNotice && ev.Kind != agentcli.EventInit {
				t.Errorf("%s: event %s", line, ev.Kind)
			}
			if ev.Kind == agentcli.EventNotice {
				texts = append(texts, ev.Text)
			}
		}
	}
	want := []string{
		`MCP server "a" did not start (failed: spawn: ENOENT); its tools are not available`,
		`MCP server "d" did not start (failed); its tools are not available`,
	}
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("notices:\n%s\nwant:\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
}
