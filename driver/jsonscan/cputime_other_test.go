//go:build !linux

package jsonscan

// threadCPU is not measured on this system; cpu-MB/s is not reported.
func threadCPU() int64 { return 0 }
