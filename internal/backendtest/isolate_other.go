//go:build !linux

package backendtest

import (
	"syscall"
	"testing"
)

func runInNamespace(*testing.T, string) (string, error) {
	return "network namespaces exist only on Linux", errNoNamespace
}

// IsolatedAttr returns nil: network namespaces exist only on Linux.
func IsolatedAttr() *syscall.SysProcAttr { return nil }

func loopbackUp() error { return nil }
