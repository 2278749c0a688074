package live

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// A CLI may start helpers in a session or process group of their own
// (codex runs its shell-environment snapshot under setsid), out of reach of
// the kill that ends the CLI's group. Before a session stops its CLI, it
// notes the CLI's descendants outside the group; once the CLI is gone it
// kills those that are still the same processes. Linux only (/proc);
// elsewhere nothing is found.

// escapee is a descendant of the CLI outside its process group.
type escapee struct {
	pid, pgid int
	start     uint64 // start time, to tell a reused pid apart
}

// procStat is the part of /proc/PID/stat the sweep reads.
type procStat struct {
	ppid, pgid int
	start      uint64
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// pid (comm) state ppid pgrp session ... starttime (field 22); comm
	// may hold spaces and parentheses, so split after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{ppid: ppid, pgid: pgid, start: start}, true
}

// escapees returns the live descendants of root that are not in process
// group group.
func escapees(root, group int) []escapee {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	stats := map[int]procStat{}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			stats[pid] = st
			children[st.ppid] = append(children[st.ppid], pid)
		}
	}
	var out []escapee
	seen := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if seen[c] {
				continue
			}
			seen[c] = true
			queue = append(queue, c)
			if st := stats[c]; st.pgid != group {
				out = append(out, escapee{pid: c, pgid: st.pgid, start: st.start})
			}
		}
	}
	return out
}

// killEscapees kills each escapee that is still the same process, and its
// process group when it leads one.
func killEscapees(es []escapee) {
	for _, e := range es {
		st, ok := readStat(e.pid)
		if !ok || st.start != e.start {
			continue // gone, or the pid was reused
		}
		if e.pgid == e.pid {
			kill(-e.pgid)
		}
		kill(e.pid)
	}
}
