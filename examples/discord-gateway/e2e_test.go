package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli/agentclitest"
)

// requireCLI returns nothing when the CLI can run; otherwise it skips the
// test, or fails it under CI=true, where every real-CLI test must run.
func requireCLI(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err == nil || installedCLI(name) != "" {
		return
	}
	msg := name + " is not installed (run scripts/install-clis.sh)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// TestConsoleOfflineRealCLI runs the program as a user would, in console
// mode with -offline, on the real claude CLI against the scripted model
// server: two prompts on stdin, two answers on stdout, the second run
// resuming the first one's session; the first one runs in the warm
// session started ahead of it (WARM_SESSIONS, default 1). Run it in a
// network namespace (as scripts/test.sh does): nothing may leave loopback.
func TestConsoleOfflineRealCLI(t *testing.T) {
	requireCLI(t, "claude")
	consoleOffline(t, []string{"AGENT_BACKEND=claude", "QUERY_TIMEOUT=120"})
}

// TestConsoleOfflineACP: the same with any ACP agent (AGENT_BACKEND=acp,
// BACKEND_CLI_PATH and BACKEND_CLI_ARGS), here the pinned opencode in ACP
// mode.
func TestConsoleOfflineACP(t *testing.T) {
	requireCLI(t, "opencode")
	consoleOffline(t, []string{"AGENT_BACKEND=acp", "BACKEND_CLI_PATH=opencode", "BACKEND_CLI_ARGS=acp", "QUERY_TIMEOUT=120"})
}

func consoleOffline(t *testing.T, env []string) {
	var srv *agentclitest.Server
	onOffline = func(s *agentclitest.Server) { srv = s }
	defer func() { onOffline = nil }()

	stdin := strings.NewReader("Remember the word pelican.\nWhich word did I ask you to remember?\n")
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code := run(ctx, []string{"-console", "-offline", "-v", "-offline-reply", "Noted: the offline model answers."},
		env, stdin, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if n := strings.Count(stdout.String(), "Noted: the offline model answers."); n != 2 {
		t.Fatalf("%d answers on stdout, want 2:\n%s\nstderr:\n%s", n, stdout.String(), stderr.String())
	}
	if srv == nil {
		t.Fatal("-offline did not start the scripted model server")
	}
	if !strings.Contains(stderr.String(), "a warm session for the conversation") {
		t.Errorf("the first message did not run in a warm session:\n%s", stderr.String())
	}
	var turns []agentclitest.ModelRequest
	for _, r := range srv.Requests() {
		if !r.Utility {
			turns = append(turns, r)
		}
	}
	if len(turns) != 2 {
		t.Fatalf("%d model calls, want 2", len(turns))
	}
	// The second run resumed the channel's session: the model sees the
	// first exchange.
	var history []string
	for _, m := range turns[1].Messages {
		history = append(history, m.Role+": "+m.Text)
	}
	joined := strings.Join(history, "\n")
	if !strings.Contains(joined, "pelican") || !strings.Contains(joined, "Noted: the offline model answers.") {
		t.Fatalf("second call does not carry the first exchange:\n%s", joined)
	}
	if turns[1].LastUserText() == "" || !strings.Contains(turns[1].LastUserText(), "Which word") {
		t.Fatalf("second call's prompt: %q", turns[1].LastUserText())
	}
}

// TestStartupCheckFails: a backend whose CLI cannot be found is reported
// with its name and path, and the program exits 1.
func TestStartupCheckFails(t *testing.T) {
	env := []string{"AGENT_BACKEND=codex", "BACKEND_CLI_PATH=/nonexistent/codex-cli"}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-console"}, env, strings.NewReader(""), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	log := stderr.String()
	if !strings.Contains(log, "backend=codex") || !strings.Contains(log, "/nonexistent/codex-cli") {
		t.Fatalf("log does not name the backend and path:\n%s", log)
	}
}

func TestDiscordModeNeedsTokenAndUsers(t *testing.T) {
	for _, env := range [][]string{
		{},
		{"DISCORD_TOKEN=x"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), nil, env, strings.NewReader(""), &stdout, &stderr); code != 1 {
			t.Fatalf("%v: exit %d, want 1", env, code)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	env := map[string]string{"QUERY_TIMEOUT": "90", "RETRY_DELAY": "2s", "ALLOWED_USERS": " 1, 2 ,,", "BACKEND_MAX_TURNS": "7",
		"PERMISSION_MODE": "ASK"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := LoadConfig(lookup, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if c.QueryTimeout != 90*time.Second || c.RetryDelay != 2*time.Second || strings.Join(c.AllowedUsers, "|") != "1|2" ||
		c.Agent.MaxTurns != 7 || c.Permission != "ask" || c.RetryAttempts != 3 || !c.Live || c.ImageMax != 5<<20 {
		t.Fatalf("%+v", c)
	}
	for k, v := range map[string]string{"QUERY_TIMEOUT": "soon", "MAX_CONCURRENT_RUNS": "0", "PERMISSION_MODE": "yolo",
		"SYSTEM_PROMPT_FILE": "/nonexistent", "WORKING_DIR": "/nonexistent", "LIVE_SESSIONS": "maybe",
		"AGENT_ENV": "DISCORD_TOKEN", "THREADS": "sometimes", "MAX_LIVE_SESSIONS": "-1", "DISCORD_SHARD_ID": "1",
		"DISCORD_API_URL": "discord.com", "DISCORD_GATEWAY_URL": "https://gateway.discord.gg",
		"WARM_SESSIONS": "-1", "IMAGE_MAX_BYTES": "5242881"} {
		lookup := func(key string) (string, bool) {
			if key == k {
				return v, true
			}
			return "", false
		}
		if _, err := LoadConfig(lookup, quiet()); err == nil {
			t.Errorf("%s=%q accepted", k, v)
		}
	}
}

// TestLoadConfigPool: with NATS_URL, WORKING_DIR is a path on the workers
// (not looked for here, but absolute); the NATS settings never go to the
// agent through AGENT_ENV; a shard is a number below the shard count.
func TestLoadConfigPool(t *testing.T) {
	load := func(env map[string]string) (Config, error) {
		return LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, quiet())
	}
	c, err := load(map[string]string{"NATS_URL": "nats://pool:4222", "NATS_CREDS": "/etc/gw.creds", "POOL_PREFIX": "team1",
		"WORKING_DIR": "/on/the/workers", "DISCORD_SHARD_ID": "1", "DISCORD_SHARD_COUNT": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if c.NATSURL != "nats://pool:4222" || c.NATSCreds != "/etc/gw.creds" || c.PoolPrefix != "team1" ||
		c.WorkingDir != "/on/the/workers" || c.ShardID != 1 || c.ShardCount != 2 {
		t.Errorf("%+v", c)
	}
	for _, env := range []map[string]string{
		{"NATS_URL": "nats://pool:4222", "WORKING_DIR": "relative/dir"},
		{"AGENT_ENV": "NATS_CREDS"},
		{"AGENT_ENV": "nats_url=nats://elsewhere"},
		{"DISCORD_SHARD_ID": "2", "DISCORD_SHARD_COUNT": "2"},
		{"DISCORD_SHARD_ID": "-1", "DISCORD_SHARD_COUNT": "2"},
	} {
		if _, err := load(env); err == nil {
			t.Errorf("%v accepted", env)
		}
	}
	if got := addedEnv([]string{"NATS_CREDS=/x"}, []string{"NATS_CREDS", "NATS_URL=u", "OK=1"}); !slices.Equal(got, []string{"OK=1"}) {
		t.Errorf("addedEnv passed %q", got)
	}
}

// TestLoadConfigWarm: WARM_SESSIONS defaults to 1 (0 when a single live
// session is allowed), takes 0, and must stay below MAX_LIVE_SESSIONS,
// which counts the warm ones.
func TestLoadConfigWarm(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want int
		bad  bool
	}{
		{env: map[string]string{}, want: 1},
		{env: map[string]string{"MAX_LIVE_SESSIONS": "1"}, want: 0},
		{env: map[string]string{"WARM_SESSIONS": "0"}, want: 0},
		{env: map[string]string{"WARM_SESSIONS": "3", "MAX_LIVE_SESSIONS": "4"}, want: 3},
		{env: map[string]string{"WARM_SESSIONS": "4", "MAX_LIVE_SESSIONS": "4"}, bad: true},
		{env: map[string]string{"WARM_SESSIONS": "1", "MAX_LIVE_SESSIONS": "1"}, bad: true},
		{env: map[string]string{"WARM_SESSIONS": "some"}, bad: true},
	} {
		c, err := LoadConfig(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }, quiet())
		if (err != nil) != tt.bad || err == nil && c.Warm != tt.want {
			t.Errorf("%v: warm %d, err %v; want %d (refused: %v)", tt.env, c.Warm, err, tt.want, tt.bad)
		}
	}
}
