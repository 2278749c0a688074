//go:build unix && !linux

package proc

import "os/exec"

// startCmd starts cmd; done does nothing. Only on Linux does the kernel
// kill a child when its parent dies (see spawn_linux.go); elsewhere a CLI
// outlives a host that dies in the middle of a run.
func startCmd(cmd *exec.Cmd) (done func(), err error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {}, nil
}

// guardGroup does nothing: without Pdeathsig the CLI itself outlives a
// host that dies (see spawn_linux.go).
func guardGroup(int) (end func()) { return func() {} }
