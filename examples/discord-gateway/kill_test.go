package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentcli/agentcli/agentclitest"
)

// The kill tests build the gateway's binary, run it as an operator does
// (a subprocess, its configuration in its environment) against the fake
// Discord, kill it with SIGKILL in the middle of an answer, and start it
// again on the same state directory.

var built struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// gatewayBinary builds the program once per test run.
func gatewayBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "discord-gateway-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "discord-gateway")
		cmd := exec.Command("go", "build", "-o", built.path, ".")
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.path
}

// fakeClaude is a stand-in for claude that speaks just enough of its
// stream-json protocol (agentcli's claude backend runs it, one-shot or as
// a live session): it answers initialize, and each user message with an
// init, a text and a result line; a message that says "hang" starts a
// child that sleeps, and waits for it. It records its environment in
// $FAKE_DIR/env.<pid>.
const fakeClaude = `#!/bin/sh
[ -n "$FAKE_DIR" ] && env > "$FAKE_DIR/env.$$"
sid="fake-session-1"
while IFS= read -r line; do
	case "$line" in
	*'"subtype":"initialize"'*)
		id=$(printf '%s\n' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
		printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{}}}\n' "$id"
		;;
	*'"type":"user"'*)
		printf '{"type":"system","subtype":"init","session_id":"%s","model":"fake","tools":[]}\n' "$sid"
		case "$line" in
		*hang*)
			sleep 987 &
			wait
			;;
		esac
		printf '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"fake answer"}]},"session_id":"%s"}\n' "$sid"
		printf '{"type":"result","subtype":"success","is_error":false,"result":"fake answer","session_id":"%s","terminal_reason":"completed","num_turns":1}\n' "$sid"
		;;
	esac
done
`

// proc is a process found in /proc.
type proc struct {
	pid     int
	cmdline string
	env     string
}

// tagged returns the live processes whose environment carries tag.
func tagged(tag string) []proc {
	names, _ := filepath.Glob("/proc/[0-9]*")
	var out []proc
	for _, n := range names {
		pid, _ := strconv.Atoi(filepath.Base(n))
		env, err := os.ReadFile(n + "/environ")
		if err != nil || !bytes.Contains(env, []byte(envTag+"="+tag)) || !alive(pid) {
			continue
		}
		cmd, _ := os.ReadFile(n + "/cmdline")
		out = append(out, proc{pid, string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})), string(env)})
	}
	return out
}

// alive reports whether pid is a process that is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z' && b[i+2] != 'X'
}

// parent returns the parent of process pid, or 0.
func parent(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// subprocess is the gateway running as its own process.
type subprocess struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan error
}

func startSubprocess(t *testing.T, bin string, env []string) *subprocess {
	t.Helper()
	s := &subprocess{cmd: exec.Command(bin), stderr: &syncBuffer{}, done: make(chan error, 1)}
	s.cmd.Env = env
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	return s
}

// TestKill9 (finding 6): the gateway killed with SIGKILL while a CLI
// answers takes the CLI with it at once (the parent-death signal); what
// the CLI started (a tool's child) is killed when the gateway starts
// again; the message that was being answered gets its "Working…" replaced
// by a request to send it again; the message that was waiting is
// answered. The CLI is agentcli's claude backend running a stand-in
// script, as a live session (the default) and one-shot; its recorded
// environment has no DISCORD_TOKEN.
func TestKill9(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal and the sweep are Linux only")
	}
	bin := gatewayBinary(t)
	for _, live := range []bool{true, false} {
		t.Run("live="+strconv.FormatBool(live), func(t *testing.T) {
			dir := t.TempDir()
			cli := filepath.Join(dir, "claude")
			if err := os.WriteFile(cli, []byte(fakeClaude), 0o755); err != nil {
				t.Fatal(err)
			}
			fake := filepath.Join(dir, "fake")
			os.Mkdir(fake, 0o700)
			env := []string{"BACKEND_CLI_PATH=" + cli, "AGENT_ENV=FAKE_DIR", "FAKE_DIR=" + fake,
				"LIVE_SESSIONS=" + strconv.FormatBool(live)}
			killAndRestart(t, bin, dir, env, func() {
				// The CLI's environment, as the kernel gave it.
				files, _ := filepath.Glob(filepath.Join(fake, "env.*"))
				if len(files) == 0 {
					t.Fatal("the stand-in CLI did not run")
				}
				b, _ := os.ReadFile(files[0])
				for _, never := range []string{"DISCORD_TOKEN", "test-token", "HOST_SECRET"} {
					if bytes.Contains(b, []byte(never)) {
						t.Errorf("the CLI's environment has %s:\n%s", never, b)
					}
				}
				if !bytes.Contains(b, []byte("PATH=")) || !bytes.Contains(b, []byte("FAKE_DIR=")) {
					t.Errorf("the CLI's environment lacks PATH or the AGENT_ENV addition:\n%s", b)
				}
			}, "sleep 987", "fake answer")
		})
	}
}

