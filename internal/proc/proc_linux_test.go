package proc

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tagged returns the live processes whose environment carries EnvRunID=tag.
func tagged(tag string) []int {
	want := []byte(EnvRunID + "=" + tag)
	var out []int
	names, _ := os.ReadDir("/proc")
	for _, n := range names {
		pid, err := strconv.Atoi(n.Name())
		if err != nil {
			continue
		}
		if hasEntry("/proc/"+n.Name()+"/environ", want) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// bystander starts sleep 60 outside any run, with env, and returns its pid.
func bystander(t *testing.T, env ...string) int {
	t.Helper()
	c := exec.Command("sleep", "60")
	c.Env = env
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c.Process.Pid
}

// taggedEscapee returns shell code that starts cmd in a new session (the
// environment, and so the tag, inherited) and waits until it has left the
// group; its pid goes to dir/name.pid.
func taggedEscapee(dir, name, cmd string) string {
	f := dir + "/" + name + ".pid"
	return fmt.Sprintf(`%s=%s setsid /bin/sh -c 'echo $$ > %s.tmp && mv %s.tmp %s; %s' & while [ ! -s %s ]; do sleep 0.01; done;`, escapeeMarker, dir, f, f, f, cmd, f)
}

// killEscapees kills the escapees started with pid directory dir, found by
// escapeeMarker, never a recorded pid that may have been reused.
func killEscapees(dir string) {
	killMatching([]byte(escapeeMarker+"="+dir), 0)
}

// Descendants that left the group but carry the run's tag are killed when
// the CLI exits, including what they fork while being killed; processes
// that are not the run's (no tag, another run's tag) are untouched.
func TestReapTagged(t *testing.T) {
	for _, pidfds := range []bool{true, false} {
		t.Run(fmt.Sprintf("pidfd=%v", pidfds), func(t *testing.T) {
			if !pidfds {
				pidfdOpen = func(int, int) (int, error) { return -1, unix.ENOSYS }
				t.Cleanup(func() { pidfdOpen = unix.PidfdOpen })
			}
			none := bystander(t, "PATH="+os.Getenv("PATH"))
			other := bystander(t, "PATH="+os.Getenv("PATH"), EnvRunID+"=0123456789abcdef0123456789abcdef")
			dir := pidDir(t)
			script := taggedEscapee(dir, "sleeper", "exec sleep 60") +
				taggedEscapee(dir, "forker", "while :; do sleep 60 & touch "+dir+"/forked; sleep 0.005; done") +
				// The forker has forked at least once before the CLI exits.
				" while [ ! -e " + dir + "/forked ]; do sleep 0.01; done; echo done"
			p := start(t, script, Spec{KillGrace: 5 * time.Second})
			readAll(t, p)
			t0 := time.Now()
			e := p.Wait()
			if d := time.Since(t0); d > slack {
				t.Fatalf("Wait took %v", d)
			}
			if left := tagged(p.tag); len(left) > 0 {
				t.Fatalf("processes carrying the run's tag survived: %v", left)
			}
			for _, pid := range readPids(dir) {
				if alive(pid) {
					t.Fatalf("escapee %d survived", pid)
				}
			}
			if e.Escaped < 3 { // sleeper, forker, and at least one sleep of its
				t.Fatalf("Escaped = %d", e.Escaped)
			}
			if !alive(none) || !alive(other) {
				t.Fatalf("a process that is not the run's was killed (no tag: %v, other tag: %v)", alive(none), alive(other))
			}
		})
	}
}

// After a stop too: the kill ladder, then the tag scan.
func TestReapTaggedAfterStop(t *testing.T) {
	dir := pidDir(t)
	p := start(t, taggedEscapee(dir, "s", "exec sleep 60")+` echo up; trap '' TERM; while :; do sleep 1; done`, Spec{KillGrace: 100 * time.Millisecond})
	if l, err := p.ReadLine(); err != nil || string(l.Data) != "up" {
		t.Fatalf("%q %v", l.Data, err)
	}
	p.Stop()
	if e := p.Wait(); e.Escaped != 1 {
		t.Fatalf("exit %+v", e)
	}
	if left := tagged(p.tag); len(left) > 0 {
		t.Fatalf("tagged processes survived: %v", left)
	}
}

func TestHasEntry(t *testing.T) {
	f := t.TempDir() + "/environ"
	want := []byte("K=v")
	for env, ok := range map[string]bool{
		"K=v\x00":            true,
		"A=1\x00K=v\x00":     true,
		"A=1\x00K=v":         true,
		"A=1\x00K=vv\x00":    false,
		"A=1\x00XK=v\x00":    false,
		"A=K=v\x00":          false,
		"":                   false,
		"A=1\x00\x00K=v\x00": true,
	} {
		os.WriteFile(f, []byte(env), 0o600)
		if got := hasEntry(f, want); got != ok {
			t.Errorf("hasEntry(%q) = %v", bytes.ReplaceAll([]byte(env), []byte{0}, []byte("|")), got)
		}
	}
}

// BenchmarkTagScan measures one scan of /proc that finds nothing: the cost
// every run pays at the CLI's exit. It reports the processes scanned.
func BenchmarkTagScan(b *testing.B) {
	names, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range names {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	b.ReportMetric(float64(n), "procs")
	for i := 0; i < b.N; i++ {
		if k := scanAndKill("no-such-tag", 0); k != 0 {
			b.Fatal(k)
		}
	}
}

// What the CLI leaves in its group without holding its pipes is gone when
// Wait returns, not merely signalled.
func TestGroupMembersGoneOnReturn(t *testing.T) {
	for i := 0; i < 20; i++ {
		p := start(t, `trap '' TERM; sleep 60 </dev/null >/dev/null 2>&1 & echo $!`, Spec{})
		l, err := p.ReadLine()
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(string(l.Data))
		if err != nil {
			t.Fatalf("%q", l.Data)
		}
		p.Wait()
		if alive(pid) {
			unix.Kill(pid, unix.SIGKILL)
			t.Fatalf("run %d: group member %d alive when Wait returned", i, pid)
		}
	}
}

// The CLI's stdout pipe is grown to pipeSize where the system allows it,
// and a run still reads every line through it.
func TestStdoutPipeGrown(t *testing.T) {
	want := pipeSize
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		if max, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && max < want && os.Geteuid() != 0 {
			want = 64 << 10 // the request fails; the pipe keeps the default
		}
	}
	p := start(t, "seq 1 100000", Spec{})
	var size int
	c, err := p.out.f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	c.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) })
	if err != nil || size != want {
		t.Fatalf("pipe size %d (err %v); want %d", size, err, want)
	}
	if n := len(readAll(t, p)); n != 100000 {
		t.Fatalf("%d lines", n)
	}
	p.Wait()
}

