//go:build !linux

package backendtest

// threadCPU is not measured on this system; the cpu-* metrics are not
// reported.
func threadCPU() int64 { return 0 }

// processCPU is not measured on this system.
func processCPU() int64 { return 0 }
