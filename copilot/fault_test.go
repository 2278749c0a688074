package copilot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
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

// kit scripts copilot's JSONL for the fault matrix. The line shapes follow
// real 1.0.102 output (testdata/real).
var kit = backendtest.Kit{
	Name: Name,
	New:  func(o *agentcli.Options) agentcli.Backend { return New(o) },
	Success: func(text, sess string) []string {
		half := len(text) / 2
		return []string{
			`out {"type":"session.tools_updated","data":{"model":"m"},"ephemeral":true,"id":"e1","timestamp":"2026-11-26T00:00:00.000Z"}`,
			`out {"type":"assistant.turn_start","data":{"turnId":"0"},"id":"e2","timestamp":"2026-11-26T00:00:00.001Z"}`,
			fmt.Sprintf(`out {"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":%q},"ephemeral":true,"id":"e3","timestamp":"2026-11-26T00:00:00.002Z"}`, text[:half]),
			fmt.Sprintf(`out {"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":%q},"ephemeral":true,"id":"e4","timestamp":"2026-11-26T00:00:00.003Z"}`, text[half:]),
			fmt.Sprintf(`out {"type":"assistant.message","data":{"messageId":"m1","model":"m","content":%q,"toolRequests":[]},"id":"e5","timestamp":"2026-11-26T00:00:00.004Z"}`, text),
			`out {"type":"assistant.turn_end","data":{"turnId":"0"},"id":"e6","timestamp":"2026-11-26T00:00:00.005Z"}`,
			fmt.Sprintf(`out {"type":"result","timestamp":"2026-11-26T00:00:00.006Z","sessionId":%q,"exitCode":0,"usage":{"premiumRequests":0}}`, sess),
		}
	},
	Partial: func(sess string) []string {
		return []string{
			`out {"type":"assistant.turn_start","data":{"turnId":"0"},"id":"e2","timestamp":"2026-11-26T00:00:00.001Z"}`,
			`out {"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":"par"},"ephemeral":true,"id":"e3","timestamp":"2026-11-26T00:00:00.002Z"}`,
		}
	},
	Truncated: func(sess string) []string {
		return []string{
			`out {"type":"assistant.turn_start","data":{"turnId":"0"},"id":"e2","timestamp":"2026-11-26T00:00:00.001Z"}`,
			fmt.Sprintf(`outraw {"type":"result","timestamp":"2026-11-26T00:00:00.006Z","sessionId":%q,"exitC`, sess),
		}
	},
}

// The fault matrix's scripts print the session id sess-fault-1, which a
// real copilot prints only as the one agentcli chose: it is chosen here.
func TestFaultMatrix(t *testing.T) {
	defer func(f func() (string, error)) { newUUID = f }(newUUID)
	newUUID = func() (string, error) { return "sess-fault-1", nil }
	backendtest.FaultMatrix(t, kit)
}

// What the fake saw: the argv parses under copilot's rules, the prompt is
// on stdin and nowhere in argv, values are attached with "=", and the
// system prompt is a private instructions file, not an argument.
func TestPromptOnStdin(t *testing.T) {
	b, dir := kit.Setup(t, nil, kit.Success("ok", "s")...)
	req := &agentcli.Request{Prompt: "--help", SystemPrompt: "Answer in French.", Model: "-m",
		SessionID: "0cb916db-26aa-40f2-86b5-1ba81b225fd2", Effort: agentcli.EffortHigh}
	if _, err := b.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	rec, err := fakecli.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Stdin != "--help" || rec.Prompt != "" {
		t.Fatalf("stdin %q, positional %q", rec.Stdin, rec.Prompt)
	}
	want := []string{"--output-format=json", "--no-auto-update", "--model=-m", "--reasoning-effort=high",
		"--resume=0cb916db-26aa-40f2-86b5-1ba81b225fd2"}
	if len(rec.Args) != len(want)+1 || !slices.Equal(rec.Args[:len(want)], want) || !strings.HasPrefix(rec.Args[len(want)], "--usage-output-file=") {
		t.Fatalf("argv %q, want %q and --usage-output-file", rec.Args, want)
	}
	for _, a := range rec.Args {
		if strings.Contains(a, "French") {
			t.Fatalf("the system prompt is in argv: %q", rec.Args)
		}
	}
	var dirs string
	for _, kv := range rec.Env {
		if v, ok := strings.CutPrefix(kv, "COPILOT_CUSTOM_INSTRUCTIONS_DIRS="); ok {
			dirs = v
		}
	}
	if dirs == "" {
		t.Fatalf("no COPILOT_CUSTOM_INSTRUCTIONS_DIRS in the environment")
	}
	if _, err := os.Stat(dirs); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the instructions directory %s outlived the run (%v)", dirs, err)
	}
}

// The modes' flags, and COPILOT_ALLOW_ALL turned off but under bypass.
func TestModeFlags(t *testing.T) {
	for _, c := range []struct {
		mode     agentcli.PermissionMode
		flag     string
		allowAll bool
	}{
		{"", "", false},
		{agentcli.PermissionDeny, "", false},
		{agentcli.PermissionBypass, "--allow-all", true},
		{agentcli.PermissionPlan, "--plan", false},
	} {
		b, dir := kit.Setup(t, &agentcli.Options{Env: []string{"COPILOT_ALLOW_ALL=true"}}, kit.Success("ok", "s")...)
		if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", Permission: c.mode}); err != nil {
			t.Fatal(err)
		}
		rec, err := fakecli.ReadRecord(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"--allow-all", "--plan", "--allow-all-tools", "--yolo"} {
			if got := slices.Contains(rec.Args, f); got != (f == c.flag) {
				t.Errorf("mode %q: %s in argv = %v (%q)", c.mode, f, got, rec.Args)
			}
		}
		allowAll := ""
		for _, kv := range rec.Env {
			if v, ok := strings.CutPrefix(kv, "COPILOT_ALLOW_ALL="); ok {
				allowAll = v
			}
		}
		if (allowAll == "true") != c.allowAll {
			t.Errorf("mode %q: COPILOT_ALLOW_ALL=%q", c.mode, allowAll)
		}
	}
}

