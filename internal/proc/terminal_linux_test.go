package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcli/agentcli/internal/ptytest"
	"golang.org/x/sys/unix"
)

// statFields returns fields 3.. of /proc/pid/stat (state, ppid, pgrp,
// session, tty_nr, tpgid, ...), or nil.
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

func termiosOf(t *testing.T, f *os.File) unix.Termios {
	t.Helper()
	tio, err := getTermios(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	return *tio
}

// A pseudo-terminal that is nobody's controlling terminal becomes the
// controlling terminal of the process, which leads a session of its own (so
// its group is its pid and it is the terminal's foreground group). The exit
// status is reported, and the terminal's mode is restored although the
// process left it raw.
func TestStartTerminalNewSession(t *testing.T) {
	pty := ptytest.New(t, 24, 80)
	before := termiosOf(t, pty.Slave)
	p, err := StartTerminal(context.Background(), TerminalSpec{
		Path:  "/bin/sh",
		Args:  []string{"-c", `stty raw -echo; echo READY; read x; echo "GOT:$x"; exit 7`},
		Stdin: pty.Slave, Stdout: pty.Slave, Stderr: pty.Slave,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := pty.WaitFor(ctx, 0, "READY"); err != nil {
		t.Fatal(err)
	}
	st := statFields(p.Pid())
	var rdev unix.Stat_t
	if err := unix.Fstat(int(pty.Slave.Fd()), &rdev); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(p.Pid())
	if len(st) < 6 || st[2] != pid || st[3] != pid || st[4] != strconv.FormatUint(rdev.Rdev, 10) || st[5] != pid {
		t.Errorf("pgrp, session, tty, tpgid = %v; want %s, %s, %d, %s", st[2:6], pid, pid, rdev.Rdev, pid)
	}
	if got := termiosOf(t, pty.Slave); got == before {
		t.Error("the script's stty raw did not change the terminal's mode")
	}
	if _, err := p.ReadLine(); err != io.EOF {
		t.Errorf("ReadLine = %v, want io.EOF", err)
	}
	if p.Stdin() != nil {
		t.Error("Stdin() != nil")
	}
	pty.Type("hello\n")
	e := p.Wait()
	if e.Code != 7 || e.Stopped || e.Signal != 0 {
		t.Errorf("exit = %+v, want code 7", e)
	}
	if _, err := pty.WaitFor(ctx, 0, "GOT:hello"); err != nil {
		t.Error(err)
	}
	if got := termiosOf(t, pty.Slave); got != before {
		t.Error("terminal mode not restored after the exit")
	}
	if bytes.Contains(pty.Raw(), []byte("\x1b[?1049l")) {
		t.Error("reset sequences written after a normal exit")
	}
}

// Cancelling the context stops the process group with the kill ladder
// (also a child that ignores SIGTERM), kills what it left, restores the
// terminal's mode and writes the reset sequences.
func TestStartTerminalCancel(t *testing.T) {
	pty := ptytest.New(t, 24, 80)
	before := termiosOf(t, pty.Slave)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := StartTerminal(ctx, TerminalSpec{
		Path:  "/bin/sh",
		Args:  []string{"-c", `trap '' TERM; stty raw -echo; printf '\033[?1049h'; sleep 60 & echo READY; wait`},
		Stdin: pty.Slave, Stdout: pty.Slave, Stderr: pty.Slave,
		KillGrace: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer wcancel()
	if _, err := pty.WaitFor(wctx, 0, "READY"); err != nil {
		t.Fatal(err)
	}
	tag := p.tag
	cancel()
	start := time.Now()
	e := p.Wait()
	if d := time.Since(start); d > 300*time.Millisecond+5*time.Second {
		t.Errorf("Wait took %v after the cancel", d)
	}
	if !e.Stopped || e.Code != -1 || e.Signal != syscall.SIGKILL {
		t.Errorf("exit = %+v, want stopped by SIGKILL", e)
	}
	if left := tagged(tag); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
	if got := termiosOf(t, pty.Slave); got != before {
		t.Error("terminal mode not restored after the kill")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !bytes.Contains(pty.Raw(), []byte(strings.TrimSuffix(resetSequences, "\r\n"))) {
		if time.Now().After(deadline) {
			t.Fatalf("reset sequences not written; raw output: %q", pty.Raw())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStartTerminalNotTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = StartTerminal(context.Background(), TerminalSpec{Path: "/bin/true", Stdin: f})
	if !errors.Is(err, ErrNotTerminal) {
		t.Errorf("err = %v, want ErrNotTerminal", err)
	}
	if IsTerminal(f) {
		t.Error("IsTerminal(/dev/null)")
	}
}

// helperEnv makes the test binary run foregroundHelper instead of tests.
const helperEnv = "AGENTCLI_PROC_TERMINAL_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(hostHelperEnv); mode != "" {
		hostHelper(mode) // never returns
	}
	if os.Getenv(helperEnv) == "1" {
		if err := foregroundHelper(); err != nil {
			fmt.Println("HELPER-FAIL:", err)
			os.Exit(1)
		}
		fmt.Println("HELPER-OK")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// When the terminal is the caller's controlling terminal, the process runs
// in a new group in the terminal's foreground; a stop (kill -STOP, as a CLI
// does on Ctrl-Z) is continued; afterwards the caller is the foreground
// group again and the mode is restored. A caller in the background is
// refused. The test runs the checks in a copy of the test binary that leads
// a session on a pseudo-terminal.
func TestStartTerminalForeground(t *testing.T) {
	pty := ptytest.New(t, 24, 80)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pty.Slave, pty.Slave, pty.Slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("helper: %v", err)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("helper did not finish")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := pty.WaitFor(ctx, 0, "HELPER-OK"); err != nil {
		t.Error(err)
	}
}

// foregroundHelper runs in a session of its own whose controlling terminal
// is its stdin.
func foregroundHelper() error {
	fd := int(os.Stdin.Fd())
	if !isControllingTerminal(os.Stdin) {
		return errors.New("stdin is not the controlling terminal")
	}
	before, err := getTermios(fd)
	if err != nil {
		return err
	}
	// The child checks it is its group's leader and the terminal's
	// foreground group, goes raw, stops itself, and exits 5 once
	// continued.
	p, err := StartTerminal(context.Background(), TerminalSpec{
		Path:  "/bin/sh",
		Args:  []string{"-c", `set -- $(cut -d')' -f2 /proc/$$/stat); [ "$3" = "$$" ] && [ "$6" = "$$" ] || exit 3; stty raw -echo; kill -STOP $$; exit 5`},
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
	})
	if err != nil {
		return err
	}
	done := make(chan Exit, 1)
	go func() { done <- p.Wait() }()
	var e Exit
	select {
	case e = <-done:
	case <-time.After(30 * time.Second):
		p.Stop()
		return fmt.Errorf("the child did not exit (stopped and not continued?): %+v", <-done)
	}
	if e.Code != 5 {
		return fmt.Errorf("child exit = %+v, want code 5", e)
	}
	if fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil || fg != syscall.Getpgrp() {
		return fmt.Errorf("foreground group after the exit = %d (%v), want ours (%d)", fg, err, syscall.Getpgrp())
	}
	after, err := getTermios(fd)
	if err != nil || *after != *before {
		return fmt.Errorf("terminal mode not restored (%v)", err)
	}

	// In the background (another group holds the foreground), the
	// terminal is not taken.
	other := exec.Command("/bin/sleep", "30")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := other.Start(); err != nil {
		return err
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	withTTOUBlocked(func() { err = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, other.Process.Pid) })
	if err != nil {
		return err
	}
	_, err = StartTerminal(context.Background(), TerminalSpec{Path: "/bin/true", Stdin: os.Stdin, Stdout: os.Stdout})
	withTTOUBlocked(func() { unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, syscall.Getpgrp()) })
	if !errors.Is(err, ErrNotForeground) {
		return fmt.Errorf("StartTerminal in the background: err = %v, want ErrNotForeground", err)
	}
	return nil
}
