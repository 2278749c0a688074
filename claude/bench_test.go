package claude

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/benchdata"
)

// The parser benchmarks run the parser and, for comparison, the oracle
// (the former encoding/json parser, oracle_test.go) on
//
//	real   every stream-json transcript under testdata/real and testdata/lines
//	mix    2 MiB of internal/benchdata's synthetic claude stream
//	huge   one 8 MiB tool-result line (benchdata's HugeLine)
//
//	go test -run '^$' -bench 'Parse|Linear' -benchmem ./claude/
func benchInputs(b *testing.B) map[string][][]byte {
	var real [][]byte
	names, _ := filepath.Glob(filepath.Join("testdata", "real", "*-stream.stdout"))
	names = append(names, filepath.Join("testdata", "lines", "stream-2.1.330.jsonl"))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		real = append(real, bytes.Split(bytes.TrimSpace(data), []byte("\n"))...)
	}
	g, _ := benchdata.New(benchdata.Claude)
	return map[string][][]byte{
		"real": real,
		"mix":  benchdata.Lines(benchdata.Claude, 2<<20),
		"huge": {bytes.TrimSuffix(g.HugeLine(8<<20), []byte("\n"))},
	}
}

func BenchmarkParse(b *testing.B) {
	inputs := benchInputs(b)
	for _, name := range []string{"real", "mix", "huge"} {
		b.Run(name, func(b *testing.B) {
			backendtest.BenchParse(b, inputs[name], func() driver.Parser { return newParser() })
		})
		b.Run(name+"/oracle", func(b *testing.B) {
			backendtest.BenchParse(b, inputs[name], func() driver.Parser { return newOracleParser() })
		})
	}
}

// BenchmarkLinear: the inputs that were quadratic (issue 7) cost the same
// per byte at depth N and 2N, and at size S and 2S.
func BenchmarkLinear(b *testing.B) {
	p := func() driver.Parser { return newParser() }
	backendtest.BenchLinear(b, "nested-arrays", func(n int) []byte { return []byte(nestedArrays(n)) }, []int{2500, 5000}, p)
	backendtest.BenchLinear(b, "nested-content", func(n int) []byte { return []byte(nestedContent(n)) }, []int{2000, 4000}, p)
	backendtest.BenchLinear(b, "text", func(n int) []byte {
		text := strings.Repeat(`say \"hi\"\n\tthen é `, n/20)
		return []byte(`{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"` + text + `"}]},"session_id":"s"}`)
	}, []int{1 << 20, 2 << 20}, p)
	backendtest.BenchLinear(b, "many-blocks", func(n int) []byte {
		blk := `{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},`
		return []byte(`{"type":"user","message":{"content":[` + strings.Repeat(blk, n/len(blk)) + `null]},"session_id":"s"}`)
	}, []int{1 << 20, 2 << 20}, p)
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

// BenchmarkStream: a whole run through the public API, the CLI replaced by
// cat playing 64 MiB of benchdata's synthetic stream.
func BenchmarkStream(b *testing.B) {
	backendtest.BenchStream(b, New, benchdata.Stream(benchdata.Claude, 64<<20))
}

// BenchmarkFirstEvent: the time to the first event of a run, against a
// bare os/exec reading the first line of the same CLI.
func BenchmarkFirstEvent(b *testing.B) {
	backendtest.BenchFirstEvent(b, New, benchdata.Stream(benchdata.Claude, 4<<20))
}
