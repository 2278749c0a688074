//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package proc

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitExit blocks until the process has exited and reports whether it is
// still an unreaped zombie (true), or could not be waited for without
// reaping (false). It waits for NOTE_EXIT on a kqueue, which does not reap.
func waitExit(pid int) bool {
	kq, err := unix.Kqueue()
	if err != nil {
		return false
	}
	defer unix.Close(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	changes := []unix.Kevent_t{ev}
	out := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, changes, out, nil)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ESRCH || (err == nil && n == 1 && out[0].Flags&unix.EV_ERROR != 0) {
			// Gone before we could watch it. Only we reap it, so if its
			// pid still answers it is our zombie.
			return syscall.Kill(pid, 0) == nil
		}
		if err != nil {
			return false
		}
		if n == 1 && out[0].Fflags&unix.NOTE_EXIT != 0 {
			return true
		}
		changes = nil // registered; wait again
	}
}

// fionread is FIONREAD, _IOR('f', 127, int), on these systems.
const fionread = 0x4004667f

// reapTagged does nothing here: finding processes by their environment
// needs Linux's /proc.
func reapTagged(string, int) int { return 0 }

// growPipe leaves the pipe as it is (BSD pipes grow on their own).
func growPipe(*os.File) {}

// allocChunk returns a heap chunk for a long line (see longLine).
func allocChunk(size int) ([]byte, bool) { return make([]byte, size), false }

// freeChunk leaves a heap chunk to the garbage collector.
func freeChunk([]byte, bool) {}
