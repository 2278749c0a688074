//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The CLIs die with the gateway. agentcli stops and reaps every CLI it
// started when a run ends, but a gateway killed with SIGKILL (or by the
// OOM killer) runs no code: its CLIs would go on unsupervised, and the
// restarted gateway would resume the same sessions beside them. Two
// guards, on Linux:
//
//   - Every CLI is started through the gateway's own binary (guardExec):
//     it asks the kernel for SIGKILL when its parent, the gateway, dies
//     (PR_SET_PDEATHSIG), then execs the CLI, which keeps that setting.
//   - Every CLI carries the gateway's tag in its environment (envTag), and
//     what it starts inherits it: at start-up, holding the state
//     directory's lock (so no live gateway owns them), the gateway kills
//     every process of its user that carries the tag (sweep): the tool
//     processes a killed CLI left behind.

// guardSupported reports whether CLIs can be started through guardExec.
const guardSupported = true

// guardExec is called first thing in main (and TestMain): when the
// process was started as a CLI's guard (envExec is set), it arranges to
// be killed with its parent and execs the CLI; it does not return then.
func guardExec() {
	target := os.Getenv(envExec)
	if target == "" {
		return
	}
	parent, _ := strconv.Atoi(os.Getenv(envParent))
	// The parent-death signal belongs to the thread that sets it, and
	// exec keeps the calling thread's: both on one thread.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "discord-gateway: PR_SET_PDEATHSIG:", err)
		os.Exit(126)
	}
	if parent > 0 && os.Getppid() != parent {
		os.Exit(137) // the gateway died before the signal was set
	}
	var env []string
	for _, kv := range os.Environ() {
		if !bytes.HasPrefix([]byte(kv), []byte(envExec+"=")) && !bytes.HasPrefix([]byte(kv), []byte(envParent+"=")) {
			env = append(env, kv)
		}
	}
	argv := append([]string{target}, os.Args[1:]...)
	err := syscall.Exec(target, argv, env)
	fmt.Fprintf(os.Stderr, "discord-gateway: exec %s: %v\n", target, err)
	os.Exit(127)
}

// sweep kills every process of this user (but this one) whose initial
// environment has envTag=tag, until none is left (at most a few rounds,
// so that what they forked meanwhile is found too), and returns how many
// it killed.
func sweep(tag string) int {
	want := []byte(envTag + "=" + tag)
	self, euid := os.Getpid(), os.Geteuid()
	killed := 0
	for round := 0; round < 10; round++ {
		d, err := os.Open("/proc")
		if err != nil {
			return killed
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		found := 0
		for _, name := range names {
			pid, err := strconv.Atoi(name)
			if err != nil || pid <= 1 || pid == self {
				continue
			}
			var st syscall.Stat_t
			if syscall.Stat("/proc/"+name, &st) != nil || int(st.Uid) != euid {
				continue
			}
			env, err := os.ReadFile("/proc/" + name + "/environ")
			if err != nil || !hasEntry(env, want) {
				continue
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				found++
			}
		}
		killed += found
		if found == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return killed
}

// hasEntry reports whether the NUL-separated environment block env has
// the entry want.
func hasEntry(env, want []byte) bool {
	for len(env) > 0 {
		var e []byte
		e, env, _ = bytes.Cut(env, []byte{0})
		if bytes.Equal(e, want) {
			return true
		}
	}
	return false
}
