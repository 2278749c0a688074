package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

func TestMain(m *testing.M) {
	fakecli.MaybeRun()
	backendtest.UsePinnedCLIs(Name, "Example")
	os.Exit(m.Run())
}

// kit scripts Claude Code's stream-json output for the fault matrix. The
// line shapes follow real 2.1.330 output (testdata/real).
var kit = backendtest.Kit{
	Name:       Name,
	New:        func(o *agentcli.Options) agentcli.Backend { return New(o) },
	TempPrefix: "agentcli-run-",
	Success: func(text, sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","cwd":"/tmp","session_id":%q,"tools":["Bash"],"model":"claude-test","uuid":"u1"}`, sess),
			fmt.Sprintf(`out {"type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":%q}],"stop_reason":null},"parent_tool_use_id":null,"session_id":%q,"uuid":"u2"}`, text, sess),
			fmt.Sprintf(`out {"duration_ms":10,"is_error":false,"num_turns":1,"result":%q,"session_id":%q,"total_cost_usd":0.001,"usage":{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"subtype":"success","type":"result","terminal_reason":"completed","stop_reason":"end_turn"}`, text, sess),
		}
	},
	Partial: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","session_id":%q,"model":"claude-test"}`, sess),
			fmt.Sprintf(`out {"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}},"session_id":%q,"parent_tool_use_id":null}`, sess),
		}
	},
	Truncated: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","session_id":%q,"model":"claude-test"}`, sess),
			`outraw {"type":"result","subtype":"success","is_error":false,"result":"hel`,
		}
	},
}

func TestFaultMatrix(t *testing.T) { backendtest.FaultMatrix(t, kit) }

// The system prompt reaches the CLI through a private file (0600) that
// exists only while the run does.
func TestSystemPromptFile(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	b, dir := kit.Setup(t, nil, kit.Success("ok", "s")...)
	sys := "Answer in French.\n\"quoted\" and -dashes --help"
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "--help", SystemPrompt: sys}); err != nil {
		t.Fatal(err)
	}
	rec, err := fakecli.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Files["--append-system-prompt-file"] != sys || rec.FileModes["--append-system-prompt-file"] != 0o600 {
		t.Fatalf("system prompt file %q mode %o", rec.Files["--append-system-prompt-file"], rec.FileModes["--append-system-prompt-file"])
	}
	if rec.StdinPrompt != "--help" || rec.Prompt != "" || !strings.Contains(rec.Stdin, `"text_not_typed":true`) {
		t.Fatalf("prompt: stdin %q, positional %q", rec.Stdin, rec.Prompt)
	}
	for _, e := range rec.Env {
		if strings.HasPrefix(e, "CLAUDECODE=") {
			t.Fatalf("CLAUDECODE leaked into the CLI's environment")
		}
	}
	backendtest.AssertNoLeaks(t, kit.TempPrefix)
}

// Debug logging: what was started (argv with secrets redacted, of the
// prompt only its length) and the timings at debug level, one record per
// run at info level.
func TestRunLogging(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, _ := kit.Setup(t, &agentcli.Options{Logger: logger}, kit.Success("hello", "s-1")...)
	prompt := "Please review this change carefully and tell me what is wrong with it, in detail."
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: prompt, Model: "sk-ant-api03-abcdefghijklmnop0123"}); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if strings.Contains(out, "abcdefghijklmnop0123") || strings.Contains(out, prompt[:12]) {
		t.Fatalf("a secret or a part of the prompt was logged:\n%s", out)
	}
	var starting, timings, ended map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		switch rec["msg"] {
		case "agentcli: starting CLI":
			starting = rec
		case "agentcli: run timings":
			timings = rec
		case "agentcli: run ended":
			ended = rec
		}
	}
	if starting == nil || starting["level"] != "DEBUG" || starting["prompt_bytes"] != float64(len(prompt)) || len(starting["argv"].([]any)) < 5 {
		t.Errorf("start record %v", starting)
	}
	if timings == nil || timings["first_byte"].(float64) <= 0 || timings["first_event"].(float64) <= 0 {
		t.Errorf("timings record %v", timings)
	}
	if ended == nil || ended["level"] != "INFO" || ended["outcome"] != "ok" || ended["input_tokens"].(float64) != 10 || ended["cost_usd"].(float64) != 0.001 {
		t.Errorf("end record %v", ended)
	}
}

// Without Options.Logger a backend logs nothing, not even through
// slog.Default, on success or on failure.
func TestSilentWithoutLogger(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)
	b, _ := kit.Setup(t, nil, kit.Success("hello", "s-1")...)
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", Dir: "/does/not/exist"}); err == nil {
		t.Fatal("a run in a missing Dir succeeded")
	}
	// The same default logger does receive what a backend given it logs,
	// so the check above can fail.
	b, _ = kit.Setup(t, &agentcli.Options{Logger: slog.Default()}, kit.Success("hello", "s-1")...)
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	if got := logs.String(); !strings.Contains(got, "run ended") || strings.Count(got, "run ended") != 1 {
		t.Fatalf("logs (want exactly the one run with a logger):\n%s", got)
	}
}

// Every real transcript survives a wire-log round trip: replaying the log
// of a live run yields the same events.
func TestReplayTranscripts(t *testing.T) {
	backendtest.ReplayTranscripts(t, kit, func(name string) bool { return strings.HasSuffix(name, "-stream") })
}

// Without any credential a run fails at once with a *CredentialsError
// naming the variables; each way claude finds one lets the run start.
func TestCredentials(t *testing.T) {
	backendtest.CheckCredentials(t, kit, credentialVars, credentialWays)
}

var credentialWays = []backendtest.CredentialWay{
	{Name: "API key", Env: []string{"ANTHROPIC_API_KEY=k"}},
	{Name: "OAuth token", Env: []string{"CLAUDE_CODE_OAUTH_TOKEN=k"}},
	{Name: "Bedrock", Env: []string{"CLAUDE_CODE_USE_BEDROCK=1"}},
	{Name: "gateway", Env: []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:9"}},
	{Name: "login", Files: map[string]string{"~/.claude/.credentials.json": `{"claudeAiOauth":{}}`}},
	{Name: "login in CLAUDE_CONFIG_DIR", Env: []string{"CLAUDE_CONFIG_DIR=~/cfg"}, Files: map[string]string{"~/cfg/.credentials.json": "{}"}},
	{Name: "apiKeyHelper", Files: map[string]string{"~/.claude/settings.json": `{"apiKeyHelper":"get-key"}`}},
	{Name: "project settings env", Files: map[string]string{"./.claude/settings.json": `{"env":{"ANTHROPIC_API_KEY":"k"}}`}},
	{Name: "extra args", ExtraArgs: []string{"--verbose"}},
}

// No CLI home is created or written into: the system prompt, MCP
// config and schema are private files in the run's temporary directory.
func TestNoHomeWrites(t *testing.T) {
	backendtest.CheckNoHomeWrites(t, kit, &agentcli.Request{Prompt: "hi", SystemPrompt: "be brief", OutputSchema: []byte(`{"type":"object"}`),
		Effort: agentcli.EffortLow, MCPServers: []agentcli.MCPServer{{Name: "s", Command: "srv", Env: []string{"TOKEN=t"}}}},
		[]string{"CLAUDE_CONFIG_DIR=~/.claude-missing"})
}
