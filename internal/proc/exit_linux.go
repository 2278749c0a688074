//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// waitExit blocks until the process has exited and reports whether it is
// still an unreaped zombie (true), or could not be waited for without
// reaping (false: for example someone else reaped it, ECHILD).
func waitExit(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return true
		}
		if err != unix.EINTR {
			return false
		}
	}
}

// fionread asks how many bytes a pipe holds (FIONREAD; TIOCINQ is its
// Linux name).
const fionread = unix.TIOCINQ

// pidfdOpen is unix.PidfdOpen, replaced in tests to act like a kernel
// without pidfds.
var pidfdOpen = unix.PidfdOpen

// Limits of the scan (see reapTagged).
const (
	maxScans      = 10
	deathWait     = time.Second // in total, for killed processes to die
	scanAbandoned = 2 * time.Second
)

// reapTagged kills every process of our effective uid whose initial
// environment carries EnvRunID=tag, or that is still in process group pgid
// (0: none; its members have had SIGKILL already), and waits for them to be
// gone. It returns how many tagged processes outside the group it killed.
// It gives up after scanAbandoned (reading a process's environment can
// block on that process's memory lock), leaving the scan to finish in the
// background.
func reapTagged(tag string, pgid int) int {
	res := make(chan int, 1)
	go func() { res <- scanAndKill(tag, pgid) }()
	t := time.NewTimer(scanAbandoned)
	defer t.Stop()
	select {
	case n := <-res:
		return n
	case <-t.C:
		return 0
	}
}

func scanAndKill(tag string, pgid int) int {
	return killMatching([]byte(EnvRunID+"="+tag), pgid)
}

// killMatching kills the processes of our effective uid in group pgid (if
// not 0) or whose initial environment has the entry want, as described at
// reapTagged, and returns how many of them were outside the group.
func killMatching(want []byte, pgid int) int {
	k := &killScan{want: want, pgid: pgid, self: os.Getpid(), euid: os.Geteuid(), seen: map[int]bool{}}
	defer func() {
		for _, fd := range k.pidfds {
			unix.Close(fd)
		}
	}()
	waitUntil := time.Now().Add(deathWait)
	// A process of the run that forks and exits while a scan runs leaves a
	// child the scan's listing misses and a zombie whose environment
	// cannot be read. So a scan that finds a zombie (or an exec in
	// progress) that started no earlier than the CLI looks again.
	if pgid > 0 {
		k.since, _ = procStat(strconv.Itoa(pgid))
	}
	for scan := 0; scan < maxScans; scan++ {
		d, err := os.Open("/proc")
		if err != nil {
			break
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		fresh, unsure := k.scan(names)
		if len(fresh) == 0 && k.found == 0 {
			if unsure == 0 {
				break
			}
			time.Sleep(time.Millisecond)
			continue
		}
		// Let them die before looking again, so that whatever they forked
		// meanwhile exists by the next scan.
		waitDead(fresh, waitUntil)
	}
	return k.escaped
}

// killScan is the state of one killMatching: what it looks for, and what
// it has killed.
type killScan struct {
	want             []byte
	pgid, self, euid int
	since            uint64 // the group leader's start time, 0 if unknown
	seen             map[int]bool
	pidfds           []int // every pidfd held, closed at the end
	found            int   // processes killed by pid (no pidfd) in this scan
	escaped          int
}

// scan kills the run's processes among the /proc entries names, and
// returns the pidfds of those it killed and how many processes it could
// not yet tell about (see killMatching).
func (k *killScan) scan(names []string) (fresh []int, unsure int) {
	k.found = 0
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 1 || pid == k.self || pid == k.pgid || k.seen[pid] {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+name, &st) != nil || int(st.Uid) != k.euid {
			continue
		}
		if ok, _ := k.ours(name); !ok {
			if k.since > 0 && maybeOurs(name, k.since) {
				unsure++
			}
			continue
		}
		if fd, ok := k.kill(name, pid); ok && fd >= 0 {
			fresh = append(fresh, fd)
		}
	}
	return fresh, unsure
}

// ours reports whether the process that holds the pid name now is one of
// the run's, and whether it is outside the group.
func (k *killScan) ours(name string) (ok, outside bool) {
	if k.pgid > 0 && groupOf(name) == k.pgid {
		return true, false
	}
	return hasEntry("/proc/"+name+"/environ", k.want), true
}

