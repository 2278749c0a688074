package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/acpagent"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

func TestMain(m *testing.M) {
	fakecli.MaybeRun()
	os.Exit(m.Run())
}

const sess = "0d1f5c7e-aaaa-bbbb-cccc-123456789abc"

var okScript = []string{
	`out {"type":"system","subtype":"init","session_id":"` + sess + `","model":"claude-test"}`,
	`out {"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"Hel"}},"session_id":"` + sess + `"}`,
	`out {"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"lo"}},"session_id":"` + sess + `"}`,
	`out {"type":"result","subtype":"success","is_error":false,"result":"Hello","session_id":"` + sess + `","usage":{"input_tokens":3,"output_tokens":2}}`,
}

// fake points the claude backend at this test binary acting as the fake CLI.
func fake(t *testing.T, script ...string) (cli string, dir string) {
	t.Helper()
	dir = t.TempDir()
	for _, kv := range fakecli.Env(dir, "claude", script...) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self, dir
}

func runArgs(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, strings.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

func TestJSON(t *testing.T) {
	cli, dir := fake(t, okScript...)
	code, out, errOut := runArgs(t, "", "-cli", cli, "-json", "--", "-p x")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"text", "session_id", "is_error", "usage"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing in %s", k, out)
		}
	}
	if m["text"] != "Hello" || m["session_id"] != sess || m["is_error"] != false {
		t.Fatalf("result %s", out)
	}
	rec, err := fakecli.ReadRecord(dir)
	if err != nil || rec.StdinPrompt != "-p x" {
		t.Fatalf("the CLI got stdin %q (%v); want the prompt", rec.Stdin, err)
	}
}

func TestStream(t *testing.T) {
	cli, _ := fake(t, okScript...)
	code, out, errOut := runArgs(t, "", "-cli", cli, "-stream", "hi")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var kinds []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev struct{ Kind string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		kinds = append(kinds, ev.Kind)
	}
	if got := strings.Join(kinds, ","); got != "init,text_delta,text_delta,usage,result" {
		t.Fatalf("event kinds %s", got)
	}
}

func TestPlainAndStdinPrompt(t *testing.T) {
	cli, dir := fake(t, okScript...)
	code, out, _ := runArgs(t, "prompt from stdin", "-cli", cli, "-system", "be terse", "-")
	if code != 0 || out != "Hello\n" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	rec, _ := fakecli.ReadRecord(dir)
	if rec.StdinPrompt != "prompt from stdin" || rec.Files["--append-system-prompt-file"] != "be terse" {
		t.Fatalf("record %+v", rec)
	}
}

