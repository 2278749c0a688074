package opencode

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
	"github.com/google/go-cmp/cmp"
)

// logBuf is a concurrency-safe log sink.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func setup(t *testing.T, env []string, script ...string) (agentcli.Backend, string, *logBuf) {
	t.Helper()
	logs := &logBuf{}
	b, dir := kit.Setup(t, &agentcli.Options{Env: env, Logger: slog.New(slog.NewTextHandler(logs, nil))}, script...)
	return b, dir, logs
}

func envValue(env []string, key string) (string, int) {
	n, v := 0, ""
	for _, kv := range env {
		if k, val, _ := strings.Cut(kv, "="); k == key {
			n++
			v = val
		}
	}
	return v, n
}

func TestRegistered(t *testing.T) {
	for _, name := range []string{"opencode", "open-code", " OpenCode "} {
		b, err := agentcli.Open(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b.Name() != Name {
			t.Fatalf("%q opened %T", name, b)
		}
	}
	want := agentcli.Capabilities{Thinking: true, Resume: true, SystemPrompt: agentcli.SystemPromptAppend, Cost: true, ToolFilter: true, PortableSessions: true,
		MCP: true, Efforts: agentcli.Efforts(), HostTools: true, Questions: true,
		Hooks:    agentcli.HookSupport{PreToolUse: agentcli.HookAsked, PostToolUse: true, PostOutput: true, UserPromptSubmit: true, Stop: true},
		Sessions: true, Interrupt: true, Interactive: true, PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass,
			agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan},
		Attachments: []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText},
		ForkSession: agentcli.SessionModes{OneShot: true, Live: true}, ContinueSession: agentcli.SessionModes{OneShot: true, Live: true},
		ListSessions: true, ContextUsage: true,
		SetModel: true, SetPermission: []agentcli.PermissionMode{agentcli.PermissionPlan}, Steer: agentcli.SteerNative}
	if diff := cmp.Diff(want, New(nil).Capabilities()); diff != "" {
		t.Fatal(diff)
	}
}

// TestSystemPromptInstructions: the system prompt reaches opencode as an
// "instructions" file listed in a private config named by OPENCODE_CONFIG;
// the caller's OPENCODE_CONFIG_CONTENT (provider wiring) is untouched, the
// prompt goes on stdin verbatim, and the files are gone after the run.
func TestSystemPromptInstructions(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	userCfg := `{"provider":{"mock":{"npm":"@ai-sdk/openai-compatible"}},"permission":"allow"}`
	b, rec, _ := setup(t, []string{"OPENCODE_CONFIG_CONTENT=" + userCfg}, kit.Success("hello", "ses_1")...)
	work := t.TempDir()
	sys := "Be \"brief\".\n--not-a-flag\ncafé 😀"
	req := &agentcli.Request{Prompt: "-rf \"quoted\" prompt\nline 2", SystemPrompt: sys, Dir: work, Model: "mock/m"}
	res, err := b.Run(context.Background(), req)
	if err != nil || res.Text != "hello" || res.SessionID != "ses_1" {
		t.Fatalf("res %+v err %v", res, err)
	}
	r, err := fakecli.ReadRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(buildArgs(req, work), r.Args); diff != "" {
		t.Fatalf("argv (-want +got):\n%s", diff)
	}
	if r.Stdin != req.Prompt || r.Dir != work {
		t.Fatalf("stdin %q dir %q", r.Stdin, r.Dir)
	}
	if v, n := envValue(r.Env, "OPENCODE_CONFIG_CONTENT"); n != 1 || v != userCfg {
		t.Fatalf("OPENCODE_CONFIG_CONTENT = %q (%d entries)", v, n)
	}
	path, n := envValue(r.Env, "OPENCODE_CONFIG")
	if n != 1 || !strings.HasPrefix(filepath.Base(filepath.Dir(path)), "agentcli-run-") {
		t.Fatalf("OPENCODE_CONFIG = %q (%d entries)", path, n)
	}
	c, err := fakecli.ReadOpencodeConfig(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Instructions) != 1 || c.ConfigMode != 0o600 {
		t.Fatalf("config %+v", c)
	}
	for p, content := range c.Instructions {
		if content != sys || c.InstructionModes[p] != 0o600 || !filepath.IsAbs(p) {
			t.Fatalf("instructions %s = %q (mode %o)", p, content, c.InstructionModes[p])
		}
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatalf("temporary directory left behind: %v", err)
	}
}

