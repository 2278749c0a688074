package gemini

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/backendtest"
)

func TestLiveArgsAndModes(t *testing.T) {
	got := liveArgs(&agentcli.Request{Model: "-m", ExtraArgs: []string{"--debug"}, Prompt: "--help"})
	if !slices.Equal(got, []string{"--acp", "--skip-trust", "--model=-m", "--debug"}) {
		t.Errorf("liveArgs = %q", got)
	}
	// The request's servers are the only ones only where nothing asks:
	// gemini would also allow every tool of the servers it is told to
	// allow (verified against 0.61.0 by conformance TestLiveMCPPermissions).
	servers := []agentcli.MCPServer{{Name: "a", Command: "x"}, {Name: "b-2", URL: "http://127.0.0.1:1/"}}
	for m, want := range map[agentcli.PermissionMode]bool{"": false, agentcli.PermissionBypass: true,
		agentcli.PermissionAsk: false, agentcli.PermissionDeny: false, agentcli.PermissionPlan: false} {
		got := liveArgs(&agentcli.Request{MCPServers: servers, Permission: m})
		if slices.Contains(got, "--allowed-mcp-server-names=a,b-2") != want {
			t.Errorf("mode %q: liveArgs = %q", m, got)
		}
	}
	if got := mcpValue(`a $HOME ${X} \$y`); got != `a \$HOME \${X} \\$y` {
		t.Errorf("mcpValue = %q", got)
	}
	for m, want := range map[agentcli.PermissionMode]string{
		"": "default", agentcli.PermissionBypass: "yolo", agentcli.PermissionAsk: "default",
		agentcli.PermissionDeny: "default", agentcli.PermissionPlan: "plan",
	} {
		if got := sessionMode(&agentcli.Request{Permission: m}); got != want {
			t.Errorf("sessionMode(%q) = %q, want %q", m, got, want)
		}
	}
	// Bypass with an allow list: gemini asks and the session answers
	// from the list; only the servers the list names start.
	req := &agentcli.Request{Permission: agentcli.PermissionBypass, AllowedTools: []string{"Read", "mcp__b-2__x"}, MCPServers: servers}
	if got := sessionMode(req); got != "default" {
		t.Errorf("sessionMode(bypass, allow list) = %q, want default", got)
	}
	if got := liveArgs(req); !slices.Contains(got, "--allowed-mcp-server-names=b-2") {
		t.Errorf("liveArgs(bypass, allow list) = %q", got)
	}
	req.AllowedTools = []string{"Read"}
	if got := liveArgs(req); !slices.Contains(got, "--allowed-mcp-server-names="+noServers) {
		t.Errorf("liveArgs(allow list without servers) = %q", got)
	}
}

