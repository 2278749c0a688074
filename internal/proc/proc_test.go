//go:build unix

package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func start(t *testing.T, script string, spec Spec) *Process {
	t.Helper()
	spec.Path = "/bin/sh"
	spec.Args = []string{"-c", script}
	spec.Env = os.Environ()
	p, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func readAll(t *testing.T, p *Process) []Line {
	t.Helper()
	var out []Line
	for {
		l, err := p.ReadLine()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
}

// Lines around the limit: exactly max bytes is kept, max+1 is reported as
// too long and skipped, CRLF is trimmed, and a last line without newline
// is still a line.
func TestReadLineLimits(t *testing.T) {
	p := start(t, `printf 'aaaa\nbbbbb\ncc\r\n\nlast'`, Spec{MaxLine: 4})
	got := readAll(t, p)
	want := []Line{{Data: []byte("aaaa")}, {TooLong: 5}, {Data: []byte("cc")}, {Data: []byte{}}, {Data: []byte("last")}}
	if len(got) != len(want) {
		t.Fatalf("lines %q", got)
	}
	for i := range want {
		if string(got[i].Data) != string(want[i].Data) || got[i].TooLong != want[i].TooLong {
			t.Fatalf("line %d = %+v (%q), want %+v", i, got[i], got[i].Data, want[i])
		}
	}
	if e := p.Wait(); e.Code != 0 || e.Stopped {
		t.Fatalf("exit %+v", e)
	}
}

// TestReadLineTo: lines that fit in the buffer's spare capacity are
// copied there, in order, each without spare capacity of its own; a line
// that does not fit is allocated apart and leaves the buffer as it was.
func TestReadLineTo(t *testing.T) {
	p := start(t, `printf 'one\ntwo\r\nthree-is-longer\nfour\n'`, Spec{})
	defer p.Wait()
	buf := make([]byte, 0, 10)
	base := &buf[:1][0]
	var got []string
	for {
		before := len(buf)
		l, nb, err := p.ReadLineTo(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(l.Data))
		inBuf := len(nb) > before
		switch string(l.Data) {
		case "one", "two":
			if !inBuf || &nb[:1][0] != base || &l.Data[0] != &nb[before] || cap(l.Data) > len(nb)-before {
				t.Errorf("line %q: not copied into the buffer's spare capacity (len %d -> %d)", l.Data, before, len(nb))
			}
		default:
			if inBuf {
				t.Errorf("line %q went into a buffer with %d bytes to spare", l.Data, cap(buf)-before)
			}
		}
		buf = nb
	}
	if strings.Join(got, ",") != "one,two,three-is-longer,four" {
		t.Fatalf("lines %q", got)
	}
	if string(buf) != "one\ntwo\r\n" {
		t.Fatalf("buffer holds %q", buf)
	}
}

// After Wait, ReadLine and Buffered see an empty stdout though lines were
// left unread; later runs read only their own output; and lines already
// returned are the caller's, untouched by later runs.
func TestReadAfterWait(t *testing.T) {
	// head writes in blocks of several KiB, so the first read takes many
	// lines at once and run a's later lines wait in the buffer.
	a := start(t, `yes run-a | head -n 2000`, Spec{})
	first, err := a.ReadLine()
	if err != nil || string(first.Data) != "run-a" {
		t.Fatalf("first line %q, %v", first.Data, err)
	}
	if a.Buffered() == 0 {
		t.Fatal("nothing of run a left in the buffer")
	}
	a.Wait()
	if n := a.Buffered(); n != 0 {
		t.Fatalf("Buffered after Wait = %d", n)
	}
	if l, err := a.ReadLine(); err != io.EOF {
		t.Fatalf("ReadLine after Wait = %q, %v; want io.EOF", l.Data, err)
	}
	for range 3 {
		b := start(t, `echo run-b; echo done`, Spec{})
		got := readAll(t, b)
		if len(got) != 2 || string(got[0].Data) != "run-b" || string(got[1].Data) != "done" {
			t.Fatalf("run b read %q", got)
		}
		b.Wait()
	}
	if string(first.Data) != "run-a" {
		t.Fatalf("a returned line changed to %q", first.Data)
	}
}

// A line far longer than bufio's buffer is reassembled whole.
func TestReadLineLong(t *testing.T) {
	p := start(t, `head -c 3000000 /dev/zero | tr '\0' x; echo; echo after`, Spec{})
	got := readAll(t, p)
	if len(got) != 2 || len(got[0].Data) != 3000000 || string(got[1].Data) != "after" {
		t.Fatalf("%d lines, first %d bytes", len(got), len(got[0].Data))
	}
}

func TestStdinEnds(t *testing.T) {
	// cat ends only when its stdin does.
	p := start(t, `cat`, Spec{Stdin: []byte("one\ntwo")})
	got := readAll(t, p)
	if len(got) != 2 || string(got[1].Data) != "two" {
		t.Fatalf("lines %q", got)
	}
	// No stdin given: /dev/null, so cat ends at once.
	p = start(t, `cat; echo done`, Spec{})
	if got := readAll(t, p); len(got) != 1 || string(got[0].Data) != "done" {
		t.Fatalf("lines %q", got)
	}
}

func TestStderrTail(t *testing.T) {
	p := start(t, `head -c 100000 /dev/zero | tr '\0' e >&2; echo THE-END >&2; exit 7`, Spec{StderrTail: 64})
	readAll(t, p)
	e := p.Wait()
	if e.Code != 7 || len(e.Stderr) != 64 || !strings.HasSuffix(e.Stderr, "THE-END\n") {
		t.Fatalf("exit %d, stderr tail %d bytes %q", e.Code, len(e.Stderr), e.Stderr)
	}
}

// Stop: SIGTERM to the group, SIGKILL after the grace period when ignored.
func TestStopKillLadder(t *testing.T) {
	p := start(t, `trap '' TERM; echo ready; while :; do sleep 1; done`, Spec{KillGrace: 200 * time.Millisecond})
	if l, err := p.ReadLine(); err != nil || string(l.Data) != "ready" {
		t.Fatalf("%q %v", l.Data, err)
	}
	t0 := time.Now()
	p.Stop()
	e := p.Wait()
	if !e.Stopped || e.Signal.String() != "killed" {
		t.Fatalf("exit %+v", e)
	}
	if d := time.Since(t0); d < 200*time.Millisecond {
		t.Fatalf("killed after %v: SIGKILL before the grace period", d)
	}
	if pids := liveGroupMembers(p.Pid()); len(pids) > 0 {
		t.Fatalf("process group %d still has live members %v", p.Pid(), pids)
	}
}

// liveGroupMembers lists the processes of group pgid that are not zombies
// (a killed orphan stays a zombie until init reaps it). A process that was
// just killed may still be tearing down for a moment after its pipes
// closed, so members are looked for again for up to two seconds.
func liveGroupMembers(pgid int) []string {
	var out []string
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if out = groupMembers(pgid); len(out) == 0 {
			break
		}
	}
	return out
}

func groupMembers(pgid int) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			out = append(out, e.Name())
		}
	}
	return out
}