// TestSystemPromptFallback: a caller's OPENCODE_CONFIG is never replaced;
// the system prompt is prepended to the prompt instead, with a warning.
func TestSystemPromptFallback(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	userCfg := filepath.Join(t.TempDir(), "user.json")
	if err := os.WriteFile(userCfg, []byte(`{"instructions":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, where := range []string{"options", "request"} {
		t.Run(where, func(t *testing.T) {
			var optEnv, reqEnv []string
			if where == "options" {
				optEnv = []string{"OPENCODE_CONFIG=" + userCfg}
			} else {
				reqEnv = []string{"OPENCODE_CONFIG=" + userCfg}
			}
			b, rec, logs := setup(t, optEnv, kit.Success("hello", "ses_1")...)
			_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "the task", SystemPrompt: "be brief", Env: reqEnv})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := fakecli.ReadRecord(rec)
			if r.Stdin != "be brief\n\nthe task" {
				t.Fatalf("stdin %q", r.Stdin)
			}
			if v, _ := envValue(r.Env, "OPENCODE_CONFIG"); v != userCfg {
				t.Fatalf("OPENCODE_CONFIG = %q", v)
			}
			if !strings.Contains(logs.String(), "OPENCODE_CONFIG is already set") {
				t.Fatalf("no warning: %s", logs)
			}
			backendtest.AssertNoLeaks(t, "agentcli-run-")
		})
	}
}

func TestNoSystemPromptNoConfig(t *testing.T) {
	b, rec, _ := setup(t, nil, kit.Success("hello", "ses_1")...)
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	r, _ := fakecli.ReadRecord(rec)
	if _, n := envValue(r.Env, "OPENCODE_CONFIG"); n != 0 {
		t.Fatalf("OPENCODE_CONFIG set without a system prompt")
	}
	wd, _ := os.Getwd()
	if !slices.Contains(r.Args, "--dir="+wd) {
		t.Fatalf("argv %q lacks --dir of the current directory", r.Args)
	}
}

// TestResumeDirectory: a session resumed with another Dir runs in the
// directory it was created in (opencode hangs otherwise); unknown sessions
// use Request.Dir.
func TestResumeDirectory(t *testing.T) {
	for _, mode := range []string{"run", "stream"} {
		t.Run(mode, func(t *testing.T) {
			b, rec, logs := setup(t, nil, kit.Success("hello", "ses_A")...)
			run := func(req *agentcli.Request) []string {
				t.Helper()
				var err error
				if mode == "run" {
					_, err = b.Run(context.Background(), req)
				} else {
					_, err = backendtest.Collect(context.Background(), b, req)
				}
				if err != nil {
					t.Fatal(err)
				}
				r, err := fakecli.ReadRecord(rec)
				if err != nil {
					t.Fatal(err)
				}
				return r.Args
			}
			a, other := t.TempDir(), t.TempDir()
			run(&agentcli.Request{Prompt: "first", Dir: a})
			args := run(&agentcli.Request{Prompt: "again", Dir: a, SessionID: "ses_A"})
			if !slices.Contains(args, "--dir="+a) || !slices.Contains(args, "--session=ses_A") || strings.Contains(logs.String(), "hangs") {
				t.Fatalf("same dir: %q", args)
			}
			args = run(&agentcli.Request{Prompt: "again", Dir: other, SessionID: "ses_A"})
			if !slices.Contains(args, "--dir="+a) || !strings.Contains(logs.String(), "session_dir="+a) {
				t.Fatalf("other dir: %q\n%s", args, logs)
			}
			args = run(&agentcli.Request{Prompt: "again", Dir: other, SessionID: "ses_unknown"})
			if !slices.Contains(args, "--dir="+other) {
				t.Fatalf("unknown session: %q", args)
			}
		})
	}
}

func TestUnsupportedOptionsWarn(t *testing.T) {
	b, rec, logs := setup(t, nil, kit.Success("hello", "ses_1")...)
	req := &agentcli.Request{Prompt: "hi", FallbackModel: "m", AllowedTools: []string{"bash"}}
	if _, err := b.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "allowed/disallowed tools") {
		t.Errorf("a tool list opencode enforces is warned about: %s", logs)
	}
	// A limit opencode cannot enforce is refused, not warned about.
	var ue *agentcli.UnsupportedError
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", MaxTurns: 3}); !errors.As(err, &ue) || ue.Feature != "max turns" {
		t.Errorf("MaxTurns: %v, want an *UnsupportedError", err)
	}
	for _, w := range []string{"fallback model"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("no warning about %s: %s", w, logs)
		}
	}
	r, _ := fakecli.ReadRecord(rec)
	if diff := cmp.Diff(buildArgs(req, r.Dir), r.Args); diff != "" {
		t.Fatal(diff)
	}
}

// TestFakeRejectsLikeOpencode checks the fake flavor against what the real
// opencode 1.18.33 did with the same argv (see flavor_opencode.go).
func TestFakeRejectsLikeOpencode(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--format", "json", "--bogus-flag"},
		{"run", "--format=xml"},
		{"run", "--format", "json", "--format", "json"},
		{"run", "--format", "json", "--dir=/tmp", "--dir=/tmp"},
		{"run", "--format", "json", "-s", "a", "--session=b"},
		{"run", "--format", "json", "--session", "-bogus"},
		{"run", "--format", "json", "--fork"},
		{"run", "--format", "json", "--log-level=TRACE"},
	} {
		if err := fakecli.ParseOpencodeArgs(args); err == nil {
			t.Errorf("fake accepts %q; opencode rejects it", args)
		}
	}
	for _, args := range [][]string{
		{"run", "--format", "json", "--session=-bogus", "--auto", "--auto", "--yolo", "--thinking"},
		{"run", "--format=json", "-m", "a/b", "--fork", "-c", "message", "words"},
		{"run", "--format", "json", "-f", "a.txt", "b.txt", "--variant", "high", "--", "--not-a-flag"},
	} {
		if err := fakecli.ParseOpencodeArgs(args); err != nil {
			t.Errorf("fake rejects %q: %v", args, err)
		}
	}
}
