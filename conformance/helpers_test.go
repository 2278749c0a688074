package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// tagKey is the environment variable that marks every process of one run.
// Descendants inherit it, so /proc/*/environ finds all of them.
const tagKey = "AGENTCLI_CONFORMANCE_RUN"

// killGrace is the Options.KillGrace of every backend under test.
const killGrace = 2 * time.Second

// cliPath returns the pinned binary of cli: <repo root>/tools/clis/node_modules/.bin/<cli>.
// A missing binary skips the test, or fails it under CI=true.
func cliPath(t testing.TB, cli string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "tools", "clis", "node_modules", ".bin", cli))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		msg := fmt.Sprintf("%s CLI not installed at %s: run scripts/install-clis.sh", cli, p)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (a missing CLI is a failure under CI)")
		}
		t.Skip(msg)
	}
	return p
}

// logBuffer collects a backend's log output for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// openBackend opens the registered backend cli running the pinned binary. A
// backend that is not registered (its package is not imported because it
// does not exist yet) skips the test, or fails it under CI=true.
func openBackend(t testing.TB, cli string, logs *logBuffer) agentcli.Backend {
	t.Helper()
	path := cliPath(t, cli)
	opts := &agentcli.Options{Path: path, KillGrace: killGrace}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	b, err := agentcli.Open(cli, opts)
	if errors.Is(err, agentcli.ErrUnknownBackend) {
		msg := fmt.Sprintf("backend %q is not registered: import its package in conformance_test.go (%v)", cli, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	return b
}

// newTag returns a random run tag.
func newTag() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// procsWithTag lists the live processes whose environment holds tagKey=tag,
// as "pid cmdline" strings. Zombies have an empty environ and are not listed:
// they are dead, only not yet reaped by their parent.
func procsWithTag(tag string) []string {
	needle := []byte("\x00" + tagKey + "=" + tag + "\x00")
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || len(env) == 0 {
			continue
		}
		env = append([]byte{0}, env...)
		if !bytes.HasSuffix(env, []byte{0}) {
			env = append(env, 0)
		}
		if !bytes.Contains(env, needle) {
			continue
		}
		out = append(out, procLine(e.Name()))
	}
	return out
}

// procLine describes process pid as "pid cmdline".
func procLine(pid string) string {
	cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
	return pid + " " + strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
}

// pgidOf returns the process group of pid, or -1.
func pgidOf(pid int) int { return statField(pid, 2) }

// ppidOf returns the parent of pid, or -1.
func ppidOf(pid int) int { return statField(pid, 1) }

// statField returns the number in field i of statFields(pid), or -1.
func statField(pid, i int) int {
	f := statFields(pid)
	if len(f) <= i {
		return -1
	}
	n, err := strconv.Atoi(f[i])
	if err != nil {
		return -1
	}
	return n
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name (state, ppid, pgrp, ...), or nil.
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// assertNoProcs fails t if a process of the run tagged tag is still alive.
func assertNoProcs(t testing.TB, tag string) {
	t.Helper()
	if left := procsWithTag(tag); len(left) > 0 {
		t.Errorf("processes of the run still alive after it returned:\n%s", strings.Join(left, "\n"))
	}
}

// env is one scenario's wiring: a server, the CLI wired to it, a run tag.
type env struct {
	t   testing.TB
	cli string
	srv *agentclitest.Server
	w   *agentclitest.Wiring
}

// newEnv starts a scripted server for cli with turns, wires a fresh home to
// it, and puts a README.md (with a marker no model request may carry) into
// the working directory.
func newEnv(t testing.TB, cli string, turns ...agentclitest.Turn) *env {
	t.Helper()
	srv := agentclitest.NewServer(turns...)
	t.Cleanup(srv.Close)
	w, err := srv.Wire(cli, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Dir, "README.md"), []byte(readmeText), 0o644); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, cli: cli, srv: srv, w: w}
}

// readmeMarker is in the README.md of every working directory; a request
// that carries it means the CLI read the file into the conversation.
const readmeMarker = "README-MARKER-7c1f0e5a"

const readmeText = "# Conformance work dir\n\n" + readmeMarker + "\n"

// request returns a Request wired to the env's server, tagged with a fresh
// run tag (returned too).
func (e *env) request(prompt string) (*agentcli.Request, string) {
	tag := newTag()
	env := append(append([]string(nil), e.w.Env...), tagKey+"="+tag)
	return &agentcli.Request{
		Prompt:    prompt,
		Env:       env,
		ExtraArgs: append([]string(nil), e.w.Args...),
		Dir:       e.w.Dir,
		Timeout:   runTimeout,
	}, tag
}

// runTimeout bounds every ordinary run; generous, since the machine may be
// busy, but far below the go test timeout.
const runTimeout = 2 * time.Minute

// main returns the model calls that consumed scripted turns (not utility
// calls such as gemini's router or opencode's title generation).
func (e *env) main() []agentclitest.ModelRequest {
	var out []agentclitest.ModelRequest
	for _, r := range e.srv.Requests() {
		if !r.Utility {
			out = append(out, r)
		}
	}
	return out
}

// lastMain returns the last main model call, failing t if there is none.
func (e *env) lastMain() agentclitest.ModelRequest {
	e.t.Helper()
	m := e.main()
	if len(m) == 0 {
		e.t.Fatalf("no main model request reached the server; requests: %s", describe(e.srv.Requests()))
	}
	return m[len(m)-1]
}

// describe summarizes recorded requests for failure messages.
func describe(reqs []agentclitest.ModelRequest) string {
	var b strings.Builder
	for i, r := range reqs {
		fmt.Fprintf(&b, "\n  #%d %s %s model=%q utility=%v messages=%d toolResults=%d", i, r.Method, r.Path, r.Model, r.Utility, len(r.Messages), len(r.ToolResults))
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// run runs req with b.Run and checks afterwards that no process is left.
func run(t testing.TB, b agentcli.Backend, req *agentcli.Request, tag string) (*agentcli.Result, time.Duration, error) {
	t.Helper()
	start := time.Now()
	res, err := b.Run(context.Background(), req)
	d := time.Since(start)
	assertNoProcs(t, tag)
	return res, d, err
}

// stream runs req with b.Stream, collects its events and the final error,
// and checks afterwards that no process is left.
func stream(t testing.TB, ctx context.Context, b agentcli.Backend, req *agentcli.Request, tag string) ([]agentcli.Event, error) {
	t.Helper()
	var evs []agentcli.Event
	var err error
	for ev, e := range b.Stream(ctx, req) {
		if e != nil {
			err = e
			break
		}
		evs = append(evs, ev)
	}
	assertNoProcs(t, tag)
	return evs, err
}

// errSummary describes err with its dynamic type, for logs.
func errSummary(err error) string {
	if err == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%T: %v", err, err)
}

// hasMessage reports whether msgs has a part with role and exactly text.
func hasMessage(msgs []agentclitest.Message, role, text string) bool {
	for _, m := range msgs {
		if m.Role == role && m.Text == text {
			return true
		}
	}
	return false
}

// shorten abbreviates s for failure messages.
func shorten(s string) string {
	if len(s) > 300 {
		return fmt.Sprintf("%q...(%d bytes)", s[:300], len(s))
	}
	return strconv.Quote(s)
}

// hasText reports whether msgs has a part with role that contains text.
func hasText(msgs []agentclitest.Message, role, text string) bool {
	for _, m := range msgs {
		if m.Role == role && strings.Contains(m.Text, text) {
			return true
		}
	}
	return false
}
