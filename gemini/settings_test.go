package gemini

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestSettingsArgsGolden: only the request's MCP servers, comma-separated
// as gemini 0.61.0 splits --allowed-mcp-server-names.
func TestSettingsArgsGolden(t *testing.T) {
	req := agentcli.Request{Prompt: "hi", Effort: agentcli.EffortHigh, MCPServers: []agentcli.MCPServer{
		{Name: "fs", Command: "mcp-fs"}, {Name: "web-2", URL: "https://h/mcp"},
	}}
	backendtest.GoldenArgs(t, "settings", buildArgs(&req, formatJSON))
}

// loadExpand is gemini's expansion of a settings string when it loads the
// file (resolveEnvVarsInString): $NAME, ${NAME} and ${NAME:-default}, one
// pass, with only AGENTCLI_DOLLAR set.
func loadExpand(s string) string {
	re := regexp.MustCompile(`\$(?:(\w+)|\{([^}]+?)(?::-([^}]*))?\})`)
	return re.ReplaceAllStringFunc(s, func(m string) string {
		g := re.FindStringSubmatch(m)
		name := g[1] + g[2]
		switch {
		case name == driver.DollarVar:
			return "$"
		case strings.Contains(m, ":-"):
			return g[3]
		}
		return m
	})
}

// startExpand is gemini's second expansion of MCP env and header values
// (dotenv-expand) for text with no unescaped "$" left: "\$" becomes "$".
func startExpand(t *testing.T, s string) string {
	t.Helper()
	if regexp.MustCompile(`(^|[^\\])\$`).MatchString(s) {
		t.Fatalf("%q has an unescaped $ that dotenv-expand would expand", s)
	}
	return strings.ReplaceAll(s, `\$`, "$")
}

