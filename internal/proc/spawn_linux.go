//go:build linux

package proc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// startCmd starts cmd so that the kernel kills it (SIGKILL) when this
// process ends, however it ends: a crash, os.Exit, SIGKILL. Without it a
// CLI outlives a host that dies in the middle of a run, and goes on
// calling its model. The caller calls done once it has reaped the child
// (not when startCmd returns an error).
//
// The kernel sends that signal when the thread that forked the child ends,
// not the process, and the Go runtime ends a thread when a goroutine that
// locked it returns: a CLI started from such a goroutine would be killed
// in the middle of its run. So each CLI is forked by a goroutine of its
// own that keeps its thread locked until the CLI is reaped (see
// forkAndHold). Starts do not wait for each other (one that hangs in
// execve, on a hung file system, holds back no other), and an idle program
// has no goroutine of ours.
func startCmd(cmd *exec.Cmd) (done func(), err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started := make(chan error, 1)
	reaped := make(chan struct{})
	go forkAndHold(cmd, started, reaped)
	if err := <-started; err != nil {
		return nil, err
	}
	return sync.OnceFunc(func() { close(reaped) }), nil
}

// forkAndHold starts cmd on a thread it locks, and holds the thread until
// reaped is closed (or at once, when the start failed); then it returns
// without unlocking it, so the runtime ends the thread instead of handing
// it to another goroutine. A parked thread costs no CPU; one per running
// CLI is nothing beside the CLI.
func forkAndHold(cmd *exec.Cmd, started chan<- error, reaped <-chan struct{}) {
	runtime.LockOSThread()
	err := cmd.Start()
	started <- err
	if err == nil {
		<-reaped
	}
}