// The usage statistics copilot writes to --usage-output-file become one
// more line after its output: an EventUsage before the result, the
// result's Usage, and a wire log that replays to the same events.
func TestUsageFile(t *testing.T) {
	usage := `{"totalPremiumRequestCost":0,"modelMetrics":{"m":{"requests":{"count":2},"usage":{"inputTokens":120,"outputTokens":15,"cacheReadTokens":20,"cacheWriteTokens":0,"reasoningTokens":4}},` +
		`"n":{"usage":{"inputTokens":10,"outputTokens":5}}}}`
	script := append(kit.Success("done", "s-usage")[:6],
		"file --usage-output-file "+usage,
		`out {"type":"result","timestamp":"2026-11-26T00:00:00.006Z","sessionId":"s-usage","exitCode":0,"usage":{"premiumRequests":0}}`)
	b, _ := kit.Setup(t, nil, script...)
	evs, err := backendtest.ReplayRoundTrip(t, b, &agentcli.Request{Prompt: "hi"}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := agentcli.Usage{InputTokens: 110, OutputTokens: 20, CacheReadTokens: 20, ReasoningTokens: 4}
	n := len(evs)
	if n < 2 || evs[n-2].Kind != agentcli.EventUsage || *evs[n-2].Usage != want || evs[n-1].Result.Usage != want {
		t.Fatalf("events %+v; want an EventUsage and a result with %+v", evs, want)
	}
	// A resumed run's usage covers the session.
	b, _ = kit.Setup(t, nil, script...)
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", SessionID: "0cb916db-26aa-40f2-86b5-1ba81b225fd2"})
	if err != nil || !res.Usage.Cumulative {
		t.Fatalf("resumed: %+v, %v; want cumulative usage", res, err)
	}
}

// Every real transcript survives a wire-log round trip.
func TestReplayTranscripts(t *testing.T) {
	backendtest.ReplayTranscripts(t, kit, func(name string) bool { return !strings.HasPrefix(name, "resume-2") })
}

// Without any credential a run fails at once with a *CredentialsError
// naming the variables; each way copilot finds one lets the run start.
func TestCredentials(t *testing.T) {
	backendtest.CheckCredentials(t, kit, credentialVars, credentialWays)
}

var credentialWays = []backendtest.CredentialWay{
	{Name: "GitHub token", Env: []string{"GH_TOKEN=ghp_x"}},
	{Name: "copilot token", Env: []string{"COPILOT_GITHUB_TOKEN=x"}},
	{Name: "provider key", Env: []string{"COPILOT_PROVIDER_API_KEY=k"}},
	{Name: "provider base URL", Env: []string{"COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:9/v1"}},
	{Name: "copilot login", Files: map[string]string{"~/.copilot/config.json": `{"lastLoggedInUser":{"host":"https://github.com","login":"me"}}`}},
	{Name: "COPILOT_HOME", Env: []string{"COPILOT_HOME=~/ch"}, Files: map[string]string{"~/ch/config.json": `{"loggedInUsers":[]}`}},
	{Name: "gh login", Files: map[string]string{"~/.config/gh/hosts.yml": "github.com:\n    user: me\n"}},
	{Name: "extra args", ExtraArgs: []string{"--no-color"}},
}

// No file is written into the home directory: the instructions file, the
// MCP configuration and the usage file live in the run's temporary
// directory.
func TestNoHomeWrites(t *testing.T) {
	backendtest.CheckNoHomeWrites(t, kit, &agentcli.Request{Prompt: "hi", SystemPrompt: "be brief",
		Effort: agentcli.EffortLow, MCPServers: []agentcli.MCPServer{{Name: "s", Command: "srv", Env: []string{"TOKEN=t"}}}},
		[]string{"COPILOT_HOME=~/.copilot"})
}

// A session.error without a result line (copilot killed after reporting
// it) is still the API error it reported; an unknown session (stderr, exit
// 1, no output) is ErrSessionNotFound.
func TestErrors(t *testing.T) {
	b, _ := kit.Setup(t, nil,
		`out {"type":"session.error","data":{"errorType":"rate_limit","message":"429 slow down","statusCode":429},"id":"e"}`, "exit 1")
	_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi"})
	var re *agentcli.ResultError
	if !errors.As(err, &re) || re.APIStatus != 429 || !errors.Is(err, agentcli.ErrRateLimited) || re.Subtype != "rate_limit" {
		t.Fatalf("err = %v", err)
	}
	b, _ = kit.Setup(t, nil, "err error: No session, task, or name matched '0cb916db-26aa-40f2-86b5-1ba81b225fd2'", "exit 1")
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "hi", SessionID: "0cb916db-26aa-40f2-86b5-1ba81b225fd2"})
	var xe *agentcli.ExitError
	if !errors.As(err, &xe) || !errors.Is(err, agentcli.ErrSessionNotFound) {
		t.Fatalf("err = %v", err)
	}
	var log bytes.Buffer
	b, _ = kit.Setup(t, nil, backendtest.TranscriptScript(backendtest.ReadTranscript(t, "error400"))...)
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", WireLog: &log})
	if !errors.As(err, &re) || re.APIStatus != 400 || re.Subtype != "query" || !strings.Contains(re.Message, "agentclitest says no") ||
		re.ExitCode != 1 || res == nil || !res.IsError || res.SessionID == "" {
		t.Fatalf("error400: %+v, %v", res, err)
	}
}
