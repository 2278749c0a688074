package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

func benchLines(b *testing.B) [][]byte {
	data, err := os.ReadFile("testdata/lines/stream-2.1.330.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Split(bytes.TrimSpace(data), []byte("\n"))
}

// BenchmarkParse measures the stream-json parser over a real 2.1.330
// transcript. Compare with BenchmarkUnmarshal, the floor: a plain
// json.Unmarshal of the same lines into the wire structs.
func BenchmarkParse(b *testing.B) {
	lines := benchLines(b)
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		p := newParser()
		for _, l := range lines {
			p.Line(l)
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	lines := benchLines(b)
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			var w wireLine
			json.Unmarshal(l, &w)
		}
	}
}

// BenchmarkStreamMemory runs the fake CLI printing a 2 MB and a 200 MB
// stream through the whole process layer and reports the peak heap while
// consuming it (peak-heap-MB). Memory must not grow with stream size.
func BenchmarkStreamMemory(b *testing.B) {
	line := fmt.Sprintf(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}},"session_id":"s","parent_tool_use_id":null}`,
		bytes.Repeat([]byte("x"), 880))
	for _, size := range []int{2 << 20, 200 << 20} {
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			n := size / (len(line) + 1)
			script := append([]string{fmt.Sprintf("repeat %d %s", n, line)}, kit.Success("done", "s")...)
			be, _ := kit.Setup(b, nil, script...)
			b.SetBytes(int64(size))
			var peak atomic.Uint64
			for b.Loop() {
				runtime.GC()
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					var ms runtime.MemStats
					for {
						runtime.ReadMemStats(&ms)
						if ms.HeapInuse > peak.Load() {
							peak.Store(ms.HeapInuse)
						}
						select {
						case <-stop:
							return
						case <-time.After(5 * time.Millisecond):
						}
					}
				}()
				count := 0
				for ev, err := range be.Stream(context.Background(), &agentcli.Request{Prompt: "x"}) {
					if err != nil {
						b.Fatal(err)
					}
					if ev.Kind == agentcli.EventTextDelta {
						count++
					}
				}
				close(stop)
				wg.Wait()
				if count != n {
					b.Fatalf("got %d deltas, want %d", count, n)
				}
			}
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
		})
	}
}