func TestGuardPrompt(t *testing.T) {
	for in, want := range map[string]string{
		"/help":       "\u200b/help",
		"  /init x":   "\u200b  /init x",
		"$skill":      "\u200b$skill",
		"@README.md":  "@README.md", // ACP mode passes @ through
		"a /b":        "a /b",
		"--help":      "--help",
		"\n\t/memory": "\u200b\n\t/memory",
	} {
		if got := guardPrompt(in); got != want {
			t.Errorf("guardPrompt(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestToolNameAndUsage(t *testing.T) {
	if got := toolName("run_shell_command__run_shell_command_1795377215448_0", "touch x"); got != "run_shell_command" {
		t.Errorf("toolName = %q", got)
	}
	if got := toolName("call_1", "x"); got != "" {
		t.Errorf("toolName without a prefix = %q", got)
	}
	u, ok := quotaUsage(json.RawMessage(`{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":30,"output_tokens":15},"model_usage":[]}}}`))
	if !ok || u.InputTokens != 30 || u.OutputTokens != 15 {
		t.Errorf("quotaUsage = %+v, %v", u, ok)
	}
	if _, ok := quotaUsage(json.RawMessage(`{"stopReason":"end_turn"}`)); ok {
		t.Error("quotaUsage found usage in an answer without any")
	}
}

// A session whose chat file carries the current minute is loaded only in
// the next minute; any other session at once.
func TestUntilLoadable(t *testing.T) {
	home := t.TempDir()
	chats := filepath.Join(home, ".gemini", "tmp", "work", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	id := "0440eb0b-75c4-4816-a02f-061c61f27f73"
	if err := os.WriteFile(filepath.Join(chats, "session-2026-11-22T20-00-0440eb0b.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=/elsewhere", "GEMINI_CLI_HOME=" + home}
	at := time.Date(2026, 11, 22, 20, 0, 45, 0, time.UTC)
	if d := untilLoadable(env, id, at); d < 15*time.Second || d > 16*time.Second {
		t.Errorf("same minute: wait %v, want about 15 s", d)
	}
	if d := untilLoadable(env, id, at.Add(time.Minute)); d != 0 {
		t.Errorf("next minute: wait %v", d)
	}
	if d := untilLoadable(env, "ffffffff-0000", at); d != 0 {
		t.Errorf("another session: wait %v", d)
	}
	if d := untilLoadable([]string{"HOME=" + home}, id, at.In(time.FixedZone("x", 3600))); d == 0 {
		t.Error("HOME is not used without GEMINI_CLI_HOME, or the minute is not UTC")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := waitLoadable(ctx, env, id, func() time.Time { return at }); err == nil {
		t.Error("waitLoadable ignored its context")
	}
}

// realBackend returns the pinned gemini and a request wired to srv. The
// calling test must have called backendtest.RunIsolated.
func realBackend(t *testing.T, srv *agentclitest.Server) (agentcli.Backend, *agentcli.Request, string) {
	t.Helper()
	return backendtest.RealBackend(t, "gemini", srv, New)
}

// One-shot Runs with PermissionAsk, PermissionDeny and PermissionPlan go
// through a live session: the command never runs and the turn goes on.
func TestLiveOneShotReal(t *testing.T) {
	for _, m := range []agentcli.PermissionMode{agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan} {
		t.Run(string(m), func(t *testing.T) {
			if backendtest.RunIsolated(t) {
				return
			}
			srv := agentclitest.NewServer(agentclitest.Turn{Shell: "touch NOPE"}, agentclitest.Turn{Text: "fine"})
			defer srv.Close()
			b, req, dir := realBackend(t, srv)
			res, asked := backendtest.RunRefusing(t, b, req, dir, m)
			want := 0
			if m == agentcli.PermissionAsk {
				want = 1
			}
			if res.Text != "fine" || asked != want {
				t.Errorf("Result.Text = %q after %d permission requests; want %q after %d", res.Text, asked, "fine", want)
			}
			reqs := srv.Requests()
			if tr := reqs[len(reqs)-1].ToolResults; len(tr) == 0 {
				t.Errorf("the model heard nothing of the refused call")
			} else {
				t.Logf("the model got %q", tr[len(tr)-1].Output)
			}
		})
	}
}

// The system prompt is prepended to the first prompt of a new session
// only.
func TestLiveSystemPromptReal(t *testing.T) {
	if backendtest.RunIsolated(t) {
		return
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "one"}, agentclitest.Turn{Text: "two"})
	defer srv.Close()
	b, req, _ := realBackend(t, srv)
	req.SystemPrompt = "SYSTEM-LINE"
	s, err := agentcli.StartSession(context.Background(), b, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []string{"first", "second"} {
		if _, err := s.Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	var users []string
	for _, r := range srv.Requests() {
		if !r.Utility {
			users = append(users, r.LastUserText())
		}
	}
	if len(users) != 2 || users[0] != "SYSTEM-LINE\n\nfirst" || users[1] != "second" {
		t.Errorf("the model saw user texts %q", users)
	}
	if strings.Contains(users[len(users)-1], "SYSTEM") {
		t.Error("the system prompt was repeated")
	}
}
