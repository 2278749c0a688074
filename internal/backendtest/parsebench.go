package backendtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/drivertest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// BenchParse measures a parser over lines: MB/s of output (newlines
// counted) and allocations, and on the thread's CPU time (see threadCPU)
// cpu-MB/s and cpu-events/s. A new parser is made for every pass, as for
// every run.
func BenchParse(b *testing.B, lines [][]byte, newParser func() driver.Parser) {
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
func BenchLinear(b *testing.B, name string, line func(n int) []byte, ns []int, newParser func() driver.Parser) {
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

// BenchStream measures a whole run through the public API: a CLI that
// prints stream (written to a file and played by cat) read by b.Stream,
// every event yielded. Besides MB/s and allocations it reports
// cpu-ns/byte, the CPU time of this process (reading, parsing, the run
// loop and the garbage collector; not the CLI's) per byte of output.
func BenchStream(b *testing.B, newBackend func(*agentcli.Options) agentcli.Backend, stream []byte) {
	cli := catCLI(b, b.TempDir(), stream)
	be := newBackend(&agentcli.Options{Path: cli, Logger: slog.New(slog.DiscardHandler), Env: fakecli.Credentials()})
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	cpu := processCPU()
	events := 0
	for b.Loop() {
		for ev, err := range be.Stream(context.Background(), &agentcli.Request{Prompt: "x"}) {
			if err != nil {
				b.Fatal(err)
			}
			_ = ev
			events++
		}
	}
	if cpu := processCPU() - cpu; cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N)/float64(len(stream)), "cpu-ns/byte")
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// catCLI writes stream to a file in dir and returns a CLI (a shell script)
// that prints it, whatever its arguments and input.
func catCLI(tb testing.TB, dir string, stream []byte) string {
	out := filepath.Join(dir, "stream.jsonl")
	cli := filepath.Join(dir, "cli")
	if err := os.WriteFile(out, stream, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(cli, []byte("#!/bin/sh\nexec cat "+out+"\n"), 0o700); err != nil {
		tb.Fatal(err)
	}
	return cli
}

// LargeStreamReplay runs a CLI that prints stream (many batches of lines,
// decoded on the runner's goroutines when the parser allows) with a wire
// log, and checks that replaying the log (line by line on one goroutine)
// yields the same events. It then runs the CLI again with
// Request.DropRaw, and checks that the events are the same but for Raw,
// and with several Request.MaxRawBytes (see checkMaxRaw). A line of an
// unknown event type, a line that is not JSON, huge (a line, with its
// newline, longer than the reader's buffers and than
// agentcli.DefaultMaxRawBytes, whose long string DropRaw and MaxRawBytes
// decode in place) and a huge line of an unknown event type are added to
// the middle of stream, where they are read in large batches.
func LargeStreamReplay(t *testing.T, newBackend func(*agentcli.Options) agentcli.Backend, stream, huge []byte) {
	const unknown, notJSON = `{"type":"agentcli.test.future","n":1}`, `not JSON`
	if len(bytes.TrimSpace(huge)) <= agentcli.DefaultMaxRawBytes {
		t.Fatalf("the huge line has %d bytes, not more than DefaultMaxRawBytes", len(huge))
	}
	hugeUnknown := `{"type":"agentcli.test.future","text":` + JSONString(BigText(agentcli.DefaultMaxRawBytes)) + `}`
	mid := len(stream) / 2
	mid += bytes.IndexByte(stream[mid:], '\n') + 1
	stream = slices.Concat(stream[:mid], []byte(unknown+"\n"+notJSON+"\n"), huge, []byte(hugeUnknown+"\n"), stream[mid:])
	be := newBackend(&agentcli.Options{Path: catCLI(t, t.TempDir(), stream), Logger: slog.New(slog.DiscardHandler), Env: fakecli.Credentials()})
	defer func() {
		if !t.Failed() {
			checkDropRaw(t, be, unknown, notJSON)
		}
		if !t.Failed() {
			checkMaxRaw(t, be, hugeUnknown)
		}
	}()
	var log bytes.Buffer
	live, err := Collect(context.Background(), be, &agentcli.Request{Prompt: "x", WireLog: &log})
	if err != nil || len(live) < 1000 {
		t.Fatalf("%d events, err %v", len(live), err)
	}
	replayed, rerr := drivertest.CollectSeq(agentcli.Replay(be, bytes.NewReader(log.Bytes())))
	if d := diffEvents(live, err, replayed, rerr); d != "" {
		t.Fatalf("replay differs from the live run: %s", d)
	}
}

// diffEvents describes the first difference between two runs' events and
// errors (Result.Duration aside), or returns "".
func diffEvents(want []agentcli.Event, werr error, got []agentcli.Event, gerr error) string {
	if sameRun(want, werr, got, gerr) {
		return "" // equal values describe alike: no need to describe them
	}
	g := strings.Split(drivertest.DescribeRun(got, gerr), "\n")
	w := strings.Split(drivertest.DescribeRun(want, werr), "\n")
	at := func(l []string, i int) string {
		if i < len(l) {
			return l[i]
		}
		return "(none)"
	}
	for i := range max(len(g), len(w)) {
		if at(g, i) != at(w, i) {
			return fmt.Sprintf("at event %d of %d (got %d)\nwant: %.300s\ngot:  %.300s", i, len(w), len(g), at(w, i), at(g, i))
		}
	}
	return ""
}

// sameRun reports that two runs' events and errors are deeply equal,
// Result.Duration aside. It is diffEvents' fast path: describing every
// event of a large run as JSON took a race-enabled test most of its time.
func sameRun(want []agentcli.Event, werr error, got []agentcli.Event, gerr error) bool {
	if len(want) != len(got) || !reflect.DeepEqual(werr, gerr) {
		return false
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Result != nil && g.Result != nil {
			wr, gr := *w.Result, *g.Result
			wr.Duration, gr.Duration = 0, 0
			w.Result, g.Result = &wr, &gr
		}
		if !reflect.DeepEqual(w, g) {
			return false
		}
	}
	return true
}

// BenchFirstEvent measures the time from Stream to the first event of a
// CLI that prints stream, against the time from starting the same CLI with
// a bare os/exec to reading its first line (first-ns and bare-first-ns).
func BenchFirstEvent(b *testing.B, newBackend func(*agentcli.Options) agentcli.Backend, stream []byte) {
	cli := catCLI(b, b.TempDir(), stream)
	be := newBackend(&agentcli.Options{Path: cli, Logger: slog.New(slog.DiscardHandler), Env: fakecli.Credentials()})
	var first, bare time.Duration
	for b.Loop() {
		start := time.Now()
		for _, err := range be.Stream(context.Background(), &agentcli.Request{Prompt: "x"}) {
			if err != nil {
				b.Fatal(err)
			}
			first += time.Since(start)
			break
		}
		start = time.Now()
		cmd := exec.Command(cli)
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := bufio.NewReader(out).ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
		bare += time.Since(start)
		cmd.Process.Kill()
		cmd.Wait()
	}
	b.ReportMetric(float64(first.Nanoseconds())/float64(b.N), "first-ns")
	b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "bare-first-ns")
}

// checkDropRaw runs be (see LargeStreamReplay) with and without
// Request.DropRaw: the events must be the same but for Raw, which only
// EventUnknown events and the notices of lines that did not parse keep
// (among them the unknown and the non-JSON line added to the stream), and
// replaying the DropRaw run's wire log must yield its events again.
func checkDropRaw(t *testing.T, be agentcli.Backend, unknown, notJSON string) {
	live, err := Collect(context.Background(), be, &agentcli.Request{Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	dropped, derr := Collect(context.Background(), be, &agentcli.Request{Prompt: "x", DropRaw: true, WireLog: &log})
	if derr != nil {
		t.Fatal(derr)
	}
	replayed, rerr := drivertest.CollectSeq(agentcli.Replay(be, bytes.NewReader(log.Bytes())))
	if d := diffEvents(dropped, derr, replayed, rerr); d != "" {
		t.Fatalf("DropRaw: replay differs from the live run: %s", d)
	}
	if len(dropped) != len(live) {
		t.Fatalf("DropRaw: %d events, want %d", len(dropped), len(live))
	}
	added := 0
	for i, ev := range dropped {
		var pe *agentcli.ParseError
		keeps := ev.Kind == agentcli.EventUnknown || ev.Kind == agentcli.EventNotice && errors.As(ev.Err, &pe)
		if keeps && !bytes.Equal(ev.Raw, live[i].Raw) || !keeps && len(ev.Raw) > 0 || ev.Result != nil && len(ev.Result.Raw) > 0 {
			t.Fatalf("DropRaw: event %d (%s) has Raw %.100q, without DropRaw %.100q", i, ev.Kind, ev.Raw, live[i].Raw)
		}
		if keeps && (string(ev.Raw) == unknown || string(ev.Raw) == notJSON) {
			added++
		}
	}
	if added != 2 {
		t.Errorf("DropRaw: %d events for the unknown and the non-JSON line, want 2", added)
	}
	for i := range live {
		driver.DropRaw(&live[i])
	}
	if d := diffEvents(live, err, dropped, derr); d != "" {
		t.Fatalf("DropRaw: the events differ but for Raw: %s", d)
	}
}

// checkMaxRaw runs be (see LargeStreamReplay) keeping every Raw
// (Request.MaxRawBytes -1), then by default and with a smaller limit:
// each run must yield the events of the first with a Raw longer than its
// limit dropped (driver.CapRaw), the same otherwise, byte for byte, and
// replaying its wire log must yield them again. Lines over the limit are
// handed to the parser for keeps (their long strings decoded in place):
// the huge line of an unknown event type keeps its Raw as printed.
func checkMaxRaw(t *testing.T, be agentcli.Backend, hugeUnknown string) {
	all, err := Collect(context.Background(), be, &agentcli.Request{Prompt: "x", MaxRawBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 300} {
		var log bytes.Buffer
		got, gerr := Collect(context.Background(), be, &agentcli.Request{Prompt: "x", MaxRawBytes: limit, WireLog: &log})
		kept := limit
		if limit == 0 {
			kept = agentcli.DefaultMaxRawBytes
		}
		want := make([]agentcli.Event, len(all))
		dropped, unknown := 0, 0
		for i, ev := range all {
			if ev.Result != nil {
				r := *ev.Result
				ev.Result = &r
			}
			had := len(ev.Raw)
			driver.CapRaw(&ev, kept)
			if had > 0 && len(ev.Raw) == 0 {
				dropped++
			}
			if string(ev.Raw) == hugeUnknown {
				unknown++
			}
			want[i] = ev
		}
		if dropped == 0 || unknown != 1 {
			t.Fatalf("MaxRawBytes %d: %d events lose their Raw and %d keep the huge unknown line; want some, and 1", limit, dropped, unknown)
		}
		if d := diffEvents(want, err, got, gerr); d != "" {
			t.Fatalf("MaxRawBytes %d: the events differ from a run keeping every Raw, with Raw over %d bytes dropped: %s", limit, kept, d)
		}
		replayed, rerr := drivertest.CollectSeq(agentcli.Replay(be, bytes.NewReader(log.Bytes())))
		if d := diffEvents(got, gerr, replayed, rerr); d != "" {
			t.Fatalf("MaxRawBytes %d: replay differs from the live run: %s", limit, d)
		}
	}
}

// HugeLineAllocs runs a CLI that prints huge, one line of many MB (a
// tool's whole output), by default and keeping every Raw
// (Request.MaxRawBytes -1), and checks what each run allocates: by
// default, since the line is longer than agentcli.DefaultMaxRawBytes, its
// long strings are decoded in the line's memory, so the run allocates
// little more than the line (at most 1.25 times it); keeping Raw, the
// escaped output is decoded into a copy next to the line, which the
// measure must see (more than 1.25 times). Only Linux reads a long line
// into memory outside the Go heap before it is joined (internal/proc);
// elsewhere the test is skipped.
func HugeLineAllocs(t *testing.T, newBackend func(*agentcli.Options) agentcli.Backend, huge []byte) {
	if runtime.GOOS != "linux" {
		t.Skip("a long line's pieces are on the Go heap here, counted as allocations")
	}
	be := newBackend(&agentcli.Options{Path: catCLI(t, t.TempDir(), huge), Logger: slog.New(slog.DiscardHandler), Env: fakecli.Credentials()})
	allocs := func(req *agentcli.Request, enough float64) float64 {
		// The least of three runs: what other goroutines allocate
		// meanwhile counts too. A run allocating at most enough times
		// the line ends the runs (enough 0: all three run).
		least := uint64(1 << 62)
		for try := 0; try < 3 && float64(least) > enough*float64(len(huge)); try++ {
			var evs []agentcli.Event
			var err error
			n := Allocated(func() { evs, err = Collect(context.Background(), be, req) })
			if err != nil || len(evs) == 0 {
				t.Fatalf("%d events, err %v", len(evs), err)
			}
			least = min(least, n)
		}
		return float64(least) / float64(len(huge))
	}
	if got := allocs(&agentcli.Request{Prompt: "x"}, 1.25); got > 1.25 {
		t.Errorf("by default, a run printing a %d-byte line allocated %.2f times the line, want at most 1.25", len(huge), got)
	}
	if got := allocs(&agentcli.Request{Prompt: "x", MaxRawBytes: -1}, 0); got <= 1.25 {
		t.Errorf("keeping every Raw, a run printing a %d-byte line allocated %.2f times the line, want more than 1.25 (its decoded copy)", len(huge), got)
	}
}

// BenchVsOracle runs BenchParse with the parser and, as "…/oracle", with
// the oracle (the encoding/json parser it replaced) on the lines of the
// files matching glob ("real", every transcript) and on huge, one line
// with the placeholder BIG replaced by a JSON string of about 8 MB
// (BigText).
func BenchVsOracle(b *testing.B, glob, huge string, newParser, newOracle func() driver.Parser) {
	names, _ := filepath.Glob(glob)
	if len(names) == 0 {
		b.Fatalf("no files match %s", glob)
	}
	var real [][]byte
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		real = append(real, bytes.Split(bytes.TrimSpace(data), []byte("\n"))...)
	}
	inputs := []struct {
		name  string
		lines [][]byte
	}{{"real", real}, {"huge", [][]byte{[]byte(strings.Replace(huge, "BIG", JSONString(BigText(8<<20)), 1))}}}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) { BenchParse(b, in.lines, newParser) })
		b.Run(in.name+"/oracle", func(b *testing.B) { BenchParse(b, in.lines, newOracle) })
	}
}
