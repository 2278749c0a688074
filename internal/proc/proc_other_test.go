//go:build unix && !linux

package proc

import "syscall"

// killEscapees kills the escapees started with pid directory dir that are
// still alive (without /proc there is no marker to check).
func killEscapees(dir string) {
	for _, pid := range readPids(dir) {
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
