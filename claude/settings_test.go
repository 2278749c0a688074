package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// TestSettingsArgsGolden: every setting, as claude 2.1.330's --help names
// it (checked by the conformance suite's real runs).
func TestSettingsArgsGolden(t *testing.T) {
	req := agentcli.Request{
		Prompt: "hi", Model: "claude-main", FallbackModel: "claude-fallback", Effort: agentcli.EffortXHigh,
		MaxBudgetUSD: 0.25, OutputSchema: json.RawMessage("{\n  \"type\": \"object\"\n}"),
		MCPServers: []agentcli.MCPServer{{Name: "fs", Command: "mcp-fs"}},
	}
	backendtest.GoldenArgs(t, "settings", buildArgsMCP(&req, false, "", "/tmp/agentcli-run-1/mcp.json"))
}

// TestSettingsValuesArriveWhole: as commander parses the argv, each
// setting is one option whose value is exactly the request's (the schema
// as the same JSON value), whatever the strings hold.
func TestSettingsValuesArriveWhole(t *testing.T) {
	parse := fakecli.Flavors["claude"].Parse
	rapid.Check(t, func(t *rapid.T) {
		req := backendtest.HostileRequest(t)
		mcp := ""
		if len(req.MCPServers) > 0 {
			mcp = "/tmp/agentcli-run-1/mcp.json"
		}
		args := buildArgsMCP(req, true, "", mcp)
		p, err := parse(args)
		if err != nil {
			t.Fatalf("claude would reject %q: %v", args, err)
		}
		one := func(s string) []string {
			if s == "" {
				return nil
			}
			return []string{s}
		}
		budget := ""
		if req.MaxBudgetUSD > 0 {
			budget = p.Values["--max-budget-usd"][0]
		}
		for flag, want := range map[string][]string{
			"--fallback-model": one(req.FallbackModel), "--effort": one(string(req.Effort)),
			"--mcp-config": one(mcp), "--max-budget-usd": one(budget),
		} {
			if g := p.Values[flag]; !slices.Equal(g, want) {
				t.Fatalf("%s = %q, want %q (argv %q)", flag, g, want, args)
			}
		}
		if (mcp != "") != (p.Values["--strict-mcp-config"] != nil) {
			t.Fatalf("--strict-mcp-config with MCP config %q: %q", mcp, args)
		}
		if s := p.Values["--json-schema"]; len(req.OutputSchema) > 0 {
			var a, b any
			if len(s) != 1 || json.Unmarshal([]byte(s[0]), &a) != nil || json.Unmarshal(req.OutputSchema, &b) != nil ||
				!jsonSame(a, b) || strings.ContainsAny(s[0], "\n") {
				t.Fatalf("--json-schema = %q, want %s on one line", s, req.OutputSchema)
			}
		} else if s != nil {
			t.Fatalf("--json-schema without a schema: %q", s)
		}
	})
}

