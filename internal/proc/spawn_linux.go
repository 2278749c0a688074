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
// in the middle of its run. So every CLI is forked by one goroutine that
// keeps its thread locked while any CLI it started is unreaped; when the
// last one is reaped it returns (its thread ends with nothing left to
// signal), so an idle program has no goroutine of ours.
func startCmd(cmd *exec.Cmd) (done func(), err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawner.mu.Lock()
	if spawner.live == 0 {
		spawner.starts = make(chan spawn)
		go spawnLoop(spawner.starts)
	}
	spawner.live++
	starts := spawner.starts
	spawner.mu.Unlock()

	errc := make(chan error, 1)
	starts <- spawn{cmd, errc}
	if err := <-errc; err != nil {
		unspawn()
		return nil, err
	}
	return sync.OnceFunc(unspawn), nil
}

// spawner is the forking goroutine's state: its queue, and how many of
// the children it started are not reaped yet (or being started).
var spawner struct {
	mu     sync.Mutex
	live   int
	starts chan spawn
}

// spawn is one start: the command and where its error goes.
type spawn struct {
	cmd *exec.Cmd
	err chan<- error
}

// unspawn counts a child reaped (or never started); after the last one
// the forking goroutine returns.
func unspawn() {
	spawner.mu.Lock()
	defer spawner.mu.Unlock()
	if spawner.live--; spawner.live == 0 {
		close(spawner.starts)
		spawner.starts = nil
	}
}

// spawnLoop starts the commands it is sent on a thread it keeps locked
// until starts is closed; then it returns without unlocking it, so the
// runtime ends the thread instead of handing it to another goroutine.
func spawnLoop(starts <-chan spawn) {
	runtime.LockOSThread()
	for s := range starts {
		s.err <- s.cmd.Start()
	}
}
