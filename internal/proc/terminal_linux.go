//go:build linux

package proc

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func getTermios(fd int) (*unix.Termios, error) { return unix.IoctlGetTermios(fd, unix.TCGETS) }

func setTermios(fd int, t *unix.Termios) error { return unix.IoctlSetTermios(fd, unix.TCSETS, t) }

// withTTOUBlocked runs f on a locked thread with SIGTTOU blocked in that
// thread only; the process's signal dispositions (and any signal.Notify of
// the program) are not touched.
func withTTOUBlocked(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	w := uint(unsafe.Sizeof(set.Val[0])) * 8
	n := uint(syscall.SIGTTOU) - 1
	set.Val[n/w] |= 1 << (n % w)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		f()
		return
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	f()
}

// cldStopped is the siginfo code of a child that stopped (CLD_STOPPED).
const cldStopped = 5

// continueStopped sends SIGCONT to the process pid whenever it has stopped
// (SIGTSTP, SIGTTIN, SIGTTOU, SIGSTOP), until quit is closed; it closes
// done when it returns. In the foreground of our own terminal a stopped
// CLI would keep the terminal with nothing left to resume it. It polls
// (waitid with WSTOPPED and WNOHANG, which never reaps) every 100 ms, and
// must have returned before pid is reaped, so that a reused pid is never
// signalled.
func continueStopped(pid int, quit <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WNOHANG, nil)
		if err != nil && err != unix.EINTR {
			return
		}
		if err == nil && info.Signo == int32(syscall.SIGCHLD) && info.Code == cldStopped {
			select {
			case <-quit:
				return
			default:
			}
			syscall.Kill(pid, syscall.SIGCONT)
			continue
		}
		select {
		case <-quit:
			return
		case <-t.C:
		}
	}
}
