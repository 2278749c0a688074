//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package proc

import (
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

func getTermios(fd int) (*unix.Termios, error) { return unix.IoctlGetTermios(fd, unix.TIOCGETA) }

func setTermios(fd int, t *unix.Termios) error { return unix.IoctlSetTermios(fd, unix.TIOCSETA, t) }

// withTTOUBlocked runs f with SIGTTOU ignored. These systems offer no
// per-thread signal mask through golang.org/x/sys, so the disposition is
// changed for the whole process for the duration of f (and reset to the
// default afterwards, unless SIGTTOU was ignored already): a program that
// asked for SIGTTOU with signal.Notify stops receiving it.
func withTTOUBlocked(f func()) {
	if signal.Ignored(syscall.SIGTTOU) {
		f()
		return
	}
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	f()
}

// continueStopped only closes done here: without waitid, a stop cannot be
// observed without the risk of reaping.
func continueStopped(_ int, _ <-chan struct{}, done chan<- struct{}) { close(done) }