// Something the CLI leaves running in its group is killed when it exits.
func TestLeftoversKilledOnExit(t *testing.T) {
	p := start(t, `sleep 60 & echo started`, Spec{})
	readAll(t, p)
	p.Wait()
	if pids := liveGroupMembers(p.Pid()); len(pids) > 0 {
		t.Fatalf("leftover processes %v alive", pids)
	}
}

func TestStartError(t *testing.T) {
	_, err := Start(context.Background(), Spec{Path: "/nonexistent/cli"})
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
	// A context that has ended starts nothing and says so.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, Spec{Path: "/bin/true"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if _, err := Start(context.Background(), Spec{Path: "/bin/cat", Stdin: []byte("x"), KeepStdin: true}); err == nil {
		t.Fatal("Stdin together with KeepStdin accepted")
	}
}

// slack is added to every "returns within" bound below: those bounds guard
// against runs that never return, on a machine that may be slow.
const slack = 2 * time.Second

// pidDir returns a directory for escapees to write their pids to, and
// kills the escapees started with it (killEscapees) when the test ends.
func pidDir(t *testing.T) string {
	dir := t.TempDir()
	t.Cleanup(func() { killEscapees(dir) })
	return dir
}

// escapeeMarker is set in the environment of every escapee the tests start
// (to the pid directory), so that cleanup kills those and only those.
const escapeeMarker = "PROC_TEST_ESCAPEE"

