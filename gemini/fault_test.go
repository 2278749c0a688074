package gemini

import (
	"context"
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

// kit scripts gemini's stream-json output for the fault matrix. The line
// shapes follow real 0.61.0 output (testdata/real).
var kit = backendtest.Kit{
	Name: Name,
	New:  func(o *agentcli.Options) agentcli.Backend { return New(o) },
	Success: func(text, sess string) []string {
		half := len(text) / 2
		return []string{
			fmt.Sprintf(`out {"type":"init","timestamp":"2026-11-22T00:11:11.286Z","session_id":%q,"model":"auto"}`, sess),
			`out {"type":"message","timestamp":"2026-11-22T00:11:11.287Z","role":"user","content":"hi"}`,
			fmt.Sprintf(`out {"type":"message","timestamp":"2026-11-22T00:11:11.328Z","role":"assistant","content":%q,"delta":true}`, text[:half]),
			fmt.Sprintf(`out {"type":"message","timestamp":"2026-11-22T00:11:11.329Z","role":"assistant","content":%q,"delta":true}`, text[half:]),
			`out {"type":"result","timestamp":"2026-11-22T00:11:11.585Z","status":"success","stats":{"total_tokens":15,"input_tokens":10,"output_tokens":5,"cached":0,"input":10,"duration_ms":300,"tool_calls":0,"models":{"gemini-test":{"total_tokens":15,"input_tokens":10,"output_tokens":5,"cached":0,"input":10}}}}`,
		}
	},
	Partial: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"init","timestamp":"2026-11-22T00:11:11.286Z","session_id":%q,"model":"auto"}`, sess),
			`out {"type":"message","timestamp":"2026-11-22T00:11:11.328Z","role":"assistant","content":"par","delta":true}`,
		}
	},
	Truncated: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"init","timestamp":"2026-11-22T00:11:11.286Z","session_id":%q,"model":"auto"}`, sess),
			`outraw {"type":"result","timestamp":"2026-11-22T00:11:11.585Z","status":"succ`,
		}
	},
}

func TestFaultMatrix(t *testing.T) { backendtest.FaultMatrix(t, kit) }

// What the fake saw: the argv parses under gemini's rules, the prompt (with
// the system prompt before it) is on stdin and nowhere in argv.
func TestPromptOnStdin(t *testing.T) {
	b, dir := kit.Setup(t, nil, kit.Success("ok", "s")...)
	req := &agentcli.Request{Prompt: "--help", SystemPrompt: "Answer in French.", Model: "gemini-2.5-flash", SessionID: "latest"}
	if _, err := b.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	rec, err := fakecli.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Stdin != "Answer in French.\n\n--help" || rec.Prompt != "" {
		t.Fatalf("stdin %q, positional %q", rec.Stdin, rec.Prompt)
	}
	want := "--output-format json --approval-mode default --skip-trust --resume=latest --model=gemini-2.5-flash"
	if got := strings.Join(rec.Args, " "); got != want {
		t.Fatalf("argv %q, want %q", got, want)
	}
}

// Run uses json; the document arrives pretty-printed over many lines.
func TestRunJSONThroughFake(t *testing.T) {
	doc := backendtest.ReadTranscript(t, "text-json").Stdout
	script := []string{}
	for _, l := range strings.Split(string(doc), "\n") {
		script = append(script, "out "+l)
	}
	b, _ := kit.Setup(t, nil, script...)
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "Say hello."})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Hello from agentclitest." || res.SessionID != "eba5c9d7-0213-4dee-b21c-2038587f9d8c" ||
		res.Usage.InputTokens != 20 || res.Model != "gemini-3.8-flash" {
		t.Fatalf("result %+v", res)
	}
}

// Stray lines before the json document (a lone "{", an object that is not
// the document, noise) do not hide it; without the document the run is a
// *ParseError, never a success with an empty text.
func TestRunJSONStrayLines(t *testing.T) {
	doc := backendtest.ReadTranscript(t, "text-json").Stdout
	stray := []string{"out Loaded cached credentials.", "out {", "out {}", `out {"level":"debug"}`, "out {", "out }"}
	script := append([]string{}, stray...)
	for _, l := range strings.Split(string(doc), "\n") {
		script = append(script, "out "+l)
	}
	b, _ := kit.Setup(t, nil, script...)
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "Say hello."})
	if err != nil || res.Text != "Hello from agentclitest." || res.SessionID != "eba5c9d7-0213-4dee-b21c-2038587f9d8c" {
		t.Fatalf("res %+v err %v", res, err)
	}
	b, _ = kit.Setup(t, nil, stray...)
	res, err = b.Run(context.Background(), &agentcli.Request{Prompt: "Say hello."})
	var pe *agentcli.ParseError
	if !errors.As(err, &pe) || res != nil {
		t.Fatalf("stray lines only: res %+v err %v; want a *ParseError", res, err)
	}
}

