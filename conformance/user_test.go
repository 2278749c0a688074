package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	_ "github.com/agentcli/agentcli/claude" // registers "claude"
	_ "github.com/agentcli/agentcli/codex"
	_ "github.com/agentcli/agentcli/copilot"
	_ "github.com/agentcli/agentcli/gemini"
	_ "github.com/agentcli/agentcli/opencode"
)

// TestUserStyle is how a user tests their own code against a real CLI and a
// scripted model: no credentials, no network, a handful of lines.
func TestUserStyle(t *testing.T) {
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "Hi there!"})
	defer srv.Close()
	w, err := srv.Wire("claude", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := agentcli.Open("claude", &agentcli.Options{Path: cliPath(t, "claude")})
	if err != nil {
		t.Fatal(err)
	}
	req := &agentcli.Request{Prompt: "Say hi."}
	w.Apply(req) // the one line that makes the run hermetic
	res, err := b.Run(context.Background(), req)
	if err != nil || res.Text != "Hi there!" || srv.Requests()[0].LastUserText() != "Say hi." {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}

// TestApplyIsHermetic: a developer's own credentials and endpoints never
// reach a CLI run through Wiring.Apply. Each of them, were it inherited,
// would point the CLI away from the scripted server (and leak the key).
func TestApplyIsHermetic(t *testing.T) {
	for _, cli := range []string{"claude", "codex", "gemini", "opencode", "qwen", "copilot"} {
		t.Run(cli, func(t *testing.T) {
			for k, v := range map[string]string{
				"OPENAI_MODEL": "developer-own-model", "QWEN_HOME": "/nonexistent",
				"ANTHROPIC_API_KEY": "sk-ant-developer-own-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
				"OPENAI_API_KEY": "sk-developer-own-key", "OPENAI_BASE_URL": "http://127.0.0.1:9",
				"GEMINI_API_KEY": "developer-own-key", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9",
				"OPENCODE_CONFIG_CONTENT": `{"model":"nowhere/none"}`, "CODEX_HOME": "/nonexistent",
				"AGENTCLI_DEVELOPER_MARKER": "must-not-leak",
			} {
				t.Setenv(k, v)
			}
			srv := agentclitest.NewServer(agentclitest.Turn{Shell: "env"}, agentclitest.Turn{Text: "done"})
			defer srv.Close()
			w, err := srv.Wire(cli, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			b := openBackend(t, cli, nil)
			req := &agentcli.Request{Prompt: "Print the environment.", Timeout: runTimeout, Permission: agentcli.PermissionBypass}
			w.Apply(req)
			res, err := b.Run(context.Background(), req)
			if err != nil || res.Text != "done" {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			for _, r := range srv.Requests() {
				for _, tr := range r.ToolResults {
					if strings.Contains(tr.Output, "must-not-leak") || strings.Contains(tr.Output, "developer-own-key") {
						t.Fatalf("the developer's environment reached the CLI's shell: %s", shorten(tr.Output))
					}
				}
			}
		})
	}
}
