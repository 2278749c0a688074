//go:build !unix

package fakecli

import "syscall"

// signalZero reports false: the fake CLI runs on unix systems only.
func signalZero(int) bool { return false }

// newSession returns nil: the fake CLI runs on unix systems only.
func newSession() *syscall.SysProcAttr { return nil }
