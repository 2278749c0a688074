package jsonscan

import (
	"syscall"
	"unsafe"
)

// threadCPU returns the CPU time the calling OS thread has used, in
// nanoseconds. Benchmarks report throughput on it too (cpu-MB/s): unlike
// wall time it does not count time the thread spends descheduled, which
// on a busy shared machine makes wall-clock MB/s swing severalfold.
func threadCPU() int64 {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}
