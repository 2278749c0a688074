//go:build unix && !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package proc

import "os"

// waitExit returns false at once: these systems offer no way to wait for
// an exit without reaping, so the caller reaps and never signals the group
// afterwards.
func waitExit(int) bool { return false }

// pipeBytes returns 0: unknown.
func pipeBytes(*os.File) int { return 0 }

// reapTagged does nothing here: finding processes by their environment
// needs Linux's /proc.
func reapTagged(string, int) int { return 0 }

// growPipe leaves the pipe as it is.
func growPipe(*os.File) {}

// allocChunk returns a heap chunk for a long line (see longLine).
func allocChunk(size int) ([]byte, bool) { return make([]byte, size), false }

// freeChunk leaves a heap chunk to the garbage collector.
func freeChunk([]byte, bool) {}
