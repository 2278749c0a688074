//go:build unix

package live

import "syscall"

// kill sends SIGKILL to pid (a process group when negative).
func kill(pid int) { syscall.Kill(pid, syscall.SIGKILL) }