func readPids(dir string) []int {
	var out []int
	files, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// waitForPids waits until n pid files exist in dir.
func waitForPids(t *testing.T, dir string, n int) []int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if pids := readPids(dir); len(pids) >= n {
			return pids
		}
	}
	t.Fatalf("escapees did not start")
	return nil
}

// untagged returns shell code that starts cmd (a shell command) in a new
// session with an environment holding only escapeeMarker, an escapee the
// tag scan cannot find,
// and waits until it has left the group. Its pid goes to dir/name.pid. It
// inherits stdin (fd 3 works around the /dev/null that sh gives background
// jobs), stdout and stderr.
func untagged(dir, name, cmd string) string {
	f := dir + "/" + name + ".pid"
	return fmt.Sprintf(`exec 3<&0; env -i %s=%s setsid /bin/sh -c 'echo $$ > %s.tmp && mv %s.tmp %s; %s' <&3 & while [ ! -s %s ]; do sleep 0.01; done;`, escapeeMarker, dir, f, f, f, cmd, f)
}

// The CLI writes 5 MB in 1000-byte lines and exits while the consumer reads
// one line per millisecond, with a 10 ms grace: what sat in the pipe when
// the CLI exited (about 64 KB, 65 ms of reading) still arrives, in order.
func TestSlowConsumerLosesNothing(t *testing.T) {
	const lines, width = 5000, 1000
	script := fmt.Sprintf(`awk 'BEGIN { pad = sprintf("%%%dd", 0); gsub(/ /, "x", pad); for (i = 0; i < %d; i++) printf "%%06d%%s\n", i, pad }'`, width-6, lines)
	p := start(t, script, Spec{KillGrace: 10 * time.Millisecond})
	n := 0
	for {
		l, err := p.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%06d", n); len(l.Data) != width || string(l.Data[:6]) != want {
			t.Fatalf("line %d: %d bytes starting %q", n, len(l.Data), l.Data[:min(len(l.Data), 6)])
		}
		n++
		time.Sleep(time.Millisecond)
	}
	if n != lines {
		t.Fatalf("got %d of %d lines", n, lines)
	}
	if e := p.Wait(); e.Code != 0 || e.HeldOpen {
		t.Fatalf("exit %+v", e)
	}
}

// An escaped descendant (new session, no tag) that keeps writing to stdout
// cannot keep reading alive beyond KillGrace after the CLI's exit.
func TestEscapedWriterBounded(t *testing.T) {
	dir := pidDir(t)
	const grace = 300 * time.Millisecond
	p := start(t, untagged(dir, "w", `while :; do echo tick; sleep 0.01; done`)+` echo done`, Spec{KillGrace: grace})
	waitForPids(t, dir, 1)
	t0 := time.Now()
	readAll(t, p)
	e := p.Wait()
	if d := time.Since(t0); d > grace+slack {
		t.Fatalf("reading went on %v after the exit", d)
	}
	if !e.HeldOpen || e.Code != 0 {
		t.Fatalf("exit %+v; want HeldOpen", e)
	}
}

