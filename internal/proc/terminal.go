//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotTerminal is returned by StartTerminal when TerminalSpec.Stdin is not
// a terminal.
var ErrNotTerminal = errors.New("proc: stdin is not a terminal")

// StartTerminal starts the process described by spec on a terminal. It has
// the guarantees of Start for stopping and reaping: its own process group,
// the EnvRunID tag, the kill ladder on Stop or when ctx is done, leftovers
// of the group and (Linux) tagged escapees killed when it exits, the one
// guarded path for group signals. It differs in what it connects: the
// process gets spec's files as stdin, stdout and stderr, so ReadLine returns
// io.EOF at once, Stdin returns nil and Exit.Stderr is empty.
//
// The process gets the terminal the way a shell hands it to a foreground
// job:
//
//   - When spec.Stdin is this process's controlling terminal, the process
//     starts in a new process group that is placed in the terminal's
//     foreground (so it may read the terminal and change its mode, and
//     the characters for interrupt and suspend signal it, not us). This
//     process must be in the foreground itself; otherwise StartTerminal
//     fails with ErrNotForeground and starts nothing.
//   - Otherwise (a pseudo-terminal this process opened, for example), the
//     process starts a new session whose controlling terminal is
//     spec.Stdin; when that terminal already belongs to another session,
//     a new session without a controlling terminal.
//
// Either way the process group id is the process id. When the process has
// exited and what it left is killed, the terminal is given back before
// Wait returns: this process's group is the foreground group again (when
// it was at the start), and the terminal's mode (termios) is what it was at
// the start, so a CLI that dies in raw mode leaves a usable terminal. After
// a stop or a death by signal, Stdout also receives the escape sequences
// that leave the alternate screen and turn off mouse reporting, bracketed
// paste, focus events and enhanced keyboard modes, and show the cursor
// (only when Stdout is a terminal). While the process runs, this process
// should not use the terminal.
//
// A process that stops itself (SIGTSTP, as a CLI may on Ctrl-Z) is
// continued at once when it runs in the foreground of our own terminal:
// suspending the caller's job is not supported.
func StartTerminal(ctx context.Context, spec TerminalSpec) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if spec.Stdin == nil {
		return nil, ErrNotTerminal
	}
	if spec.KillGrace <= 0 {
		spec.KillGrace = DefaultKillGrace
	}
	fd := int(spec.Stdin.Fd())
	saved, err := getTermios(fd)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotTerminal, err)
	}
	ts := &termState{fd: fd, saved: saved, out: spec.Stdout}
	if ts.out != nil && !IsTerminal(ts.out) {
		ts.out = nil
	}
	var attrs []*syscall.SysProcAttr
	if isControllingTerminal(spec.Stdin) {
		fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		if err != nil {
			return nil, fmt.Errorf("proc: reading the terminal's foreground process group: %w", err)
		}
		if fg != syscall.Getpgrp() {
			return nil, ErrNotForeground
		}
		ts.foreground, ts.pgrp = true, fg
		attrs = append(attrs, &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: fd})
	} else {
		// Ctty is the child's descriptor here: its stdin.
		attrs = append(attrs,
			&syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0},
			&syscall.SysProcAttr{Setsid: true})
	}
	p, err := newProcess(spec.KillGrace, 1)
	if err != nil {
		return nil, err
	}
	p.term = ts
	close(p.errDone)
	var cmd *exec.Cmd
	var release func()
	for i, attr := range attrs {
		cmd = exec.Command(spec.Path, spec.Args...)
		cmd.Dir = spec.Dir
		cmd.Env = tagEnv(spec.Env, p.tag)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Stdin, spec.Stdout, spec.Stderr
		cmd.SysProcAttr = attr
		release, err = startCmd(cmd)
		// A terminal that is another session's controlling terminal
		// cannot become ours (EPERM): fall back to no controlling
		// terminal. The failure happened in the child before exec.
		if err == nil || i == len(attrs)-1 || !errors.Is(err, syscall.EPERM) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	p.cmd, p.release = cmd, release
	p.pid = cmd.Process.Pid
	if ts.foreground {
		p.contQuit, p.contDone = make(chan struct{}), make(chan struct{})
		go continueStopped(p.pid, p.contQuit, p.contDone)
	}
	go p.waitLoop()
	p.unwatch = context.AfterFunc(ctx, p.Stop)
	return p, nil
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	_, err := getTermios(int(f.Fd()))
	return err == nil
}

// isControllingTerminal reports whether f is this process's controlling
// terminal: only then does the terminal tell its foreground process group
// (tcgetpgrp fails with ENOTTY otherwise).
func isControllingTerminal(f *os.File) bool {
	_, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil
}

// termState is what StartTerminal needs to give the terminal back.
type termState struct {
	fd         int
	saved      *unix.Termios
	out        *os.File // Stdout when it is a terminal, else nil
	foreground bool     // we were the foreground group; pgrp is ours
	pgrp       int
}

// resetSequences leave the alternate screen, turn off mouse reporting
// (X10, button, any-event, SGR), focus events, bracketed paste, xterm's
// modifyOtherKeys and the kitty keyboard protocol (pop), reset colours and
// show the cursor: the modes a full-screen CLI sets that outlive it.
const resetSequences = "\x1b[?1049l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?2004l\x1b[>4;0m\x1b[<u\x1b[0m\x1b[?25h\r\n"

// restore gives the terminal back after the process has exited: the
// foreground to our group (when it was ours), the saved mode, and, when
// the process did not end by itself (abnormal), the reset sequences.
func (t *termState) restore(abnormal bool) {
	withTTOUBlocked(func() {
		// Changing a terminal from a background group raises SIGTTOU
		// (which would stop us) unless it is blocked or ignored.
		if t.foreground {
			unix.IoctlSetPointerInt(t.fd, unix.TIOCSPGRP, t.pgrp)
		}
		setTermios(t.fd, t.saved)
	})
	if abnormal && t.out != nil {
		t.out.WriteString(resetSequences)
	}
}