func TestErrors(t *testing.T) {
	cli, _ := fake(t, "err Error: something broke", "exit 1")
	code, _, errOut := runArgs(t, "", "-cli", cli, "hi")
	if code != 1 || !strings.Contains(errOut, "exit status 1") || !strings.Contains(errOut, "something broke") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runArgs(t, "", "-cli", filepath.Join(t.TempDir(), "missing"), "hi")
	if code != 1 || !strings.Contains(errOut, "not found") {
		t.Fatalf("missing binary: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut = runArgs(t, "", "-backend", "nope", "hi"); code != 2 || !strings.Contains(errOut, "claude") {
		t.Fatalf("unknown backend: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ = runArgs(t, ""); code != 2 {
		t.Fatalf("no prompt: exit %d", code)
	}
	if code, _, errOut = runArgs(t, "", "-cli", cli, "-interactive"); code != 1 || !strings.Contains(errOut, "terminal") {
		t.Fatalf("-interactive without a terminal: exit %d, stderr %q", code, errOut)
	}
	// Refusals say why.
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"-cli", cli, "-json", "-stream", "hi"}, "cannot be combined"},
		{"", []string{"-cli", cli, "-interactive", "-json"}, "cannot be combined"},
		{"", []string{"-cli", cli, "-interactive", "-"}, "cannot come from stdin"},
		{"", []string{"-cli", cli, "  \n\t"}, "prompt is empty"},
		{" \n", []string{"-cli", cli, "-"}, "prompt is empty"},
		{"", []string{"-cli", cli, "-list", "-chat"}, "-list runs nothing"},
		{"", []string{"-cli", cli, "-permission", "sometimes", "hi"}, "unknown permission mode"},
		{"", []string{"-cli", cli, "-chat", "hi"}, "usage: agentrun"},
	} {
		if code, _, errOut = runArgs(t, c.stdin, c.args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestWireLogReplay: -replay prints what the live -stream run printed
// (durations aside), and the plain text too.
func TestWireLogReplay(t *testing.T) {
	cli, _ := fake(t, okScript...)
	log := filepath.Join(t.TempDir(), "run.wire")
	code, live, errOut := runArgs(t, "", "-cli", cli, "-stream", "-wire-log", log, "hi")
	if code != 0 {
		t.Fatalf("live: exit %d, stderr %q", code, errOut)
	}
	code, replayed, errOut := runArgs(t, "", "-backend", "claude", "-replay", log, "-stream")
	if code != 0 {
		t.Fatalf("replay: exit %d, stderr %q", code, errOut)
	}
	durations := regexp.MustCompile(`"duration_ns":\d+`)
	if a, b := durations.ReplaceAllString(live, ""), durations.ReplaceAllString(replayed, ""); a != b || !strings.Contains(a, `"kind":"result"`) {
		t.Fatalf("live:\n%s\nreplay:\n%s", live, replayed)
	}
	if code, text, _ := runArgs(t, "", "-replay", log); code != 0 || text != "Hello\n" {
		t.Fatalf("plain replay: exit %d, %q", code, text)
	}
}

// TestDoctor: -doctor -json reports every pinned CLI (no model call).
func TestDoctor(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "tools", "clis", "node_modules", ".bin", "claude")); err != nil {
		backendtest.SkipUnlessCI(t, "pinned CLIs not installed (scripts/install-clis.sh)")
	}
	t.Setenv("PATH", "/usr/bin:/bin") // no other claude or codex around
	// No credential of the developer's: a fresh home and none of the
	// variables, then a key for each CLI.
	t.Setenv("HOME", t.TempDir())
	// The CLIs' own temporary files (copilot's compile cache) go to the
	// test's directory, not the machine's /tmp.
	t.Setenv("TMPDIR", t.TempDir())
	for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK",
		"CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN",
		"OPENAI_BASE_URL", "CODEX_HOME", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_GENAI_USE_VERTEXAI",
		"GOOGLE_GENAI_USE_GCA", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GEMINI_CLI_HOME", "OPENCODE_CONFIG",
		"OPENCODE_CONFIG_CONTENT", "OPENCODE_API_KEY", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
		"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_API_KEY",
		"COPILOT_PROVIDER_BEARER_TOKEN", "COPILOT_PROVIDER_API_KEY_COMMAND", "COPILOT_HOME", "GH_CONFIG_DIR",
		"FACTORY_API_KEY", "QWEN_HOME"} {
		t.Setenv(k, "")
	}
	doctor := func() (int, []agentcli.Diagnosis) {
		code, out, errOut := runArgs(t, "", "-doctor", "-json")
		var ds []agentcli.Diagnosis
		if err := json.Unmarshal([]byte(out), &ds); err != nil || len(ds) != len(agentcli.Backends()) {
			t.Fatalf("exit %d, %d diagnoses (%v), stderr %q, stdout %s", code, len(ds), err, errOut, out)
		}
		return code, ds
	}
	// The ACP agents (package acpagent): the generic one has no binary
	// (a warning); claude-acp and codex-acp are not pinned, so not
	// installed (a failure, and exit status 1 either way); the others run
	// a pinned CLI, which answers initialize with its version and, with
	// no credentials, is a warning (an agent may be logged in on its own).
	notInstalled := map[string]bool{"claude-acp": true, "codex-acp": true}
	checkACP := func(d agentcli.Diagnosis) bool {
		switch {
		case d.Backend == acpagent.Name:
			if d.Status != agentcli.DiagnosisWarning || d.Version != "" {
				t.Errorf("generic ACP backend: %+v", d)
			}
		case notInstalled[d.Backend]:
			if d.Status != agentcli.DiagnosisFailure || !strings.Contains(d.Hint, "not found") {
				t.Errorf("not installed: %+v", d)
			}
		case strings.HasSuffix(d.Backend, "-acp"):
			if d.Version == "" || d.Version != d.Tested || d.Status == agentcli.DiagnosisFailure {
				t.Errorf("known ACP agent: %+v", d)
			}
		default:
			return false
		}
		return true
	}
	code, ds := doctor()
	for _, d := range ds {
		if checkACP(d) {
			continue
		}
		if d.Version == "" || d.Version != d.Tested || d.Status != agentcli.DiagnosisFailure || !strings.Contains(d.Hint, "no credentials") {
			t.Errorf("without credentials: %+v", d)
		}
	}
	if code != 1 {
		t.Errorf("without credentials: exit %d", code)
	}
	for _, kv := range fakecli.Credentials() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	code, ds = doctor()
	for _, d := range ds {
		if checkACP(d) {
			continue
		}
		if d.Version == "" || d.Version != d.Tested || d.Status == agentcli.DiagnosisFailure {
			t.Errorf("%+v", d)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (claude-acp and codex-acp are not installed)", code)
	}
}

