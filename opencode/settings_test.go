package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestSettingsArgsGolden: the effort is the model variant of that name
// (`opencode run --help` of 1.18.33: --variant).
func TestSettingsArgsGolden(t *testing.T) {
	req := agentcli.Request{Prompt: "hi", Effort: agentcli.EffortHigh}
	backendtest.GoldenArgs(t, "settings", buildArgs(&req, "/work"))
}

// TestConfigContent: the MCP servers as opencode's "mcp" entries (local:
// command and arguments in one list, environment; remote: url, headers),
// with no {env: or {file: left in the raw text for opencode to substitute,
// and every value decoding to the caller's.
func TestConfigContent(t *testing.T) {
	hostile := []string{"{env:HOME}", "{file:/etc/passwd}", "{env:", "$HOME", "${HOME}", `\u007b`, "{}", "a b"}
	servers := []agentcli.MCPServer{
		{Name: "fs", Command: "{env:CMD}", Args: hostile, Env: []string{"K=" + strings.Join(hostile, " ")}},
		{Name: "web", URL: "https://h/{file:x}", Headers: map[string]string{"Authorization": "Bearer {env:TOKEN}"}},
	}
	b := configContent("/tmp/sys.md", servers, false)
	if bytes.Contains(b, []byte("{env:")) || bytes.Contains(b, []byte("{file:")) {
		t.Fatalf("substitutable text left:\n%s", b)
	}
	var cfg struct {
		Instructions []string
		MCP          map[string]struct {
			Type, URL            string
			Command              []string
			Environment, Headers map[string]string
		}
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	fs, web := cfg.MCP["fs"], cfg.MCP["web"]
	if len(cfg.Instructions) != 1 || cfg.Instructions[0] != "/tmp/sys.md" || fs.Type != "local" || web.Type != "remote" {
		t.Fatalf("config %s", b)
	}
	if strings.Join(fs.Command, "\x00") != strings.Join(append([]string{"{env:CMD}"}, hostile...), "\x00") ||
		fs.Environment["K"] != strings.Join(hostile, " ") || web.URL != servers[1].URL ||
		web.Headers["Authorization"] != servers[1].Headers["Authorization"] {
		t.Errorf("config %s", b)
	}
	if b := configContent("", nil, false); string(b) != "{}\n" {
		t.Errorf("empty config %q", b)
	}
}

// TestConfigContentHostTimeout: agentcli's own server (host) gets
// opencode's limit for one call, "timeout", driver.HostToolTimeout in ms;
// the caller's server keeps opencode's default, and so does a server
// named agentcli in a request without host tools.
func TestConfigContentHostTimeout(t *testing.T) {
	servers := []agentcli.MCPServer{{Name: "web", URL: "http://127.0.0.1:1/mcp"}, {Name: agentcli.HostServerName, URL: "http://127.0.0.1:2/mcp"}}
	for _, host := range []bool{true, false} {
		var cfg struct {
			MCP map[string]map[string]any
		}
		b := configContent("", servers, host)
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
		if _, ok := cfg.MCP["web"]["timeout"]; ok {
			t.Errorf("host %v: the caller's server has a timeout: %s", host, b)
		}
		if got := cfg.MCP[agentcli.HostServerName]["timeout"] == float64(2147483647); got != host {
			t.Errorf("host %v: agentcli's entry %v, want timeout 2147483647 exactly with host tools", host, cfg.MCP[agentcli.HostServerName])
		}
	}
}

// TestPrepareSettings: the MCP servers go in the private config named by
// OPENCODE_CONFIG; with OPENCODE_CONFIG already set they cannot, and the
// run fails with an UnsupportedError saying why.
func TestPrepareSettings(t *testing.T) {
	req := &agentcli.Request{Prompt: "p", MCPServers: []agentcli.MCPServer{{Name: "fs", Command: "x", Env: []string{"T=s3cret"}}},
		Permission: agentcli.PermissionBypass}
	r := &driver.Run{Req: req, Dir: t.TempDir(), Options: &agentcli.Options{}, State: spec.NewState()}
	defer r.Cleanup()
	job, err := prepare(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if len(job.Env) != 1 || !strings.HasPrefix(job.Env[0], "OPENCODE_CONFIG=") {
		t.Fatalf("env %q", job.Env)
	}
	path := strings.TrimPrefix(job.Env[0], "OPENCODE_CONFIG=")
	fi, err := os.Stat(path)
	b, _ := os.ReadFile(path)
	if err != nil || fi.Mode().Perm() != 0o600 || !bytes.Contains(b, []byte("s3cret")) {
		t.Fatalf("config %s: %v %v", b, fi, err)
	}
	r2 := &driver.Run{Req: req, Dir: t.TempDir(), Env: []string{"OPENCODE_CONFIG=/mine.json"}, Options: &agentcli.Options{}, State: spec.NewState()}
	defer r2.Cleanup()
	_, err = prepare(t.Context(), r2)
	var ue *agentcli.UnsupportedError
	if !errors.As(err, &ue) || !strings.Contains(ue.Reason, "OPENCODE_CONFIG") {
		t.Fatalf("err = %v", err)
	}
}

// TestMCPSecretsOffArgv: see backendtest.CheckSecretsOffArgv. The model is
// left out: a plain name would be looked up with `opencode models`.
func TestMCPSecretsOffArgv(t *testing.T) {
	backendtest.CheckSecretsOffArgv(t, prepare, spec.NewState, func(r *agentcli.Request) { r.Model = "" })
}
