//go:build linux

package proc

import (
	"os"
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

// sentinelScript waits for the end of its stdin, which only this process
// holds open, and then kills its own process group: the CLI's. Stop's
// SIGTERM must not end it early, nor a HUP, INT or QUIT sent to the group.
const sentinelScript = `trap "" HUP INT QUIT TERM; read -r _; kill -9 0`

// guardGroup starts a sentinel in process group pgid, the CLI's that
// started a moment ago, so that what the CLI started in its group dies
// with this process too: the kernel kills the CLI itself (Pdeathsig), not
// its children. The sentinel is a shell (/bin/sh) with an empty
// environment whose stdin is a pipe only this process can write; the
// kernel closes it when this process ends, however it ends, and the
// sentinel kills the group. While it lives the group id cannot be reused,
// so it never signals anyone else's group. It must start before the CLI
// can be reaped (while the group exists, pinned by the CLI or its
// zombie). end kills and reaps the sentinel (at once: SIGKILL); the caller
// calls it once the CLI has exited, before it kills the group itself. A
// sentinel that cannot start (no /bin/sh) leaves the CLI's descendants as
// they were: they outlive a host that dies.
func guardGroup(pgid int) (end func()) {
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	cmd := exec.Command("/bin/sh", "-c", sentinelScript)
	cmd.Stdin, cmd.Env = r, []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return func() {}
	}
	return sync.OnceFunc(func() {
		cmd.Process.Kill() // our unreaped child: the pid is still its own
		cmd.Wait()
		w.Close()
	})
}
