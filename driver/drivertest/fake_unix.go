//go:build unix

package drivertest

import "syscall"

// signalZero reports whether signal 0 reaches pid (it exists).
func signalZero(pid int) bool { return syscall.Kill(pid, 0) == nil }

// newSession makes a child start a new session (leave the process group).
func newSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
