package codex

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
	"github.com/agentcli/agentcli/internal/runner"
)

// settingsReq holds every setting codex supports.
func settingsReq() agentcli.Request {
	return agentcli.Request{
		Prompt: "hi", Effort: agentcli.EffortHigh, OutputSchema: json.RawMessage(`{"type":"object"}`),
		MCPServers: []agentcli.MCPServer{
			{Name: "fs", Command: "mcp-fs", Args: []string{"--root", "/srv"}},
			{Name: "web", URL: "https://example.com/mcp"},
		},
	}
}

// TestSettingsArgsGolden: with the run's profile (MCP servers in it) and
// without one (ExtraArgs pick theirs: -c overrides), as `codex exec
// --help` of 0.169.0 names the options (checked by real runs in the
// conformance suite).
func TestSettingsArgsGolden(t *testing.T) {
	req := settingsReq()
	files := runFiles{profile: profilePrefix + "0123456789abcdef", schema: "/tmp/agentcli-run-1/output-schema.json"}
	backendtest.GoldenArgs(t, "settings", buildArgsFiles(&req, "/work", files))
	req.ExtraArgs = []string{"--profile=mine"}
	backendtest.GoldenArgs(t, "settings-own-profile", buildArgsFiles(&req, "/work", runFiles{schema: files.schema}))
}

// TestProfileContent: the profile holds developer_instructions and one
// [mcp_servers.NAME] table per server, every value a TOML basic string (an
// inline table for env and http_headers, keys quoted and sorted).
func TestProfileContent(t *testing.T) {
	req := &agentcli.Request{SystemPrompt: "be \"brief\"", MCPServers: []agentcli.MCPServer{
		{Name: "fs", Command: `C:\mcp`, Args: []string{"$HOME", "a\nb"}, Env: []string{"TOKEN=s\"3", "A=1", "A=2"}},
		{Name: "web-2", URL: "https://h/mcp", Headers: map[string]string{"X-Key": "k${x}", "Authorization": "Bearer t"}},
		{Name: "bare", Command: "x"},
	}}
	want := `# Written by agentcli for one run; removed when the run ends.
developer_instructions = "be \"brief\""

[mcp_servers.fs]
command = "C:\\mcp"
args = ["$HOME", "a\nb"]
env = { "A" = "2", "TOKEN" = "s\"3" }

[mcp_servers.web-2]
url = "https://h/mcp"
http_headers = { "Authorization" = "Bearer t", "X-Key" = "k${x}" }

[mcp_servers.bare]
command = "x"
`
	if got := profileContent(req); got != want {
		t.Fatalf("profile:\n%s\nwant:\n%s", got, want)
	}
}

// TestSettingsValuesArriveWhole: the effort and the MCP overrides are -c
// values codex reads as TOML strings equal to the request's; the schema
// file is --output-schema's value.
func TestSettingsValuesArriveWhole(t *testing.T) {
	parse := fakecli.ParseCodexArgs
	rapid.Check(t, func(t *rapid.T) {
		req := backendtest.HostileRequest(t)
		schema := ""
		if len(req.OutputSchema) > 0 {
			schema = "/tmp/agentcli-run-1/output-schema.json"
		}
		args := buildArgsFiles(req, "", runFiles{schema: schema})
		a, err := parse(args)
		if err != nil {
			t.Fatalf("codex would reject %q: %v", args, err)
		}
		var effort []string
		for _, c := range a.Exec["--config"] {
			if v, ok := strings.CutPrefix(c, reasoningEffortKey+"="); ok {
				effort = append(effort, v)
			}
		}
		// override returns the value of the first -c KEY=VALUE.
		override := func(key string) string {
			for _, c := range a.Exec["--config"] {
				if v, ok := strings.CutPrefix(c, key+"="); ok {
					return v
				}
			}
			return ""
		}
		if req.Effort != "" {
			if len(effort) != 1 {
				t.Fatalf("effort overrides %q", effort)
			}
			if got, err := decodeTOMLBasic(effort[0]); err != nil || got != strings.ToValidUTF8(string(req.Effort), "\uFFFD") {
				t.Fatalf("effort %q decodes to %q (%v)", effort[0], got, err)
			}
		} else if effort != nil {
			t.Fatalf("effort without Request.Effort: %q", effort)
		}
		seen := map[string]bool{}
		for _, s := range req.MCPServers {
			if len(req.AllowedTools) > 0 {
				// An allow list that names no server (hostile rules are
				// no MCP rules) leaves every server out of the run.
				if v := override("mcp_servers." + s.Name + ".url"); v != "" {
					t.Fatalf("%s is in the run despite an allow list without it: %q", s.Name, args)
				}
				if v := override("mcp_servers." + s.Name + ".command"); v != "" {
					t.Fatalf("%s is in the run despite an allow list without it: %q", s.Name, args)
				}
				continue
			}
			if seen[s.Name] {
				continue // the runner refuses a name used twice
			}
			seen[s.Name] = true
			key := "mcp_servers." + s.Name + "."
			v, field := override(key+"url"), s.URL
			if s.URL == "" {
				v, field = override(key+"command"), s.Command
			}
			if got, err := decodeTOMLBasic(v); err != nil || got != strings.ToValidUTF8(field, "\uFFFD") {
				t.Fatalf("%s: %q decodes to %q (%v), want %q", s.Name, v, got, err, field)
			}
		}
		if g := a.Exec["--output-schema"]; !slices.Equal(g, slices.DeleteFunc([]string{schema}, func(s string) bool { return s == "" })) {
			t.Fatalf("--output-schema = %q", g)
		}
	})
}

