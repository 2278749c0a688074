package codex

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

func TestLiveArgsAndModes(t *testing.T) {
	got := liveArgs(&agentcli.Request{ExtraArgs: []string{"-c", "x=1"}, Prompt: "--help", Model: "m"})
	if !slices.Equal(got, []string{"app-server", "-c", "x=1"}) {
		t.Errorf("liveArgs = %q", got)
	}
	// The policies verified against codex 0.169.0 (see live.go).
	cases := map[agentcli.PermissionMode][2]string{
		"":                        {"untrusted", "danger-full-access"}, // deny
		agentcli.PermissionBypass: {"never", "danger-full-access"},
		agentcli.PermissionAsk:    {"untrusted", "danger-full-access"},
		agentcli.PermissionDeny:   {"untrusted", "danger-full-access"},
		agentcli.PermissionPlan:   {"never", "read-only"},
	}
	for m, want := range cases {
		if p, s := approval(&agentcli.Request{Permission: m}); p != want[0] || s != want[1] {
			t.Errorf("approval(%q) = %s, %s; want %s, %s", m, p, s, want[0], want[1])
		}
	}
	// Under bypass, tool lists make codex ask, and the session answers
	// from them.
	if p, s := approval(&agentcli.Request{Permission: agentcli.PermissionBypass, AllowedTools: []string{"Read"}}); p != "untrusted" || s != "danger-full-access" {
		t.Errorf("approval(bypass, allow list) = %s, %s; want untrusted, danger-full-access", p, s)
	}
}

// The v2 items the session maps to tool events, in the shapes of codex
// 0.169.0's app-server schema.
func TestToolItem(t *testing.T) {
	item := func(s string) appItem {
		var it appItem
		if err := json.Unmarshal([]byte(s), &it); err != nil {
			t.Fatal(err)
		}
		return it
	}
	use, res := toolItem(item(`{"type":"commandExecution","id":"c1","command":"/bin/bash -lc 'ls'","status":"completed","aggregatedOutput":"a\n","exitCode":0}`))
	if use.Name != "Bash" || use.Kind != agentcli.ToolExecute || string(use.Input) != `{"command":"/bin/bash -lc 'ls'"}` ||
		res.Output != "a\n" || res.IsError || *res.ExitCode != 0 {
		t.Errorf("commandExecution: %+v %+v", use, res)
	}
	_, res = toolItem(item(`{"type":"commandExecution","id":"c2","command":"x","status":"declined"}`))
	if !res.IsError {
		t.Error("a declined command is not an error result")
	}
	use, res = toolItem(item(`{"type":"fileChange","id":"f1","status":"completed","changes":[{"path":"a.go","kind":{"type":"add"},"diff":""}]}`))
	if use.Name != "Write" || !strings.Contains(string(use.Input), `"file_path":"a.go"`) || res.Output != "add a.go" {
		t.Errorf("fileChange: %+v %+v", use, res)
	}
	use, res = toolItem(item(`{"type":"mcpToolCall","id":"m1","server":"s","tool":"t","arguments":{"q":1},"status":"completed","result":{"content":[{"type":"text","text":"ok"}]}}`))
	if use.RawName != "mcp__s__t" || string(use.Input) != `{"q":1}` || res.Output != "ok" {
		t.Errorf("mcpToolCall: %+v %+v", use, res)
	}
	if use, _ := toolItem(item(`{"type":"imageGeneration","id":"i1"}`)); use != nil {
		t.Errorf("an unknown item became a tool use: %+v", use)
	}
}

// One-shot Runs with PermissionAsk and PermissionDeny go through a live
// session: the command never runs, the turn goes on, and the callback is
// asked only under ask.
func TestLiveOneShotReal(t *testing.T) {
	for _, m := range []agentcli.PermissionMode{agentcli.PermissionAsk, agentcli.PermissionDeny} {
		t.Run(string(m), func(t *testing.T) {
			bin, elsewhere := realCodex(t)
			if elsewhere {
				return
			}
			srv := agentclitest.NewServer(agentclitest.Turn{Shell: "touch NOPE"}, agentclitest.Turn{Text: "fine"})
			defer srv.Close()
			b, dir := realBackend(t, bin, srv)
			res, asked := backendtest.RunRefusing(t, b, &agentcli.Request{}, dir, m)
			want := 0
			if m == agentcli.PermissionAsk {
				want = 1
			}
			if res.Text != "fine" || asked != want {
				t.Errorf("Result.Text = %q after %d permission requests; want %q after %d", res.Text, asked, "fine", want)
			}
		})
	}
}

