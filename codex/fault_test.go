package codex

import (
	"errors"
	"fmt"
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

// kit scripts `codex exec --json` output for the fault matrix. The line
// shapes follow real 0.169.0 output (see parse_test.go).
var kit = backendtest.Kit{
	Name: Name,
	New:  func(o *agentcli.Options) agentcli.Backend { return New(o) },
	// A run with a system prompt goes through codex app-server
	// (needsAppServer), which the fake does not speak.
	NoSystemPrompt: true,
	Success: func(text, sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"thread.started","thread_id":%q}`, sess),
			`out {"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for ` + "`mock-model`" + ` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}`,
			`out {"type":"turn.started"}`,
			fmt.Sprintf(`out {"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":%q}}`, text),
			`out {"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":0}}`,
		}
	},
	Partial: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"thread.started","thread_id":%q}`, sess),
			`out {"type":"turn.started"}`,
			`out {"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'echo hi'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
		}
	},
	Truncated: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"thread.started","thread_id":%q}`, sess),
			`out {"type":"turn.started"}`,
			`outraw {"type":"turn.completed","usage":{"input_tokens":10,"cached_in`,
		}
	},
}

func TestFaultMatrix(t *testing.T) { backendtest.FaultMatrix(t, kit) }

// Under Options.Strict an option codex cannot honour fails the run before
// the CLI starts, naming backend and option.
func TestStrict(t *testing.T) {
	b, dir := kit.Setup(t, &agentcli.Options{Strict: true}, kit.Success("ok", "s")...)
	_, err := b.Run(t.Context(), &agentcli.Request{Prompt: "x", MaxTurns: 3})
	var ue *agentcli.UnsupportedError
	if !errors.As(err, &ue) || ue.Backend != Name || ue.Feature != "max turns" {
		t.Fatalf("err = %v; want *UnsupportedError for max turns", err)
	}
	if pids := fakecli.ReadPids(dir); len(pids) != 0 {
		t.Fatalf("the CLI was started: %v", pids)
	}
}

// TestExitHints: start-up failures codex reports on stderr come back as
// *ExitError with a hint, classified where the message allows.
func TestExitHints(t *testing.T) {
	for _, c := range []struct {
		stderr, hint string
		kind         error
	}{
		{"No prompt provided via stdin.", "non-empty prompt", nil},
		{"Error: thread/resume: thread/resume failed: no rollout found for thread id 01a20096-0000-7000-8000-000000000000 (code -32600)",
			"no thread with that session id", agentcli.ErrSessionNotFound},
	} {
		// codex follows a fatal error with a stack backtrace; the error
		// keeps the message and drops the frames.
		b, _ := kit.Setup(t, nil, "err "+c.stderr, "err ", "err Stack backtrace:", "err    0: <unknown>", "err    1: <unknown>", "exit 1")
		_, err := b.Run(t.Context(), &agentcli.Request{Prompt: "x", SessionID: "01a20096-0000-7000-8000-000000000000"})
		var ee *agentcli.ExitError
		if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(ee.Hint, c.hint) || ee.Kind != c.kind {
			t.Errorf("err = %#v; want exit 1, hint ~%q, kind %v", err, c.hint, c.kind)
		}
		if ee != nil && (ee.Stderr != c.stderr || strings.Contains(err.Error(), "backtrace")) {
			t.Errorf("stderr %q, error %q: want the message without the backtrace", ee.Stderr, err)
		}
	}
}

// Every real transcript survives a wire-log round trip: replaying the log
// of a live run yields the same events.
func TestReplayTranscripts(t *testing.T) {
	backendtest.ReplayTranscripts(t, kit, func(string) bool { return true })
}

// Without any credential a run fails at once with a *CredentialsError
// naming the variables; each way codex finds one lets the run start.
func TestCredentials(t *testing.T) {
	backendtest.CheckCredentials(t, kit, credentialVars, credentialWays)
}

var credentialWays = []backendtest.CredentialWay{
	{Name: "API key", Env: []string{"OPENAI_API_KEY=k"}},
	{Name: "codex API key", Env: []string{"CODEX_API_KEY=k"}},
	{Name: "base URL", Env: []string{"OPENAI_BASE_URL=http://127.0.0.1:9/v1"}},
	{Name: "login", Files: map[string]string{"~/.codex/auth.json": `{"tokens":{}}`}},
	{Name: "login in CODEX_HOME", Env: []string{"CODEX_HOME=~/ch"}, Files: map[string]string{"~/ch/auth.json": `{}`}},
	{Name: "missing CODEX_HOME (codex says so itself)", Env: []string{"CODEX_HOME=~/missing"}},
	{Name: "custom provider", Files: map[string]string{"~/.codex/config.toml": "model_provider = \"local\"\n"}},
	{Name: "keyring", Files: map[string]string{"~/.codex/config.toml": "cli_auth_credentials_store = \"keyring\"\n"}},
	{Name: "extra args", ExtraArgs: []string{"--oss"}},
}

// No CLI home is created or written into, on codex exec (ExtraArgs keep
// the run there) with a system prompt, an MCP server's Env and a schema:
// CODEX_HOME, which does not exist, stays so.
func TestNoHomeWrites(t *testing.T) {
	backendtest.CheckNoHomeWrites(t, kit, &agentcli.Request{Prompt: "hi", SystemPrompt: "be brief", OutputSchema: []byte(`{"type":"object"}`),
		Effort: agentcli.EffortLow, ExtraArgs: []string{"--ephemeral"}, MCPServers: []agentcli.MCPServer{{Name: "s", Command: "srv", Env: []string{"TOKEN=t"}}}},
		[]string{"CODEX_HOME=~/.codex"})
}