// hostHelperEnv makes the test binary run hostHelper instead of tests: a
// host that starts a CLI and then waits to be killed.
const hostHelperEnv = "AGENTCLI_PROC_HOST_HELPER"

func init() {
	if os.Getenv(hostHelperEnv) == "locked" {
		// The main goroutine keeps the main thread (which the runtime
		// never ends), so the goroutine that locks a thread below gets
		// another one, which ends with it.
		runtime.LockOSThread()
	}
}

// hostHelper starts a run's CLI that starts `sleep 60` in its group and
// then becomes `sleep 60` itself, prints the pids of both and blocks. In
// mode "locked" the start happens on a goroutine that locks its thread
// and returns (so the runtime ends that thread), and the pids are printed
// only once that goroutine is gone.
func hostHelper(mode string) {
	started := make(chan *Process)
	start := func() {
		p, err := Start(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "sleep 60 & echo $!; exec sleep 60"}, Env: os.Environ()})
		if err != nil {
			fmt.Println("HELPER-FAIL:", err)
			os.Exit(1)
		}
		started <- p
	}
	if mode == "locked" {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			start()
		}()
	} else {
		go start()
	}
	p := <-started
	child, err := p.ReadLine()
	if err != nil {
		fmt.Println("HELPER-FAIL:", err)
		os.Exit(1)
	}
	time.Sleep(200 * time.Millisecond) // the locked goroutine has returned
	fmt.Println(p.Pid(), string(child.Data))
	time.Sleep(time.Hour) // until killed (a timer, so never "all goroutines are asleep")
}

