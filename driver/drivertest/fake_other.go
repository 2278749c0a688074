//go:build !unix

package drivertest

import "syscall"

// signalZero reports false: the fake CLI runs on Unix systems only.
func signalZero(int) bool { return false }

// newSession returns nil: the fake CLI runs on Unix systems only.
func newSession() *syscall.SysProcAttr { return nil }