// Plan mode: codex's read-only sandbox lets the command run but not write.
func TestLivePlanReal(t *testing.T) {
	bin, elsewhere := realCodex(t)
	if elsewhere {
		return
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Shell: "touch NOPE"}, agentclitest.Turn{Text: "planned"})
	defer srv.Close()
	b, dir := realBackend(t, bin, srv)
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "Touch NOPE.", Dir: dir, Permission: agentcli.PermissionPlan})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "planned" {
		t.Errorf("Result.Text = %q", res.Text)
	}
	if _, err := os.Stat(filepath.Join(dir, "NOPE")); err == nil {
		t.Error("NOPE exists: plan mode wrote a file")
	}
	reqs := srv.Requests()
	if tr := reqs[len(reqs)-1].ToolResults; len(tr) != 1 || !strings.Contains(tr[0].Output, "Read-only file system") {
		t.Errorf("tool results %+v, want the read-only failure", tr)
	}
}

// The settings of a live session travel in the protocol (checked against
// codex 0.169.0 by the conformance suite): MCP servers as thread/start's
// config overrides, effort and output schema with every turn/start.
func TestLiveSettingsParams(t *testing.T) {
	req := &agentcli.Request{
		MCPServers: []agentcli.MCPServer{
			{Name: "local-srv", Command: "/bin/srv", Args: []string{"$HOME", "--flag"}, Env: []string{"K=${V}", "K=last"}},
			{Name: "bare", Command: "srv"},
			{Name: "web", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer t"}},
		},
		Effort:       agentcli.EffortHigh,
		OutputSchema: json.RawMessage(`{"type":"object"}`),
	}
	got, _ := json.Marshal(liveConfig(req))
	want := `{"mcp_servers.bare":{"command":"srv","required":true,"startup_timeout_sec":60},` +
		`"mcp_servers.local-srv":{"args":["$HOME","--flag"],"command":"/bin/srv","env":{"K":"last"},"required":true,"startup_timeout_sec":60},` +
		`"mcp_servers.web":{"http_headers":{"Authorization":"Bearer t"},"required":true,"startup_timeout_sec":60,"url":"http://127.0.0.1:1/mcp"}}`
	if string(got) != want {
		t.Errorf("liveConfig:\n%s\nwant\n%s", got, want)
	}
	if liveConfig(&agentcli.Request{}) != nil {
		t.Error("liveConfig without servers is not nil")
	}
	// agentcli's own server: its tools approved, and codex's limit for
	// one call raised to driver.HostToolTimeout (whole seconds); the
	// caller's server keeps codex's default.
	hreq := &agentcli.Request{Tools: []agentcli.Tool{{Name: "now"}}, MCPServers: []agentcli.MCPServer{
		{Name: "web", URL: "http://127.0.0.1:1/mcp"}, {Name: agentcli.HostServerName, URL: "http://127.0.0.1:2/mcp"}}}
	got, _ = json.Marshal(liveConfigHost(hreq, driver.LocalHostTools(Name, hreq, nil)))
	want = `{"mcp_servers.agentcli":{"required":true,"startup_timeout_sec":60,"tool_timeout_sec":2147483,"tools":{"now":{"approval_mode":"approve"}},"url":"http://127.0.0.1:2/mcp"},` +
		`"mcp_servers.web":{"required":true,"startup_timeout_sec":60,"url":"http://127.0.0.1:1/mcp"}}`
	if string(got) != want {
		t.Errorf("liveConfigHost:\n%s\nwant\n%s", got, want)
	}
	got, _ = json.Marshal(turnParams(req, "thr", "hi\xff"))
	want = `{"effort":"high","input":[{"text":"hi` + "\uFFFD" + `","type":"text"}],"outputSchema":{"type":"object"},"threadId":"thr"}`
	if string(got) != want {
		t.Errorf("turnParams:\n%s\nwant\n%s", got, want)
	}
	got, _ = json.Marshal(turnParams(&agentcli.Request{}, "thr", "hi"))
	if want := `{"input":[{"text":"hi","type":"text"}],"threadId":"thr"}`; string(got) != want {
		t.Errorf("turnParams without settings: %s", got)
	}
}