// The same on stderr: a daemon writing to it cannot hold up Wait.
func TestEscapedStderrWriterBounded(t *testing.T) {
	dir := pidDir(t)
	const grace = 300 * time.Millisecond
	p := start(t, untagged(dir, "w", `while :; do echo tick >&2; sleep 0.01; done`)+` echo done`, Spec{KillGrace: grace})
	waitForPids(t, dir, 1)
	t0 := time.Now()
	readAll(t, p)
	p.Wait()
	if d := time.Since(t0); d > grace+slack {
		t.Fatalf("Wait returned %v after the exit", d)
	}
}

// After Stop, ReadLine returns EOF at once, although the CLI ignores
// SIGTERM and floods stdout; Wait returns once SIGKILL has done its work,
// even with an escapee writing to stdout.
func TestStopEndsReading(t *testing.T) {
	dir := pidDir(t)
	const grace = 300 * time.Millisecond
	p := start(t, untagged(dir, "w", `while :; do echo tick; done`)+` trap '' TERM; while :; do echo flood; done`, Spec{KillGrace: grace})
	waitForPids(t, dir, 1)
	for { // the trap is set once flooding starts
		l, err := p.ReadLine()
		if err != nil {
			t.Fatal(err)
		}
		if string(l.Data) == "flood" {
			break
		}
	}
	t0 := time.Now()
	p.Stop()
	if l, err := p.ReadLine(); err != io.EOF {
		t.Fatalf("ReadLine after Stop = %q, %v; want EOF", l.Data, err)
	}
	e := p.Wait()
	if d := time.Since(t0); d > grace+100*time.Millisecond+slack {
		t.Fatalf("Wait returned %v after Stop", d)
	}
	if !e.Stopped || e.Signal != syscall.SIGKILL {
		t.Fatalf("exit %+v", e)
	}
}

// A stop while reading is held open after the exit (long grace) ends it at
// once.
func TestStopAfterExit(t *testing.T) {
	dir := pidDir(t)
	p := start(t, untagged(dir, "s", `exec sleep 60`)+` echo done`, Spec{KillGrace: time.Minute})
	waitForPids(t, dir, 1)
	if l, err := p.ReadLine(); err != nil || string(l.Data) != "done" {
		t.Fatalf("%q %v", l.Data, err)
	}
	time.AfterFunc(300*time.Millisecond, p.Stop)
	t0 := time.Now()
	if _, err := p.ReadLine(); err != io.EOF {
		t.Fatalf("err %v", err)
	}
	if e := p.Wait(); e.Code != 0 || !e.Stopped {
		t.Fatalf("exit %+v", e)
	}
	if d := time.Since(t0); d > 300*time.Millisecond+slack {
		t.Fatalf("returned %v after the stop", d)
	}
}

// Every group signal precedes the reap: the SIGKILL timer, a Stop after
// the exit and the kill at exit never reach a group id that may have been
// freed.
func TestNoGroupSignalAfterReap(t *testing.T) {
	var mu sync.Mutex
	reaped := map[int]bool{}
	var late []string
	sent := map[int][]syscall.Signal{}
	testHookSignal = func(pgid int, sig syscall.Signal) {
		mu.Lock()
		defer mu.Unlock()
		if reaped[pgid] {
			late = append(late, fmt.Sprintf("%v to group %d after its reap", sig, pgid))
		}
		sent[pgid] = append(sent[pgid], sig)
	}
	testHookReap = func(pid int) {
		mu.Lock()
		defer mu.Unlock()
		reaped[pid] = true
	}
	t.Cleanup(func() { testHookSignal, testHookReap = nil, nil })

	const grace = 50 * time.Millisecond
	// The CLI leaves a child in its group and exits: killed at exit.
	p := start(t, `sleep 60 & echo x`, Spec{KillGrace: grace})
	readAll(t, p)
	p.Wait()
	p.Stop() // after Wait: must not signal
	mu.Lock()
	if got := sent[p.Pid()]; len(got) != 1 || got[0] != syscall.SIGKILL {
		t.Errorf("signals to the group %v; want one SIGKILL at exit", got)
	}
	mu.Unlock()
	// Stopped; the CLI dies on SIGTERM at once, long before the SIGKILL
	// timer would fire.
	for i := 0; i < 20; i++ {
		p := start(t, `echo up; exec sleep 60`, Spec{KillGrace: grace})
		p.ReadLine()
		p.Stop()
		p.Wait()
	}
	time.Sleep(3 * grace) // timers that were not stopped would fire now
	mu.Lock()
	defer mu.Unlock()
	if len(late) > 0 {
		t.Fatalf("signals after the reap: %v", late)
	}
	if len(reaped) != 21 {
		t.Fatalf("%d reaps seen; want 21", len(reaped))
	}
}

