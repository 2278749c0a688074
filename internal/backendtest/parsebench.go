package backendtest

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/agentcli/agentcli/internal/runner"
)

// BenchParse measures a parser over lines: MB/s of output (newlines
// counted) and allocations, and on the thread's CPU time (see threadCPU)
// cpu-MB/s and cpu-events/s. A new parser is made for every pass, as for
// every run.
func BenchParse(b *testing.B, lines [][]byte, newParser func() runner.Parser) {
	var size int64
	for _, l := range lines {
		size += int64(len(l)) + 1
	}
	b.SetBytes(size)
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := threadCPU()
	events := 0
	for b.Loop() {
		p := newParser()
		for _, l := range lines {
			events += len(p.Line(l))
		}
	}
	if cpu := threadCPU() - cpu; cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/float64(cpu)*1e3, "cpu-MB/s")
		b.ReportMetric(float64(events)/float64(cpu)*1e9, "cpu-events/s")
	}
}

// BenchLinear measures the cost per byte of one line made by line(n) for
// each n: a parser that is linear in its input reports about the same
// cpu-ns/byte (CPU time of the thread per input byte) for every n.
func BenchLinear(b *testing.B, name string, line func(n int) []byte, ns []int, newParser func() runner.Parser) {
	for _, n := range ns {
		l := line(n)
		b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
			b.SetBytes(int64(len(l)))
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := threadCPU()
			for b.Loop() {
				newParser().Line(l)
			}
			if cpu := threadCPU() - cpu; cpu > 0 {
				b.ReportMetric(float64(cpu)/float64(b.N)/float64(len(l)), "cpu-ns/byte")
			}
		})
	}
}