// TestRunSettings: MCP servers as gemini's mcpServers entries, every "$"
// spelled so that gemini's expansions give the caller's text back; effort
// as the thinking settings of the Gemini 3 and 2.5 chat aliases.
func TestRunSettings(t *testing.T) {
	hostile := []string{"$HOME", "${HOME}", "${X:-d}", `\$x`, `a\\$b`, "$", "$$", "{env:X}", "plain"}
	req := &agentcli.Request{Effort: agentcli.EffortMedium, MCPServers: []agentcli.MCPServer{
		{Name: "fs", Command: "/bin/$X", Args: hostile, Env: []string{"V=" + strings.Join(hostile, " ")}},
		{Name: "web", URL: "https://h/mcp?q=${Q}", Headers: map[string]string{"X-T": strings.Join(hostile, "|")}},
	}}
	got, dollar := runSettings(req)
	if !dollar {
		t.Fatal("AGENTCLI_DOLLAR not asked for")
	}
	b, _ := json.Marshal(got)
	var s struct {
		MCPServers map[string]struct {
			Command, URL, Type string
			Args               []string
			Env, Headers       map[string]string
		} `json:"mcpServers"`
		ModelConfigs struct {
			CustomAliases map[string]struct {
				Extends     string `json:"extends"`
				ModelConfig struct {
					GenerateContentConfig struct {
						ThinkingConfig map[string]any `json:"thinkingConfig"`
					} `json:"generateContentConfig"`
				} `json:"modelConfig"`
			} `json:"customAliases"`
		} `json:"modelConfigs"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	fs, web := s.MCPServers["fs"], s.MCPServers["web"]
	if loadExpand(fs.Command) != "/bin/$X" || loadExpand(web.URL) != "https://h/mcp?q=${Q}" || web.Type != "http" {
		t.Errorf("settings %s", b)
	}
	for i, a := range fs.Args {
		if loadExpand(a) != hostile[i] {
			t.Errorf("arg %q loads as %q, want %q", a, loadExpand(a), hostile[i])
		}
	}
	if v := startExpand(t, loadExpand(fs.Env["V"])); v != strings.Join(hostile, " ") {
		t.Errorf("env %q arrives as %q", fs.Env["V"], v)
	}
	if v := startExpand(t, loadExpand(web.Headers["X-T"])); v != strings.Join(hostile, "|") {
		t.Errorf("header %q arrives as %q", web.Headers["X-T"], v)
	}
	a3, a25 := s.ModelConfigs.CustomAliases["chat-base-3"], s.ModelConfigs.CustomAliases["chat-base-2.5"]
	if a3.Extends != "chat-base" || a3.ModelConfig.GenerateContentConfig.ThinkingConfig["thinkingLevel"] != "MEDIUM" ||
		a25.Extends != "chat-base" || a25.ModelConfig.GenerateContentConfig.ThinkingConfig["thinkingBudget"] != 8192.0 {
		t.Errorf("aliases %s", b)
	}
	if got, _ := runSettings(&agentcli.Request{Effort: agentcli.EffortMax}); got != nil {
		t.Errorf("settings for an unsupported effort: %v", got)
	}
	if _, dollar := runSettings(&agentcli.Request{MCPServers: []agentcli.MCPServer{{Name: "a", Command: "x"}}}); dollar {
		t.Error("AGENTCLI_DOLLAR asked for without a $")
	}
}

// TestRunSettingsHostTimeout: agentcli's own server (a request with host
// tools) is trusted and gets gemini's per-server limit for one call,
// "timeout", driver.HostToolTimeout in ms; the caller's server keeps
// gemini's default, and so does a server named agentcli without host
// tools.
func TestRunSettingsHostTimeout(t *testing.T) {
	servers := []agentcli.MCPServer{{Name: "web", URL: "http://127.0.0.1:1/mcp"}, {Name: agentcli.HostServerName, URL: "http://127.0.0.1:2/mcp"}}
	for _, host := range []bool{true, false} {
		req := &agentcli.Request{MCPServers: servers}
		if host {
			req.Tools = []agentcli.Tool{{Name: "now"}}
		}
		got, _ := runSettings(req)
		b, _ := json.Marshal(got)
		var s struct {
			MCPServers map[string]map[string]any `json:"mcpServers"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.MCPServers["web"]["timeout"]; ok {
			t.Errorf("host %v: the caller's server has a timeout: %s", host, b)
		}
		if got := s.MCPServers[agentcli.HostServerName]["timeout"] == float64(2147483647); got != host {
			t.Errorf("host %v: agentcli's entry %v, want timeout 2147483647 exactly with host tools", host, s.MCPServers[agentcli.HostServerName])
		}
	}
}

