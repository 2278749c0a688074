package conformance

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// TestDoctor: Doctor finds every pinned CLI, reads its version (the one
// pinned in tools/clis/package.json, which is what each backend says it was
// tested with), names the credential variables that are set and never their
// values, fails a backend without any credential, and makes no model call
// (the base URLs point nowhere).
func TestDoctor(t *testing.T) {
	cliPath(t, "claude") // installed, or skip/fail as every real-CLI test
	bin, err := filepath.Abs(filepath.Join("..", "tools", "clis", "node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", t.TempDir())
	// The CLIs' own temporary files (copilot's compile cache) go to the
	// test's directory, not the machine's /tmp.
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-doctor-secret-value")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9")
	for _, k := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_GENAI_USE_VERTEXAI",
		"GOOGLE_GENAI_USE_GCA", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GEMINI_CLI_HOME", "CLOUD_SHELL",
		"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_API_KEY",
		"COPILOT_PROVIDER_BEARER_TOKEN", "COPILOT_PROVIDER_API_KEY_COMMAND", "COPILOT_HOME", "GH_CONFIG_DIR", "XDG_CONFIG_HOME"} {
		t.Setenv(k, "") // none of the developer's
	}
	var pins struct {
		Dependencies         map[string]string `json:"dependencies"`
		OptionalDependencies map[string]string `json:"optionalDependencies"`
	}
	b, err := os.ReadFile(filepath.Join("..", "tools", "clis", "package.json"))
	if err != nil || json.Unmarshal(b, &pins) != nil {
		t.Fatalf("package.json: %v", err)
	}
	maps.Copy(pins.Dependencies, pins.OptionalDependencies) // platform builds (droid)
	pkg := map[string]string{"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli", "opencode": "opencode-ai",
		"qwen": "@qwen-code/qwen-code", "copilot": "@github/copilot"}
	ds := agentcli.Doctor(context.Background(), nil)
	for _, name := range []string{"claude", "codex", "gemini", "opencode", "qwen", "copilot"} {
		i := slices.IndexFunc(ds, func(d agentcli.Diagnosis) bool { return d.Backend == name })
		if i < 0 {
			t.Errorf("%s: not diagnosed (registered: %v)", name, agentcli.Backends())
			continue
		}
		d := ds[i]
		if d.Tested != pins.Dependencies[pkg[name]] || d.Version != d.Tested || !d.InRange {
			t.Errorf("%s: %+v (pinned %s)", name, d, pins.Dependencies[pkg[name]])
		}
		// gemini and copilot have no credential here (a key for claude
		// and opencode, a base URL for codex): a run would fail, and
		// the diagnosis says so.
		if cred := map[string]string{"gemini": "GEMINI_API_KEY", "copilot": "COPILOT_GITHUB_TOKEN"}[name]; cred != "" {
			if d.Status != agentcli.DiagnosisFailure || !strings.Contains(d.Hint, "no credentials") || !strings.Contains(d.Hint, cred) {
				t.Errorf("%s without credentials: %+v", name, d)
			}
		} else if d.Status == agentcli.DiagnosisFailure {
			t.Errorf("%s: %+v", name, d)
		}
		if !strings.HasPrefix(d.Path, bin) {
			t.Errorf("%s: path %s, want the pinned binary in %s", name, d.Path, bin)
		}
	}
	out, _ := json.Marshal(ds)
	if strings.Contains(string(out), "doctor-secret-value") {
		t.Fatalf("a credential value leaked into the diagnosis: %s", out)
	}
	if c := ds[slices.IndexFunc(ds, func(d agentcli.Diagnosis) bool { return d.Backend == "claude" })]; !slices.Contains(c.Credentials, "ANTHROPIC_API_KEY") {
		t.Errorf("claude credentials %v lack ANTHROPIC_API_KEY", c.Credentials)
	}
}