// kill kills process pid (/proc/name) if it is still one of the run's,
// and reports whether it did, with the pidfd that pins it (-1 when killed
// by pid).
func (k *killScan) kill(name string, pid int) (fd int, killed bool) {
	fd, err := pidfdOpen(pid, 0)
	switch {
	case err == nil:
		// The pidfd pins one process. Checking again now looks at the
		// process that holds the pid; if that is not the pidfd's (the pid
		// was reused), the signal below fails.
		ok, outside := k.ours(name)
		if !ok || unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) != nil {
			unix.Close(fd)
			return -1, false
		}
		k.pidfds = append(k.pidfds, fd)
		k.killed(pid, outside)
		return fd, true
	case err == unix.ESRCH:
		return -1, false
	default:
		// No pidfds (kernel before 5.3, a seccomp filter): check again
		// and kill by pid.
		ok, outside := k.ours(name)
		if !ok || syscall.Kill(pid, syscall.SIGKILL) != nil {
			return -1, false
		}
		k.found++
		k.killed(pid, outside)
		return -1, true
	}
}

// killed records that pid was killed.
func (k *killScan) killed(pid int, outside bool) {
	k.seen[pid] = true
	if outside {
		k.escaped++
	}
}

// groupOf returns the process group of /proc/<name>/stat, or -1. A zombie
// keeps its group until reaped, but its environment reads empty.
func groupOf(name string) int {
	b, err := os.ReadFile("/proc/" + name + "/stat")
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := bytes.Fields(b[i+1:]) // state ppid pgrp ...
	if len(f) < 3 || string(f[0]) == "Z" || string(f[0]) == "X" {
		return -1
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return -1
	}
	return g
}

// procStat returns the start time (in clock ticks since boot) of the live
// user process /proc/<name>; ok is false for a kernel thread (a child of
// kthreadd, pid 2) or when it cannot be read. zombie reports a zombie.
func procStat(name string) (start uint64, ok bool) {
	start, zombie, ok := statOf(name)
	return start, ok && !zombie
}

func statOf(name string) (start uint64, zombie, ok bool) {
	b, err := os.ReadFile("/proc/" + name + "/stat")
	if err != nil || name == "2" {
		return 0, false, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false, false
	}
	f := bytes.Fields(b[i+1:]) // state ppid pgrp ... starttime (the 20th)
	if len(f) < 20 || string(f[1]) == "2" {
		return 0, false, false
	}
	start, err = strconv.ParseUint(string(f[19]), 10, 64)
	return start, string(f[0]) == "Z" || string(f[0]) == "X", err == nil
}

// maybeOurs reports whether /proc/<name>, which the scan could not tell to
// be the run's, may still be: a zombie, or a process whose environment
// reads empty (as it does while the process execs), started no earlier
// than since (the CLI's start).
func maybeOurs(name string, since uint64) bool {
	start, zombie, ok := statOf(name)
	if !ok || start < since {
		return false
	}
	if zombie {
		return true
	}
	env, err := os.ReadFile("/proc/" + name + "/environ")
	return err == nil && len(env) == 0
}

// hasEntry reports whether the NUL-separated environment file at path has
// the entry want.
func hasEntry(path string, want []byte) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for len(b) > 0 {
		var entry []byte
		entry, b, _ = bytes.Cut(b, []byte{0})
		if bytes.Equal(entry, want) {
			return true
		}
	}
	return false
}

// waitDead waits until every process behind pidfds has exited (a pidfd
// polls readable then), or until the deadline.
func waitDead(pidfds []int, until time.Time) {
	fds := make([]unix.PollFd, 0, len(pidfds))
	for _, fd := range pidfds {
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	for len(fds) > 0 {
		ms := int(time.Until(until) / time.Millisecond)
		if ms <= 0 {
			return
		}
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		left := fds[:0]
		for _, f := range fds {
			if f.Revents == 0 {
				f.Revents = 0
				left = append(left, f)
			}
		}
		fds = left
	}
}

// pipeSize is the capacity asked for the CLI's stdout pipe (Linux's
// default is 64 KiB; unprivileged processes may ask up to
// /proc/sys/fs/pipe-max-size, 1 MiB by default). A larger pipe lets the
// CLI write ahead while a burst of lines is parsed, with fewer wake-ups on
// both sides; backpressure still holds, at this bound.
const pipeSize = 1 << 20

// growPipe asks for a pipeSize capacity for the pipe f; failure is
// harmless (the pipe keeps its size).
func growPipe(f *os.File) {
	if c, err := f.SyscallConn(); err == nil {
		c.Control(func(fd uintptr) {
			unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
		})
	}
}

// allocChunk returns a zeroed chunk of size bytes for a long line: an
// anonymous private mapping (mapped true), which freeChunk unmaps, or a
// heap slice if mapping fails.
func allocChunk(size int) (c []byte, mapped bool) {
	c, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return make([]byte, size), false
	}
	return c, true
}

// freeChunk releases a chunk from allocChunk; c must not be used after.
func freeChunk(c []byte, mapped bool) {
	if mapped {
		syscall.Munmap(c)
	}
}
