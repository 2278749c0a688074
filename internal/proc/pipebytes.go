//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package proc

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeBytes returns how many bytes can be read from the pipe f without
// blocking (0 if unknown).
func pipeBytes(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), fionread); err == nil && v > 0 {
			n = v
		}
	})
	return n
}
