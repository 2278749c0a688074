package cluster

import (
	"context"
	"iter"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// The benchmarks compare a scripted backend run locally with the same
// backend behind the pool (an embedded NATS server, one worker, same
// machine), and print runs per second, time per event and added latency
// per event as metrics:
//
//	cd cluster && go test -run '^$' -bench . -benchtime 2s
//
// BenchmarkRuns: whole runs (a reply of 5 events), one at a time
// ("serial", the latency of a run) and 16 at once ("parallel", the
// throughput of one worker with 16 slots).
func BenchmarkRuns(b *testing.B) {
	call := agentclitest.Reply("a short answer from the model", "s")
	for _, mode := range []string{"serial", "parallel"} {
		b.Run("local/"+mode, func(b *testing.B) {
			benchRuns(b, scripted(call, agentcli.Capabilities{}), mode)
		})
		b.Run("pool/"+mode, func(b *testing.B) {
			n := startNATS(b)
			wo := benchWorkerOptions()
			startWorker(b, n, scripted(call, agentcli.Capabilities{}), wo)
			benchRuns(b, newPoolBackend(b, n, benchOptions()), mode)
		})
	}
}

func benchOptions() *Options {
	o := testOptions()
	o.Heartbeat, o.WorkerDeadAfter = time.Second, 10*time.Second
	return o
}

func benchWorkerOptions() *WorkerOptions {
	o := testWorkerOptions()
	o.Heartbeat, o.CallerDeadAfter, o.MaxRuns = time.Second, 10*time.Second, 16
	return o
}

func benchRuns(b *testing.B, be agentcli.Backend, mode string) {
	ctx := context.Background()
	req := &agentcli.Request{Prompt: "hello"}
	b.ResetTimer()
	start := time.Now()
	if mode == "serial" {
		for b.Loop() {
			if _, err := be.Run(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		var wg sync.WaitGroup
		work := make(chan struct{})
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range work {
					if _, err := be.Run(ctx, req); err != nil {
						b.Error(err)
					}
				}
			}()
		}
		for b.Loop() {
			work <- struct{}{}
		}
		close(work)
		wg.Wait()
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
}

// stamping is a backend whose "flood" run yields n text deltas as fast as
// they are read, each carrying the time it was yielded, optionally
// spaced by gap.
type stamping struct {
	*agentclitest.Backend
	n   int
	gap time.Duration
}

func (s *stamping) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		for range s.n {
			if s.gap > 0 {
				time.Sleep(s.gap)
			}
			if !yield(agentcli.Event{Kind: agentcli.EventTextDelta, Text: strconv.FormatInt(time.Now().UnixNano(), 10)}, nil) {
				return
			}
		}
		yield(agentcli.Event{Kind: agentcli.EventResult, Result: &agentcli.Result{Text: "done"}}, nil)
	}
}

// BenchmarkEvents streams runs of 1,000 text deltas: "flood" yields them
// as fast as the caller takes them (time per event is the throughput
// cost), "paced" one every 500 µs (latency per event is then the added
// delay of the trip, without queueing); each reports the median and 99th
// percentile of the delay from the backend's yield to the caller's.
func BenchmarkEvents(b *testing.B) {
	for _, pace := range []struct {
		name string
		gap  time.Duration
	}{{"flood", 0}, {"paced", 500 * time.Microsecond}} {
		mk := func() *stamping {
			return &stamping{Backend: agentclitest.NewBackend(), n: 1000, gap: pace.gap}
		}
		b.Run("local/"+pace.name, func(b *testing.B) { benchEvents(b, mk(), pace.gap == 0) })
		b.Run("pool/"+pace.name, func(b *testing.B) {
			n := startNATS(b)
			startWorker(b, n, mk(), benchWorkerOptions())
			benchEvents(b, newPoolBackend(b, n, benchOptions()), pace.gap == 0)
		})
	}
}

// benchEvents reports the delays, and the time per event when the run is
// not paced (paced, it is the pacing).
func benchEvents(b *testing.B, be agentcli.Backend, perEvent bool) {
	ctx := context.Background()
	var delays []time.Duration
	events := 0
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		for ev, err := range be.Stream(ctx, &agentcli.Request{Prompt: "flood"}) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind != agentcli.EventTextDelta {
				continue
			}
			ns, _ := strconv.ParseInt(ev.Text, 10, 64)
			delays = append(delays, time.Duration(time.Now().UnixNano()-ns))
			events++
		}
	}
	if perEvent {
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(events), "ns/event")
	}
	slices.Sort(delays)
	b.ReportMetric(float64(delays[len(delays)/2].Microseconds()), "µs-p50-delay")
	b.ReportMetric(float64(delays[len(delays)*99/100].Microseconds()), "µs-p99-delay")
}

// BenchmarkIdleWorker starts 20 idle workers, each on its own connection,
// and reports the Go heap and goroutines each one adds (the RSS of an
// idle agentcli-worker process is measured by the command's own
// benchmark).
func BenchmarkIdleWorker(b *testing.B) {
	n := startNATS(b)
	_ = newPoolBackend(b, n, nil) // the streams exist before the measure
	const workers = 20
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		var ws []*testWorker
		for range workers {
			ws = append(ws, startWorker(b, n, agentclitest.NewBackend(), benchWorkerOptions()))
		}
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		g1 := runtime.NumGoroutine()
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/workers/1024, "KiB-heap/worker")
		b.ReportMetric(float64(g1-g0)/workers, "goroutines/worker")
		for _, w := range ws {
			w.stop()
			w.done <- <-w.done
		}
	}
}