// KeepStdin: the caller writes stdin while the CLI runs; Close gives EOF.
func TestKeepStdin(t *testing.T) {
	p := start(t, `cat`, Spec{KeepStdin: true})
	in := p.Stdin()
	if in == nil {
		t.Fatal("Stdin() = nil with KeepStdin")
	}
	for _, w := range []string{"one", "two"} {
		if _, err := io.WriteString(in, w+"\n"); err != nil {
			t.Fatal(err)
		}
		if l, err := p.ReadLine(); err != nil || string(l.Data) != w {
			t.Fatalf("echo %q %v; want %q", l.Data, err, w)
		}
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if err := in.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := p.ReadLine(); err != io.EOF {
		t.Fatalf("after Close: %v; want EOF (cat saw EOF)", err)
	}
	if _, err := in.Write([]byte("x")); !errors.Is(err, os.ErrClosed) && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("write after Close: %v", err)
	}
	if e := p.Wait(); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
	if _, err := in.Write([]byte("x")); !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, os.ErrClosed) {
		t.Fatalf("write after exit: %v", err)
	}

	if q := start(t, `true`, Spec{}); q.Stdin() != nil {
		t.Fatal("Stdin() non-nil without KeepStdin")
	}
}

// A write stuck on a full stdin pipe (the CLI does not read it, and an
// escapee keeps the read end open) fails once the CLI exits, instead of
// blocking forever.
func TestKeepStdinWriteAfterExit(t *testing.T) {
	dir := pidDir(t)
	p := start(t, untagged(dir, "h", `exec sleep 60`)+` sleep 0.3`, Spec{KeepStdin: true, KillGrace: 100 * time.Millisecond})
	waitForPids(t, dir, 1)
	res := make(chan error, 1)
	go func() {
		_, err := p.Stdin().Write(make([]byte, 4<<20))
		res <- err
	}()
	select {
	case err := <-res:
		if !errors.Is(err, os.ErrProcessDone) {
			t.Fatalf("write: %v; want os.ErrProcessDone", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("write still blocked 10s after the CLI exited")
	}
	if _, err := p.Stdin().Write([]byte("x")); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("write: %v; want os.ErrProcessDone", err)
	}
	p.Wait()
}

// Stop closes stdin.
func TestStopClosesStdin(t *testing.T) {
	p := start(t, `cat`, Spec{KeepStdin: true})
	p.Stop()
	if _, err := p.Stdin().Write([]byte("x")); !errors.Is(err, os.ErrClosed) && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("write after Stop: %v", err)
	}
	p.Wait()
}

// Start tags the environment with a fresh run id, replacing one inherited.
func TestRunTag(t *testing.T) {
	spec := Spec{Path: "/bin/sh", Args: []string{"-c", "echo $" + EnvRunID}, Env: []string{EnvRunID + "=outer", "A=1"}}
	var ids []string
	for i := 0; i < 2; i++ {
		p, err := Start(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := p.ReadLine()
		p.Wait()
		ids = append(ids, string(l.Data))
	}
	if len(ids[0]) != 32 || ids[0] == ids[1] || ids[0] == "outer" {
		t.Fatalf("run ids %q", ids)
	}
}