// TestOfflineRealCLI runs README's main command path: the real claude,
// pinned by scripts/install-clis.sh, against the scripted model server.
func TestOfflineRealCLI(t *testing.T) {
	cli := filepath.Join("..", "..", "tools", "clis", "node_modules", ".bin", "claude")
	if _, err := exec.LookPath(cli); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("claude not installed (%v); run scripts/install-clis.sh", err)
		}
		t.Skip("claude not installed; run scripts/install-clis.sh")
	}
	code, out, errOut := runArgs(t, "", "-cli", cli, "-offline", "-offline-reply", "offline works", "-json", "say hello")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var m struct {
		Text      string `json:"text"`
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Text != "offline works" || m.SessionID == "" {
		t.Fatalf("stdout %q (%v)", out, err)
	}
}

// claudeCLI returns the pinned claude, or skips (fails under CI).
func claudeCLI(t *testing.T) string {
	t.Helper()
	cli := filepath.Join("..", "..", "tools", "clis", "node_modules", ".bin", "claude")
	if _, err := exec.LookPath(cli); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("claude not installed (%v); run scripts/install-clis.sh", err)
		}
		t.Skip("claude not installed; run scripts/install-clis.sh")
	}
	return cli
}

// -chat: one live session, each stdin line a turn, one Result per line with
// -json; under -permission ask the offline model's shell call is asked
// about on stderr and answered by the next stdin line.
func TestChatOffline(t *testing.T) {
	cli := claudeCLI(t)
	stdin := "hello\nplease run the tests\ny\nand run them again\nn\n"
	log := filepath.Join(t.TempDir(), "chat.wire")
	code, out, errOut := runArgs(t, stdin, "-cli", cli, "-offline", "-offline-reply", "done", "-chat", "-json", "-permission", "ask", "-wire-log", log)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// The session's wire log replays into the same results, turn by turn.
	rcode, replayed, rerr := runArgs(t, "", "-backend", "claude", "-replay", log, "-json")
	durations := regexp.MustCompile(`"duration_ns":\d+`)
	if rcode != 0 || durations.ReplaceAllString(replayed, "") != durations.ReplaceAllString(out, "") {
		t.Errorf("replay: exit %d, stderr %q\nlive:\n%s\nreplay:\n%s", rcode, rerr, out, replayed)
	}
	var results []agentcli.Result
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r agentcli.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		results = append(results, r)
	}
	if len(results) != 3 {
		t.Fatalf("%d results for 3 turns:\n%s\nstderr %s", len(results), out, errOut)
	}
	for i, r := range results {
		if r.Text != "done" || r.SessionID == "" || r.SessionID != results[0].SessionID {
			t.Errorf("turn %d: %+v", i+1, r)
		}
	}
	if n := strings.Count(errOut, "agentrun: allow Bash"); n != 2 {
		t.Errorf("%d approval questions, want 2; stderr %q", n, errOut)
	}
}