// A CLI does not outlive its host: when the process that started it dies
// (here SIGKILL, which runs no Go code), the kernel kills the CLI, and the
// group's sentinel what the CLI started in its group; and the CLI does not
// die with the thread that started it.
func TestCLIDiesWithHost(t *testing.T) {
	for _, mode := range []string{"plain", "locked"} {
		t.Run(mode, func(t *testing.T) {
			host := exec.Command(os.Args[0], "-test.run=^$")
			host.Env = append(os.Environ(), hostHelperEnv+"="+mode)
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { host.Process.Kill(); host.Wait() })
			line, err := bufio.NewReader(out).ReadString('\n')
			var pid, child int
			if _, perr := fmt.Sscan(line, &pid, &child); err != nil || perr != nil {
				t.Fatalf("host printed %q (%v)", line, err)
			}
			t.Cleanup(func() {
				for _, p := range []int{pid, child} {
					if alive(p) {
						syscall.Kill(p, syscall.SIGKILL)
					}
				}
			})
			time.Sleep(300 * time.Millisecond)
			if !alive(pid) || !alive(child) {
				t.Fatal("the CLI or its child died while their host was alive")
			}
			host.Process.Kill()
			host.Wait()
			for what, p := range map[string]int{"CLI": pid, "CLI's child": child} {
				for deadline := time.Now().Add(5 * time.Second); alive(p); time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("the %s outlived its host by 5 s", what)
					}
				}
			}
		})
	}
}

// waitForkers waits up to 3 s for the number of forking goroutines
// (spawn_linux.go) to be want, and says whether it was.
func waitForkers(want int) bool {
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		if strings.Count(string(buf[:runtime.Stack(buf, true)]), "proc.forkAndHold(") == want {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// Each CLI has a forking goroutine of its own while it is unreaped (so
// starts do not queue behind one another), and none is left once the
// last one is reaped: an idle program has no goroutine of ours.
func TestForkerOnlyWhileRunning(t *testing.T) {
	p1 := start(t, "exec sleep 60", Spec{})
	p2 := start(t, "exec sleep 60", Spec{})
	if !waitForkers(2) {
		t.Fatal("not two forking goroutines while two CLIs run")
	}
	p1.Stop()
	p1.Wait()
	if !waitForkers(1) {
		t.Fatal("not one forking goroutine while one CLI runs")
	}
	p2.Stop()
	p2.Wait()
	if !waitForkers(0) {
		t.Fatal("a forking goroutine outlived the last CLI by 3 s")
	}
}

// sentinels returns the pids of this process's children in process group
// pgid other than pgid itself, zombies included unless live.
func sentinels(t *testing.T, pgid int, live bool) []int {
	t.Helper()
	names, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, n := range names {
		pid, err := strconv.Atoi(n.Name())
		if err != nil || pid == pgid {
			continue
		}
		f := statFields(pid) // state ppid pgrp ...
		if len(f) >= 3 && f[1] == strconv.Itoa(os.Getpid()) && f[2] == strconv.Itoa(pgid) && (!live || f[0] != "Z") {
			out = append(out, pid)
		}
	}
	return out
}

// A CLI's group has one sentinel (guardGroup) while the CLI runs, which
// Stop's SIGTERM does not end, and none once Wait returns: it is reaped,
// whether the CLI exits by itself or is stopped.
func TestSentinelOnlyWhileRunning(t *testing.T) {
	for _, stop := range []bool{false, true} {
		p := start(t, "trap '' TERM; read -r _; sleep 0.5", Spec{KeepStdin: true})
		if s := sentinels(t, p.Pid(), true); len(s) != 1 {
			t.Fatalf("sentinels %v while the CLI runs, want one", s)
		}
		if stop {
			p.Stop() // SIGTERM now, which the CLI ignores, SIGKILL after KillGrace
			time.Sleep(100 * time.Millisecond)
			if s := sentinels(t, p.Pid(), true); len(s) != 1 {
				t.Fatalf("live sentinels %v after SIGTERM, want one", s)
			}
		} else {
			p.Stdin().Close()
		}
		p.Wait()
		if s := sentinels(t, p.Pid(), false); len(s) != 0 {
			t.Fatalf("sentinels %v after Wait (stop %v), want none", s, stop)
		}
	}
}