func jsonSame(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestMCPConfig: the --mcp-config file declares each server with its type,
// and every "${" of the caller's text is spelled so that claude's
// expansion (once; twice for header values) gives it back; nothing else
// changes.
func TestMCPConfig(t *testing.T) {
	servers := []agentcli.MCPServer{
		{Name: "fs", Command: "/bin/${X}", Args: []string{"$HOME", "${HOME}", "${A:-b}", `\${x}`}, Env: []string{"K=v${T}", "K2=plain"}},
		{Name: "web", URL: "https://h/mcp?a=${B}", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}x"}},
	}
	b, dollar := mcpConfig(servers, false)
	if !dollar {
		t.Fatal("no AGENTCLI_DOLLAR needed")
	}
	var cfg struct {
		MCPServers map[string]struct {
			Type, Command, URL string
			Args               []string
			Env, Headers       map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	// expand is claude's expansion of ${NAME} and ${NAME:-default} with
	// only AGENTCLI_DOLLAR=$ set (unknown names stay as they are).
	expand := func(s string) string {
		var out strings.Builder
		for {
			i := strings.Index(s, "${")
			if i < 0 {
				return out.String() + s
			}
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				return out.String() + s
			}
			name := s[i+2 : i+j]
			out.WriteString(s[:i])
			if name == driver.DollarVar {
				out.WriteString("$")
			} else {
				out.WriteString(s[i : i+j+1])
			}
			s = s[i+j+1:]
		}
	}
	fs, web := cfg.MCPServers["fs"], cfg.MCPServers["web"]
	if fs.Type != "stdio" || web.Type != "http" || len(cfg.MCPServers) != 2 {
		t.Fatalf("config %s", b)
	}
	if expand(fs.Command) != "/bin/${X}" || expand(fs.Env["K"]) != "v${T}" || fs.Env["K2"] != "plain" || expand(web.URL) != servers[1].URL {
		t.Errorf("config %s", b)
	}
	for i, a := range fs.Args {
		if expand(a) != servers[0].Args[i] {
			t.Errorf("arg %q expands to %q, want %q", a, expand(a), servers[0].Args[i])
		}
	}
	if h := web.Headers["Authorization"]; expand(expand(h)) != "Bearer ${TOKEN}x" {
		t.Errorf("header %q expands twice to %q", h, expand(expand(h)))
	}
	if _, dollar := mcpConfig([]agentcli.MCPServer{{Name: "a", Command: "x", Args: []string{"$HOME"}}}, false); dollar {
		t.Error("AGENTCLI_DOLLAR asked for without a ${")
	}
}

// TestPrepareSettings: the MCP servers go to a private file in the run's
// directory, named by --mcp-config; AGENTCLI_DOLLAR is set only when
// needed; a schema too long for one argument is a RequestError.
func TestPrepareSettings(t *testing.T) {
	req := &agentcli.Request{Prompt: "p", MCPServers: []agentcli.MCPServer{{Name: "x", Command: "c", Env: []string{"T=${s}"}}}}
	r := &driver.Run{Req: req, Options: &agentcli.Options{}}
	defer r.Cleanup()
	job, err := prepare(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	var file string
	for _, a := range job.Args {
		if v, ok := strings.CutPrefix(a, "--mcp-config="); ok {
			file = v
		}
	}
	fi, err := os.Stat(file)
	di, derr := os.Stat(filepath.Dir(file))
	if err != nil || derr != nil || fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("config file %q: %v %v %v", file, fi, err, derr)
	}
	if !slices.Contains(job.Env, driver.DollarEnv) {
		t.Errorf("env %q lacks %s", job.Env, driver.DollarEnv)
	}
	r.Cleanup()
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("config file left after the run: %v", err)
	}

	long := &agentcli.Request{Prompt: "p", OutputSchema: json.RawMessage(`{"description":"` + strings.Repeat("x", maxArgLen) + `"}`)}
	_, err = prepare(t.Context(), &driver.Run{Req: long, Options: &agentcli.Options{}})
	if re := backendtest.CheckRequestError(t, err, Name); re.Field != "OutputSchema" {
		t.Fatalf("field %s", re.Field)
	}
}

// TestMCPSecretsOffArgv: see backendtest.CheckSecretsOffArgv.
func TestMCPSecretsOffArgv(t *testing.T) {
	backendtest.CheckSecretsOffArgv(t, prepare, nil, nil)
}

// TestMCPConfigHostTimeout: agentcli's own server (host) gets claude's
// per-server tool-call limit "timeout" driver.HostToolTimeout in ms; a
// server of the caller's, or one named agentcli in a request without host
// tools, keeps claude's default (no "timeout").
func TestMCPConfigHostTimeout(t *testing.T) {
	servers := []agentcli.MCPServer{{Name: "web", URL: "http://127.0.0.1:1/mcp"}, {Name: agentcli.HostServerName, URL: "http://127.0.0.1:2/mcp"}}
	for _, host := range []bool{true, false} {
		b, _ := mcpConfig(servers, host)
		var cfg struct {
			MCPServers map[string]map[string]any `json:"mcpServers"`
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
		if _, ok := cfg.MCPServers["web"]["timeout"]; ok {
			t.Errorf("host=%v: the caller's server has a timeout: %s", host, b)
		}
		got, ok := cfg.MCPServers[agentcli.HostServerName]["timeout"]
		switch {
		case host && got != float64(2147483647):
			t.Errorf("host server's timeout = %v, want 2147483647: %s", got, b)
		case !host && ok:
			t.Errorf("a server named agentcli without host tools has a timeout: %s", b)
		}
	}
}