// TestKill9RealCLI is TestKill9 on the real claude CLI, against the
// scripted model server: the model runs "tail -f /dev/null" through
// claude's Bash tool when the gateway is killed (claude refuses a
// standalone long sleep). Run it in a network namespace (as
// scripts/test.sh does): nothing may leave loopback.
func TestKill9RealCLI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal and the sweep are Linux only")
	}
	requireCLI(t, "claude")
	cli, err := resolveCLI(installedCLI("claude"), "claude")
	if err != nil {
		t.Fatal(err)
	}
	bin := gatewayBinary(t)
	dir := t.TempDir()
	srv := agentclitest.NewServer(agentclitest.Turn{Shell: "tail -f /dev/null"}, agentclitest.Turn{Text: "second answer"})
	defer srv.Close()
	home := filepath.Join(dir, "home")
	w, err := srv.Wire("claude", home)
	if err != nil {
		t.Fatal(err)
	}
	env := append([]string{"BACKEND_CLI_PATH=" + cli, "WORKING_DIR=" + w.Dir, "QUERY_TIMEOUT=120"}, w.Env...)
	var names []string
	for _, kv := range w.Env {
		names = append(names, strings.SplitN(kv, "=", 2)[0])
	}
	// What the allow-list does not pass already, the operator adds.
	env = append(env, "AGENT_ENV="+strings.Join(names, ","))
	killAndRestart(t, bin, dir, env, func() {
		for _, p := range tagged(readTag(t, filepath.Join(dir, "state"))) {
			if strings.Contains(p.env, "DISCORD_TOKEN") {
				t.Errorf("process %d (%s) has DISCORD_TOKEN", p.pid, p.cmdline)
			}
		}
	}, "tail -f /dev/null", "second answer")
}

func readTag(t *testing.T, state string) string {
	b, err := os.ReadFile(filepath.Join(state, "tag"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// killAndRestart runs the kill test: the gateway (with env on top of the
// test's) answers "hang" (a CLI whose child, found by its command line
// child, runs until killed) and has "second" waiting; checkEnv runs while
// the CLI is up; then SIGKILL, restart, and the checks. second is the
// answer the waiting message gets.
func killAndRestart(t *testing.T, bin, dir string, env []string, checkEnv func(), child, second string) {
	f := newFakeDiscord(t)
	f.channel("c1", 0)
	state := filepath.Join(dir, "state")
	full := append(progEnv(f, state, "AGENT_BACKEND=claude", "BACKEND_CLI_PATH=", "THREADS=false",
		"PERMISSION_MODE=bypass", "SLASH_COMMANDS=false", "HOME="+dir,
		// A credential, or agentcli refuses to start claude at all.
		"ANTHROPIC_API_KEY=stand-in-key"), env...)
	g := startSubprocess(t, bin, full)
	waitFor(t, "the gateway to connect", func() bool { i, _, _ := f.counts(); return i == 1 })
	tag := readTag(t, state)
	t.Cleanup(func() { sweep(tag) })

	hang := nextSnowflake()
	f.dispatch("MESSAGE_CREATE", message(hang, "c1", "alice", "please hang"))
	var sleeper, cli proc
	waitFor(t, "the CLI's sleeping child", func() bool {
		for _, p := range tagged(tag) {
			switch {
			case parent(p.pid) == g.cmd.Process.Pid:
				cli = p
			case strings.HasPrefix(p.cmdline, child):
				sleeper = p
			}
		}
		return sleeper.pid != 0 && cli.pid != 0
	})
	waiting := nextSnowflake()
	f.dispatch("MESSAGE_CREATE", message(waiting, "c1", "alice", "second"))
	waitFor(t, "the placeholder", func() bool { _, ok := f.placeholder(hang); return ok })
	waitFor(t, "the waiting message in the journal", func() bool {
		_, err := os.Stat(filepath.Join(state, "inflight", "m-"+waiting+".json"))
		return err == nil
	})
	checkEnv()
	if err := g.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-g.done
	g.done <- nil // for the cleanup
	waitFor(t, "the CLI to die with the gateway", func() bool { return !alive(cli.pid) })
	t.Logf("the CLI was gone %v after the gateway's SIGKILL", time.Since(killed).Round(time.Millisecond))
	if !alive(sleeper.pid) {
		t.Log("the CLI's child died too (nothing left for the sweep)")
	}

	restarted := time.Now()
	g2 := startSubprocess(t, bin, full)
	waitFor(t, "the restarted gateway to connect", func() bool { i, _, _ := f.counts(); return i == 2 })
	waitFor(t, "the sweep of what the killed gateway left", func() bool { return !alive(sleeper.pid) })
	t.Logf("the CLI's child was gone %v after the restart", time.Since(restarted).Round(time.Millisecond))
	if left := tagged(tag); len(left) > 0 {
		for _, p := range left {
			if strings.HasPrefix(p.cmdline, child) {
				t.Errorf("left running after the restart: %d %s", p.pid, p.cmdline)
			}
		}
	}
	p := &program{t: t, f: f}
	got := p.answer(hang)
	if !strings.Contains(got, "restarted") || !strings.Contains(got, "send it again") {
		t.Errorf("the interrupted message shows %q", got)
	}
	if got := p.answer(waiting); !strings.Contains(got, second) {
		t.Errorf("the waiting message was answered %q, want %q", got, second)
	}
	// A clean stop: SIGTERM, exit 0, no CLI left.
	g2.cmd.Process.Signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case err := <-g2.done:
		g2.done <- err
		if err != nil {
			t.Errorf("after SIGTERM: %v\n%s", err, g2.stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("no exit after SIGTERM")
	}
	if left := tagged(tag); len(left) > 0 {
		t.Errorf("processes left after a clean stop: %v", left)
	}
	if files, _ := filepath.Glob(filepath.Join(state, "inflight", "*.json")); len(files) != 0 {
		t.Errorf("journal entries left: %v", files)
	}
	if t.Failed() {
		t.Logf("first run:\n%s\nsecond run:\n%s", g.stderr.String(), g2.stderr.String())
	}
}