// TestPrepareSettings: the MCP servers travel in the private profile,
// the schema in a private file; when ExtraArgs pick a profile, servers
// without Env and Headers become -c overrides (with a warning) and one
// with them is refused.
func TestPrepareSettings(t *testing.T) {
	home := filepath.Join(t.TempDir(), "codex")
	run := func(req *agentcli.Request, logs *bytes.Buffer) (*runner.Job, *runner.Run, error) {
		r := &runner.Run{Req: req, Env: []string{"CODEX_HOME=" + home}, Options: &agentcli.Options{},
			Logger: slog.New(slog.NewTextHandler(logs, nil))}
		job, err := prepare(t.Context(), r)
		return job, r, err
	}
	req := settingsReq()
	req.MCPServers[0].Env = []string{"TOKEN=s3cret-value"}
	var logs bytes.Buffer
	job, r, err := run(&req, &logs)
	if err != nil {
		t.Fatal(err)
	}
	var profile, schema string
	for _, a := range job.Args {
		if v, ok := strings.CutPrefix(a, "--profile="); ok {
			profile = filepath.Join(home, v+".config.toml")
		}
		if v, ok := strings.CutPrefix(a, "--output-schema="); ok {
			schema = v
		}
		if strings.Contains(a, "s3cret") || strings.Contains(a, "mcp_servers") {
			t.Errorf("MCP server on the command line: %q", a)
		}
	}
	for _, f := range []string{profile, schema} {
		fi, err := os.Stat(f)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%q: %v %v", f, fi, err)
		}
	}
	if b, _ := os.ReadFile(profile); !bytes.Contains(b, []byte(`"TOKEN" = "s3cret-value"`)) {
		t.Errorf("profile:\n%s", b)
	}
	if b, _ := os.ReadFile(schema); string(b) != string(req.OutputSchema) {
		t.Errorf("schema file %s", b)
	}
	r.Cleanup()
	for _, f := range []string{profile, schema} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left after the run", f)
		}
	}

	req.ExtraArgs = []string{"-p", "mine"}
	_, r, err = run(&req, &logs)
	r.Cleanup()
	if re := backendtest.CheckRequestError(t, err, Name); re.Field != "MCPServers[0]" {
		t.Fatalf("field %s", re.Field)
	}
	req.MCPServers[0].Env = nil
	logs.Reset()
	job, r, err = run(&req, &logs)
	r.Cleanup()
	if err != nil || !slices.Contains(job.Args, `mcp_servers.fs.command="mcp-fs"`) || !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("own profile: %q, %v, logs %q", job.Args, err, logs.String())
	}
}

// TestMCPSecretsOffArgv: see backendtest.CheckSecretsOffArgv.
func TestMCPSecretsOffArgv(t *testing.T) {
	backendtest.CheckSecretsOffArgv(t, prepare, nil, nil)
}
