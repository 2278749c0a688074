//go:build unix

package proc

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
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
}