func TestPermissionFlag(t *testing.T) {
	if code, _, errOut := runArgs(t, "", "-permission", "sometimes", "hi"); code != 2 || !strings.Contains(errOut, "sometimes") {
		t.Fatalf("bad mode: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runArgs(t, "", "-chat", "hi"); code != 2 {
		t.Fatalf("-chat with a prompt argument: exit %d", code)
	}
	cli := claudeCLI(t)
	// A one-shot run under ask: the question is answered from stdin.
	code, out, errOut := runArgs(t, "n\n", "-cli", cli, "-offline", "-offline-reply", "ok", "-permission", "ask", "run the tests")
	if code != 0 || out != "ok\n" || !strings.Contains(errOut, "agentrun: allow Bash") {
		t.Fatalf("ask: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Under deny nothing is asked.
	code, out, errOut = runArgs(t, "", "-cli", cli, "-offline", "-offline-reply", "ok", "-permission", "deny", "run the tests")
	if code != 0 || out != "ok\n" || strings.Contains(errOut, "allow") {
		t.Fatalf("deny: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// -tool-demo: the offline model calls current_time, the host tool runs
// (its output is the tool result); in -chat mode the offline model's
// question is put on stderr and answered by the next stdin line.
func TestToolDemoAndQuestionsOffline(t *testing.T) {
	cli := claudeCLI(t)
	code, out, errOut := runArgs(t, "what time is it?\nplease ask me something\n2\n", "-cli", cli, "-offline", "-offline-reply", "done",
		"-chat", "-stream", "-tool-demo", "-permission", "bypass")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var timeUse, timeResult, askResult bool
	ids := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev agentcli.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch {
		case ev.Kind == agentcli.EventToolUse:
			ids[ev.Tool.ID] = ev.Tool.Name
			timeUse = timeUse || ev.Tool.Name == "current_time"
		case ev.Kind == agentcli.EventToolResult && ids[ev.ToolResult.ID] == "current_time":
			timeResult = !ev.ToolResult.IsError && regexp.MustCompile(`\d\d:\d\d:\d\d UTC`).MatchString(ev.ToolResult.Output)
		case ev.Kind == agentcli.EventToolResult && ids[ev.ToolResult.ID] == agentcli.ToolNameAskUserQuestion:
			askResult = strings.Contains(ev.ToolResult.Output, "Blue")
		}
	}
	if !timeUse || !timeResult {
		t.Errorf("current_time: use %v, result %v; stdout %s", timeUse, timeResult, out)
	}
	if !strings.Contains(errOut, "[Color] Which color do you prefer?") || !strings.Contains(errOut, "2. Blue (cool)") || !askResult {
		t.Errorf("question: answered %v; stderr %q", askResult, errOut)
	}
}

// TestSessionFlags: -list prints the sessions of the current directory
// (claude's transcripts), newest first; -continue in a directory with no
// session fails before the CLI starts; -session-id with -session (no
// -fork) is a bad request.
func TestSessionFlags(t *testing.T) {
	cli, _ := fake(t, okScript...)
	cfg := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", cfg)
	work := t.TempDir()
	t.Chdir(work)
	wd, _ := os.Getwd()
	key := regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(wd, "-")

	code, out, errOut := runArgs(t, "", "-cli", cli, "-continue", "hello")
	if code != 1 || !strings.Contains(errOut, "no session") {
		t.Errorf("-continue with no session: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runArgs(t, "", "-cli", cli, "-session", sess, "-session-id", "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "hello"); code != 1 || !strings.Contains(errOut, "NewSessionID") {
		t.Errorf("-session-id with -session: exit %d, stderr %q", code, errOut)
	}

	proj := filepath.Join(cfg, "projects", key)
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"aaaaaaaa-2222-4333-8444-555555555555", "bbbbbbbb-2222-4333-8444-555555555555"} {
		body := `{"type":"user","message":{"role":"user","content":"prompt ` + id[:1] + `\nsecond line"}}` + "\n"
		p := filepath.Join(proj, id+".jsonl")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(time.Duration(i-5) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut = runArgs(t, "", "-cli", cli, "-list")
	if code != 0 {
		t.Fatalf("-list: exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "bbbbbbbb-") || !strings.HasSuffix(lines[0], "prompt b second line") ||
		!strings.HasPrefix(lines[1], "aaaaaaaa-") {
		t.Errorf("-list printed %q; want b then a, id first, title on one line", out)
	}
	if code, _, _ := runArgs(t, "", "-cli", cli, "-list", "-continue"); code != 2 {
		t.Errorf("-list -continue: exit %d; want 2", code)
	}
}

// -chat's /model and /permission switch the live session; a bad mode is
// reported and the session goes on (exit status 1).
func TestChatSwitch(t *testing.T) {
	cli := claudeCLI(t)
	stdin := "hello\n/model claude-other-model\n/permission bypass\nagain\n/permission sometimes\n"
	code, out, errOut := runArgs(t, stdin, "-cli", cli, "-offline", "-offline-reply", "done", "-chat", "-json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the bad mode); stderr %q", code, errOut)
	}
	for _, want := range []string{"agentrun: model claude-other-model", "agentrun: permission bypass", `unknown permission mode "sometimes"`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %q", want, errOut)
		}
	}
	if n := strings.Count(out, `"text":"done"`); n != 2 {
		t.Errorf("%d results for 2 prompts:\n%s", n, out)
	}
}

// TestACPBackendOffline: -backend acp runs the agent named by -cli with
// the -arg arguments (here the pinned gemini in ACP mode) against the
// scripted model server; without -cli it is a usage error. The known
// agent gemini-acp finds the pinned binary by itself.
func TestACPBackendOffline(t *testing.T) {
	if _, err := exec.LookPath(filepath.Join("..", "..", "tools", "clis", "node_modules", ".bin", "gemini")); err != nil {
		backendtest.SkipUnlessCI(t, "gemini not installed; run scripts/install-clis.sh")
	}
	t.Setenv("PATH", "/usr/bin:/bin") // the pinned gemini, found by agentrun
	for _, args := range [][]string{
		{"-backend", "acp", "-cli", "gemini", "-arg=--acp", "-arg=--skip-trust"},
		{"-backend", "gemini-acp"},
	} {
		args = append(args, "-offline", "-offline-reply", "acp works", "-json", "say hello")
		code, out, errOut := runArgs(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		var m struct {
			Text      string `json:"text"`
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(out), &m); err != nil || m.Text != "acp works" || m.SessionID == "" {
			t.Fatalf("%v: stdout %q (%v)", args, out, err)
		}
	}
	if code, _, errOut := runArgs(t, "", "-backend", "acp", "-offline", "say hello"); code != 2 || !strings.Contains(errOut, "-cli") {
		t.Errorf("-backend acp without -cli: exit %d, stderr %q", code, errOut)
	}
}
