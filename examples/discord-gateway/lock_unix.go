//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockState takes the lock of the state directory dir (a flock on
// dir/gateway.lock, released when the process ends, however it ends) and
// returns the directory's tag, made once and kept in dir/tag.
func lockState(dir string) (tag string, release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "gateway.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return "", nil, errLocked
		}
		return "", nil, err
	}
	release = func() { f.Close() }
	if tag, err = stateTag(dir); err != nil {
		release()
		return "", nil, err
	}
	return tag, release, nil
}