// TestOverlayHome: the overlay links every entry of the user's .gemini
// (and the session directories and project registry, created or not yet),
// and its settings.json is the user's (comments dropped) with the run's
// merged in; the user's files are untouched.
func TestOverlayHome(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(home, ".gemini")
	os.MkdirAll(filepath.Join(real, "extensions"), 0o700)
	user := `{
  // my settings
  "mcpServers": {"mine": {"command": "my-mcp"}, "fs": {"command": "old"}},
  /* "x": 1, */ "url": "http://a//b", "s": "/* not a comment */ \" // still a string",
  "modelConfigs": {"customAliases": {"chat-base-3": {"extends": "chat-base", "note": "kept"}}},
  "big": 12345678901234567890
}`
	os.WriteFile(filepath.Join(real, "settings.json"), []byte(user), 0o600)
	os.WriteFile(filepath.Join(real, "oauth_creds.json"), []byte("{}"), 0o600)
	extra, _ := runSettings(&agentcli.Request{Effort: agentcli.EffortLow,
		MCPServers: []agentcli.MCPServer{{Name: "fs", Command: "new"}}})
	dir := filepath.Join(t.TempDir(), "gemini-home")
	got, err := overlayHome(home, dir, extra)
	if err != nil || got != dir {
		t.Fatalf("overlayHome = %q, %v", got, err)
	}
	over := filepath.Join(dir, ".gemini")
	for _, n := range []string{"extensions", "oauth_creds.json", "tmp", "history", "projects.json"} {
		if l, err := os.Readlink(filepath.Join(over, n)); err != nil || l != filepath.Join(real, n) {
			t.Errorf("%s: link to %q, %v", n, l, err)
		}
	}
	for _, d := range []string{"tmp", "history"} {
		if fi, err := os.Stat(filepath.Join(real, d)); err != nil || !fi.IsDir() {
			t.Errorf("%s not created in the real home: %v", d, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(real, "settings.json")); string(b) != user {
		t.Errorf("the user's settings changed:\n%s", b)
	}
	b, err := os.ReadFile(filepath.Join(over, "settings.json"))
	fi, _ := os.Lstat(filepath.Join(over, "settings.json"))
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSymlink != 0 {
		t.Fatalf("overlay settings: %v %v", fi, err)
	}
	var m struct {
		MCPServers   map[string]map[string]any `json:"mcpServers"`
		URL, S       string
		Big          json.Number
		ModelConfigs struct {
			CustomAliases map[string]map[string]any `json:"customAliases"`
		} `json:"modelConfigs"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	if m.MCPServers["mine"]["command"] != "my-mcp" || m.MCPServers["fs"]["command"] != "new" || m.URL != "http://a//b" ||
		m.S != `/* not a comment */ " // still a string` || m.Big != "12345678901234567890" {
		t.Errorf("merged settings:\n%s", b)
	}
	if a := m.ModelConfigs.CustomAliases["chat-base-3"]; a["note"] != "kept" || a["modelConfig"] == nil {
		t.Errorf("alias chat-base-3 %v", a)
	}
	// No user settings at all, and none readable.
	home2 := t.TempDir()
	if _, err := overlayHome(home2, filepath.Join(t.TempDir(), "o"), extra); err != nil {
		t.Errorf("no .gemini yet: %v", err)
	}
	os.WriteFile(filepath.Join(home2, ".gemini", "settings.json"), []byte("{not json"), 0o600)
	if _, err := overlayHome(home2, filepath.Join(t.TempDir(), "o"), extra); err == nil {
		t.Error("broken user settings accepted")
	}
}

// TestPrepareSettings: a run with settings gets the overlay as
// GEMINI_CLI_HOME (and AGENTCLI_DOLLAR when a value has a "$"); a run
// without gets neither.
func TestPrepareSettings(t *testing.T) {
	home := t.TempDir()
	run := func(req *agentcli.Request) []string {
		r := &driver.Run{Req: req, Dir: home, Env: []string{"HOME=/elsewhere", "GEMINI_CLI_HOME=" + home}, Options: &agentcli.Options{}}
		t.Cleanup(r.Cleanup)
		job, err := prepare(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		return job.Env
	}
	env := run(&agentcli.Request{Prompt: "p", MCPServers: []agentcli.MCPServer{{Name: "a", Command: "x", Args: []string{"$1"}}}})
	if len(env) != 2 || !strings.HasPrefix(env[0], "GEMINI_CLI_HOME=") || !strings.HasSuffix(env[0], "gemini-home") || env[1] != driver.DollarEnv {
		t.Fatalf("env %q", env)
	}
	if _, err := os.Stat(filepath.Join(strings.TrimPrefix(env[0], "GEMINI_CLI_HOME="), ".gemini", "settings.json")); err != nil {
		t.Fatal(err)
	}
	if env := run(&agentcli.Request{Prompt: "p", Effort: agentcli.EffortHigh}); len(env) != 1 {
		t.Fatalf("effort only: env %q", env)
	}
	// Removing the overlay removes the links, not what they point to.
	os.WriteFile(filepath.Join(home, ".gemini", "oauth_creds.json"), []byte("{}"), 0o600)
	r := &driver.Run{Req: &agentcli.Request{Prompt: "p", Effort: agentcli.EffortLow}, Dir: home,
		Env: []string{"GEMINI_CLI_HOME=" + home}, Options: &agentcli.Options{}}
	if _, err := prepare(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	r.Cleanup()
	for _, n := range []string{"oauth_creds.json", "tmp", "history"} {
		if _, err := os.Stat(filepath.Join(home, ".gemini", n)); err != nil {
			t.Errorf("the user's %s is gone after the run: %v", n, err)
		}
	}
	if env := run(&agentcli.Request{Prompt: "p"}); len(env) != 0 {
		t.Fatalf("no settings: env %q", env)
	}
	if !slices.Contains(buildArgs(&agentcli.Request{MCPServers: []agentcli.MCPServer{{Name: "a"}, {Name: "b"}}}, formatJSON),
		"--allowed-mcp-server-names=a,b") {
		t.Fatal("allowed names")
	}
}

// TestMCPSecretsOffArgv: see backendtest.CheckSecretsOffArgv; for a live
// session too, whose servers travel in the protocol.
func TestMCPSecretsOffArgv(t *testing.T) {
	backendtest.CheckSecretsOffArgv(t, prepare, nil, nil)
	backendtest.CheckSecretsOffArgv(t, func(_ context.Context, r *driver.Run) (*driver.Job, error) {
		env, err := liveEnv(r)
		return &driver.Job{Args: liveArgs(r.Req), Env: env}, err
	}, nil, nil)
}

// TestLiveEnv: a live session's effort goes through the overlay a one-shot
// run uses (its settings.json holds the thinking settings, no MCP
// servers: they travel in the protocol); without effort there is none.
func TestLiveEnv(t *testing.T) {
	home := t.TempDir()
	r := &driver.Run{Req: &agentcli.Request{Effort: agentcli.EffortMedium, MCPServers: []agentcli.MCPServer{{Name: "a", Command: "x"}}},
		Dir: home, Env: []string{"GEMINI_CLI_HOME=" + home}, Options: &agentcli.Options{}}
	t.Cleanup(r.Cleanup)
	env, err := liveEnv(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 1 || !strings.HasPrefix(env[0], "GEMINI_CLI_HOME=") {
		t.Fatalf("env %q", env)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimPrefix(env[0], "GEMINI_CLI_HOME="), ".gemini", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"thinkingLevel": "MEDIUM"`) || strings.Contains(string(b), "mcpServers") {
		t.Errorf("settings.json:\n%s", b)
	}
	r2 := &driver.Run{Req: &agentcli.Request{MCPServers: r.Req.MCPServers}, Dir: home, Env: r.Env, Options: &agentcli.Options{}}
	if env, err := liveEnv(r2); err != nil || env != nil {
		t.Errorf("without effort: %q, %v", env, err)
	}
}

// TestLiveEnvHostServer: a live session's host-tool server is a setting,
// trusted and with driver.HostToolTimeout as its call time limit (in the
// protocol it would keep gemini's 10 minutes); the request's other
// servers are not (they travel in the protocol).
func TestLiveEnvHostServer(t *testing.T) {
	home := t.TempDir()
	tool := agentcli.NewTool("now", "The time.", func(context.Context, struct{}) (string, error) { return "", nil })
	r := &driver.Run{Req: &agentcli.Request{Tools: []agentcli.Tool{tool}, MCPServers: []agentcli.MCPServer{
		{Name: "a", Command: "x"},
		{Name: agentcli.HostServerName, URL: "http://127.0.0.1:9/mcp", Headers: map[string]string{"Authorization": "Bearer s$cret"}},
	}}, Dir: home, Env: []string{"GEMINI_CLI_HOME=" + home}, Options: &agentcli.Options{}}
	t.Cleanup(r.Cleanup)
	env, err := liveEnv(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 2 || !strings.HasPrefix(env[0], "GEMINI_CLI_HOME=") || env[1] != driver.DollarEnv {
		t.Fatalf("env %q", env)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimPrefix(env[0], "GEMINI_CLI_HOME="), ".gemini", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			Trust   bool              `json:"trust"`
			Timeout int64             `json:"timeout"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	h, ok := got.MCPServers[agentcli.HostServerName]
	if len(got.MCPServers) != 1 || !ok || !h.Trust || h.Timeout != driver.HostToolTimeout.Milliseconds() ||
		h.URL != "http://127.0.0.1:9/mcp" || h.Headers["Authorization"] != `Bearer s\${`+driver.DollarVar+`}cret` {
		t.Errorf("settings.json:\n%s", b)
	}
}