// A prompt gemini would truncate is refused before it starts, with an
// error that is both a *PromptTooLongError and ErrBadRequest.
func TestPromptTooLong(t *testing.T) {
	b, dir := kit.Setup(t, nil, kit.Success("hi", "s")...)
	_, err := b.Run(context.Background(), &agentcli.Request{Prompt: strings.Repeat("x", MaxPromptBytes) + "y"})
	var pe *PromptTooLongError
	if !errors.As(err, &pe) || !errors.Is(err, agentcli.ErrBadRequest) || pe.Len != MaxPromptBytes+1 {
		t.Fatalf("err = %v", err)
	}
	if pids := fakecli.ReadPids(dir); len(pids) != 0 {
		t.Fatalf("gemini started: %v", pids)
	}
}

// A json-mode fatal error is a JSON document on stderr and nothing on
// stdout.
func TestRunJSONErrorOnStderr(t *testing.T) {
	stderr := backendtest.ReadTranscript(t, "error400-json").Stderr
	script := []string{}
	for _, l := range strings.Split(strings.TrimRight(string(stderr), "\n"), "\n") {
		script = append(script, "err "+l)
	}
	script = append(script, "exit 144")
	b, _ := kit.Setup(t, nil, script...)
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "Say hello."})
	var re *agentcli.ResultError
	if !errorsAs(err, &re) || re.APIStatus != 400 || re.ExitCode != 144 || !strings.Contains(re.Message, "agentclitest says no") {
		t.Fatalf("err = %v", err)
	}
	if res == nil || !res.IsError || res.SessionID != "d5b6d91e-cd69-41e9-ae93-a07ee6157562" || res.ExitCode != 144 {
		t.Fatalf("result %+v", res)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// Every real transcript survives a wire-log round trip: replaying the log
// of a live run yields the same events.
func TestReplayTranscripts(t *testing.T) {
	backendtest.ReplayTranscripts(t, kit, func(name string) bool { return strings.HasSuffix(name, "-stream") })
}

// Without any credential a run fails at once with a *CredentialsError
// naming the variables; each way gemini finds one lets the run start.
func TestCredentials(t *testing.T) {
	backendtest.CheckCredentials(t, kit, credentialVars, credentialWays)
}

var credentialWays = []backendtest.CredentialWay{
	{Name: "API key", Env: []string{"GEMINI_API_KEY=k"}},
	{Name: "Vertex", Env: []string{"GOOGLE_GENAI_USE_VERTEXAI=true"}},
	{Name: "login", Files: map[string]string{"~/.gemini/oauth_creds.json": `{"access_token":"x"}`}},
	{Name: "auth type in settings", Files: map[string]string{"~/.gemini/settings.json": `{"security":{"auth":{"selectedType":"oauth-personal"}}}`}},
	{Name: "GEMINI_CLI_HOME", Env: []string{"GEMINI_CLI_HOME=~/gh"}, Files: map[string]string{"~/gh/.gemini/oauth_creds.json": `{}`}},
	{Name: "project .env", Files: map[string]string{"./.env": "GEMINI_API_KEY=k\n"}},
	{Name: "home .env", Files: map[string]string{"~/.env": "GEMINI_API_KEY=k\n"}},
	{Name: "extra args", ExtraArgs: []string{"--debug"}},
}

// No file is written into the home directory but the two directories
// gemini creates there itself on every run (.gemini/tmp and
// .gemini/history, which the settings overlay links to so that the
// session lands in the user's home): the overlay with the MCP servers and
// the effort lives in the run's temporary directory.
func TestNoHomeWrites(t *testing.T) {
	backendtest.CheckNoHomeWrites(t, kit, &agentcli.Request{Prompt: "hi", SystemPrompt: "be brief",
		Effort: agentcli.EffortLow, MCPServers: []agentcli.MCPServer{{Name: "s", Command: "srv", Env: []string{"TOKEN=t"}}}},
		nil, ".gemini/tmp", ".gemini/history")
}
