package codex

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
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

// TestSettingsArgsGolden: the settings of a run with ExtraArgs, which
// stays on codex exec and takes the MCP servers as -c overrides, as `codex
// exec --help` of 0.169.0 names the options (checked by real runs in the
// conformance suite). A run without ExtraArgs goes through app-server
// (needsAppServer).
func TestSettingsArgsGolden(t *testing.T) {
	req := settingsReq()
	req.ExtraArgs = []string{"--ephemeral"}
	backendtest.GoldenArgs(t, "settings", buildArgsFiles(&req, "/work", runFiles{schema: "/tmp/agentcli-run-1/output-schema.json"}))
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

// TestPrepareSettings: a codex exec run with settings (one with
// ExtraArgs; any other goes through app-server) takes the MCP servers as
// -c overrides: a stdio server's Env through a private file in the run's
// own temporary directory that a /bin/sh wrapper reads, whatever the
// values hold (checked by running the wrapper); a server with Headers is
// refused. The schema is a private file there too; everything is gone
// after the run; CODEX_HOME is not touched (not even created).
func TestPrepareSettings(t *testing.T) {
	home := filepath.Join(t.TempDir(), "codex")
	run := func(req *agentcli.Request) (*driver.Job, *driver.Run, error) {
		r := &driver.Run{Req: req, Env: []string{"CODEX_HOME=" + home}, Options: &agentcli.Options{},
			Logger: slog.New(slog.DiscardHandler)}
		job, err := prepare(t.Context(), r)
		return job, r, err
	}
	req := settingsReq()
	req.ExtraArgs = []string{"--ephemeral"}
	req.MCPServers[1].Headers = map[string]string{"Authorization": "Bearer s3cret"}
	_, r, err := run(&req)
	r.Cleanup()
	if re := backendtest.CheckRequestError(t, err, Name); re.Field != "MCPServers[1]" || !strings.Contains(re.Reason, "readable by every local user") {
		t.Fatalf("a server with Headers: %v", re)
	}
	req.MCPServers[1].Headers = nil
	const value = "s3cret 'quoted' \"double\" $(touch /tmp/x) `id` \\ \n line two é"
	req.MCPServers[0].Env = []string{"TOKEN=" + value, "OTHER_1=x"}
	req.SystemPrompt = "be brief"
	job, r, err := run(&req)
	if err != nil || !slices.Contains(job.Args, `mcp_servers.fs.command="/bin/sh"`) || !slices.Contains(job.Args, `developer_instructions="be brief"`) {
		t.Fatalf("%q, %v", job.Args, err)
	}
	var schema, wrapper string
	for _, a := range job.Args {
		if v, ok := strings.CutPrefix(a, "--output-schema="); ok {
			schema = v
		}
		if v, ok := strings.CutPrefix(a, "mcp_servers.fs.args="); ok {
			wrapper = v
		}
		if strings.Contains(a, "s3cret") {
			t.Errorf("a credential on the command line: %q", a)
		}
	}
	for _, f := range []string{schema, filepath.Join(filepath.Dir(schema), "mcp-0.env")} {
		fi, err := os.Stat(f)
		if err != nil || fi.Mode().Perm() != 0o600 || !strings.HasPrefix(filepath.Base(filepath.Dir(f)), "agentcli-run-") {
			t.Fatalf("private file %q: %v %v", f, fi, err)
		}
	}
	if b, _ := os.ReadFile(schema); string(b) != string(req.OutputSchema) {
		t.Errorf("schema file %s", b)
	}
	// The wrapper, as codex would start it: sh -c SCRIPT FILE COMMAND ARGS...
	var args []string
	for i := 1; i < len(wrapper) && wrapper[i] != ']'; {
		switch wrapper[i] {
		case ' ', ',':
			i++
			continue
		case '"':
		default:
			t.Fatalf("args %s: unexpected %q at %d", wrapper, wrapper[i], i)
		}
		j := i + 1
		for j < len(wrapper) && wrapper[j] != '"' {
			if wrapper[j] == '\\' {
				j++
			}
			j++
		}
		d, err := decodeTOMLBasic(wrapper[i : j+1])
		if err != nil {
			t.Fatalf("args %s: %v", wrapper, err)
		}
		args = append(args, d)
		i = j + 1
	}
	if len(args) != 6 || args[3] != "mcp-fs" || args[4] != "--root" || args[5] != "/srv" {
		t.Fatalf("wrapper args %q", args)
	}
	out, err := exec.Command("/bin/sh", append(args[:3:3], "/usr/bin/env")...).Output()
	if err != nil || !strings.Contains(string(out), "TOKEN="+value+"\n") || !strings.Contains(string(out), "OTHER_1=x\n") {
		t.Fatalf("the server's environment (%v):\n%s", err, out)
	}
	r.Cleanup()
	if _, err := os.Stat(filepath.Dir(schema)); !os.IsNotExist(err) {
		t.Errorf("%s left after the run", filepath.Dir(schema))
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("CODEX_HOME was created: %v", err)
	}
}

// A run with ExtraArgs and a system prompt stays on codex exec: the
// system prompt is on its command line, with one warning however many
// runs; CODEX_HOME is not created.
func TestExecSystemPromptWithExtraArgs(t *testing.T) {
	var logs bytes.Buffer
	b, dir := kit.Setup(t, &agentcli.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, kit.Success("ok", "01a20096-ac79-7f83-8b64-1211be7331ad")...)
	home := filepath.Join(t.TempDir(), "missing")
	for range 2 {
		if _, err := b.Run(t.Context(), &agentcli.Request{Prompt: "hi", SystemPrompt: "be brief", ExtraArgs: []string{"--ephemeral"},
			Env: []string{"CODEX_HOME=" + home}}); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := fakecli.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rec.Args, `developer_instructions="be brief"`) || !slices.Contains(rec.Args, "--ephemeral") || rec.Args[0] != "exec" {
		t.Errorf("argv %q", rec.Args)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "every local user can read") {
		t.Errorf("want one warning for two runs: %q", logs.String())
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("CODEX_HOME was created: %v", err)
	}
}

// TestMCPSecretsOffArgv: see backendtest.CheckSecretsOffArgv.
func TestMCPSecretsOffArgv(t *testing.T) {
	backendtest.CheckSecretsOffArgv(t, prepare, nil, nil)
}
