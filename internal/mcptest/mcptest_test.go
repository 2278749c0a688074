package mcptest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestStdio(t *testing.T) {
	t.Setenv(EnvPrefix+"A", "a$b")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"agentcli_probe"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"agentcli_echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"nope"}`,
	}, "\n")
	var out, log bytes.Buffer
	serveStdio(strings.NewReader(in), &out, &log, []string{"x", "$HOME"})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d responses:\n%s", len(lines), out.String())
	}
	var init struct {
		ID     int `json:"id"`
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(lines[0]), &init) != nil || init.ID != 1 || init.Result.ProtocolVersion != "2025-03-26" {
		t.Errorf("initialize: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"name":"agentcli_probe"`) || !strings.Contains(lines[1], `"name":"agentcli_echo"`) {
		t.Errorf("tools/list: %s", lines[1])
	}
	var call struct {
		ID     string `json:"id"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &call); err != nil || call.ID != "x" || len(call.Result.Content) != 1 {
		t.Fatalf("probe: %s", lines[2])
	}
	var p Probe
	if err := json.Unmarshal([]byte(call.Result.Content[0].Text), &p); err != nil ||
		strings.Join(p.Args, " ") != "x $HOME" || p.Env[EnvPrefix+"A"] != "a$b" {
		t.Errorf("probe answered %s", call.Result.Content[0].Text)
	}
	if !strings.Contains(lines[3], `"text":"hi"`) || !strings.Contains(lines[4], `"error"`) {
		t.Errorf("echo %s; unknown method %s", lines[3], lines[4])
	}
	f := t.TempDir() + "/log"
	if err := os.WriteFile(f, log.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	calls, err := ReadLog(f)
	if err != nil || len(calls) != 6 {
		t.Fatalf("log: %v %v", calls, err)
	}
	if got := strings.Join(ToolCalls(calls), ","); got != "agentcli_probe,agentcli_echo" {
		t.Errorf("tool calls %s", got)
	}
}

func TestHTTP(t *testing.T) {
	h := NewHTTP()
	defer h.Close()
	post := func(body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, h.URL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(HeaderPrefix+"Token", "s3cret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("notification: %d", resp.StatusCode)
	}
	resp = post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentcli_probe"}}`)
	defer resp.Body.Close()
	var call struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&call); err != nil || len(call.Result.Content) != 1 {
		t.Fatalf("call: %v", err)
	}
	var p Probe
	if err := json.Unmarshal([]byte(call.Result.Content[0].Text), &p); err != nil || p.Headers[HeaderPrefix+"Token"] != "s3cret" {
		t.Errorf("probe answered %s", call.Result.Content[0].Text)
	}
	if got := h.Calls(); len(got) != 2 || got[1].Method != "tools/call" || got[1].Headers[HeaderPrefix+"Token"] != "s3cret" {
		t.Errorf("calls %+v", got)
	}
	g, err := http.Get(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	g.Body.Close()
	if g.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", g.StatusCode)
	}
}
