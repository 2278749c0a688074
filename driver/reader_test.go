package driver

import (
	"context"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/agentcli/agentcli/internal/proc"
)

func startSh(t *testing.T, script string) *proc.Process {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p, err := proc.Start(context.Background(), proc.Spec{Path: sh, Args: []string{"-c", script}, KillGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// A consumer that stops taking lines stops the reader: it reads at most
// about three batches ahead (one handed over, one in the channel, one
// being filled), however much the CLI has to say, and the pipe then
// blocks the CLI.
func TestReaderBackpressure(t *testing.T) {
	p := startSh(t, `yes 0123456789 | head -n 5000000`)
	lg := &runLog{}
	r := startReader(context.Background(), p, lg, nil, nil, 0, false, math.MaxInt)
	if b, ok := r.next(); !ok || len(b) == 0 {
		t.Fatal("no first batch")
	}
	// Give a reader that ignored the bound time to run far ahead.
	time.Sleep(300 * time.Millisecond)
	if n := r.read.Load(); n > 3*batchLines+1 {
		t.Fatalf("the reader read %d lines ahead of a stalled consumer", n)
	}
	r.stop()
	if e := p.Wait(); !e.Stopped {
		t.Fatalf("exit %+v: the CLI was not stopped", e)
	}
}

// Borrowed lines (Request.DropRaw) arrive intact, whatever their length,
// and go round in a few buffers with the batches instead of one
// allocation each: 7 MB of lines in hundreds of batches use a few dozen
// buffers.
func TestReaderBorrowed(t *testing.T) {
	// Lines of 1 to 6 digits and, every 10000 lines, one of 300 KiB, longer
	// than the read buffer, which has an allocation of its own.
	p := startSh(t, `awk 'BEGIN { big = "b"; while (length(big) < 307200) big = big big; big = substr(big, 1, 307200); for (i = 0; i < 200000; i++) { print i; if (i % 10000 == 9999) print big } }'`)
	r := startReader(context.Background(), p, &runLog{}, nil, nil, 0, true, math.MaxInt)
	n, batches, bigs := 0, 0, 0
	mems := map[*byte]bool{}
	for b, ok := r.next(); ok; b, ok = r.next() {
		batches++
		if m := b[0].mem; cap(m) > 0 {
			mems[unsafe.SliceData(m)] = true
		}
		mem := b[0].mem[:cap(b[0].mem)]
		for _, l := range b {
			// A line handed over for keeps (owned) is never in the batch's
			// buffer, which is reused; a line too long for any buffer is
			// always owned. (A line in a buffer the batch outgrew, which
			// is not reused, is neither.)
			in := len(mem) > 0 && len(l.Data) > 0 && uintptr(unsafe.Pointer(&l.Data[0])) >= uintptr(unsafe.Pointer(&mem[0])) &&
				uintptr(unsafe.Pointer(&l.Data[0])) < uintptr(unsafe.Pointer(&mem[0]))+uintptr(len(mem))
			if l.owned && in || len(l.Data) == 307200 && !l.owned {
				t.Fatalf("line %q: owned %v, in the batch's buffer %v", l.Data[:min(len(l.Data), 8)], l.owned, in)
			}
			if len(l.Data) == 307200 {
				if strings.Trim(string(l.Data), "b") != "" {
					t.Fatalf("big line %d is not all b", bigs)
				}
				bigs++
				continue
			}
			if want := itoa(n); string(l.Data) != want {
				t.Fatalf("line %d = %q", n, l.Data)
			}
			n++
		}
		r.recycle(b)
	}
	if n != 200000 || bigs != 20 {
		t.Fatalf("%d lines, %d big ones", n, bigs)
	}
	// The buffers: those of the batches in circulation (at most about
	// cap(r.free) plus those in flight), those outgrown on the way to the
	// full size (4 KiB doubling to 512 KiB), and those of batches recycle
	// dropped: a few dozen at most, against one per batch without reuse.
	if limit := 50; len(mems) > limit || batches < 8*limit {
		t.Fatalf("%d batches used %d buffers (want at most %d)", batches, len(mems), limit)
	}
	if e := p.Wait(); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
}

// Lines that are not borrowed (the run keeps Raw) are never reused: every
// line kept to the end is intact and none can be appended to over a
// neighbour (its capacity ends with its newline), short or long (10 KiB,
// every 1000th; 40 KiB, every 10000th).
func TestReaderKeptLines(t *testing.T) {
	p := startSh(t, `awk 'BEGIN { for (i = 0; i < 200000; i++) { print i; if (i % 1000 == 999) printf "%10240s\n", "m"; if (i % 10000 == 9999) printf "%40960s\n", "b" } }'`)
	r := startReader(context.Background(), p, &runLog{}, nil, nil, 0, false, math.MaxInt)
	var lines [][]byte
	for b, ok := r.next(); ok; b, ok = r.next() {
		for _, l := range b {
			// Its capacity ends with its own newline.
			if l.owned || cap(l.Data) > len(l.Data)+1 {
				t.Fatalf("line %q: owned %v, cap %d", l.Data[:min(len(l.Data), 8)], l.owned, cap(l.Data))
			}
			lines = append(lines, l.Data)
		}
		r.recycle(b)
	}
	n, mids, bigs := 0, 0, 0
	for _, l := range lines {
		switch len(l) {
		case 10240, 40960:
			if strings.TrimLeft(string(l), " ") != "m" && strings.TrimLeft(string(l), " ") != "b" {
				t.Fatalf("long line %q…%q", l[:8], l[len(l)-8:])
			}
			if len(l) == 10240 {
				mids++
			} else {
				bigs++
			}
		default:
			if want := itoa(n); string(l) != want {
				t.Fatalf("line %d = %q", n, l)
			}
			n++
		}
	}
	if n != 200000 || mids != 200 || bigs != 20 {
		t.Fatalf("%d lines, %d of 10 KiB, %d of 40 KiB", n, mids, bigs)
	}
	if e := p.Wait(); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
}

// Every line arrives, in order, with the batches recycled, and the reader
// ends by itself at EOF.
func TestReaderOrder(t *testing.T) {
	p := startSh(t, `i=0; while [ $i -lt 3000 ]; do echo $i; i=$((i+1)); done`)
	r := startReader(context.Background(), p, &runLog{}, nil, nil, 0, false, math.MaxInt)
	n := 0
	for b, ok := r.next(); ok; b, ok = r.next() {
		for _, l := range b {
			if want := itoa(n); string(l.Data) != want || l.owned {
				t.Fatalf("line %d = %q (owned %v, not borrowing)", n, l.Data, l.owned)
			}
			n++
		}
		r.recycle(b)
	}
	if n != 3000 {
		t.Fatalf("%d lines", n)
	}
	r.stop() // a no-op once ended
	if e := p.Wait(); e.Code != 0 || e.Stopped {
		t.Fatalf("exit %+v", e)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// numDecoder decodes a line into its number.
func numDecoder() func(*readLine) {
	return func(l *readLine) {
		if string(l.Data) == "boom" {
			panic("decoder panic")
		}
		n, _ := l.dec.(*int)
		if n == nil {
			n = new(int)
			l.dec = n
		}
		*n, _ = strconv.Atoi(string(l.Data))
		l.decoded = true
	}
}

// With decoders (as many as the runner uses, decoders, and one more), every line
// arrives in order, the first few undecoded and the rest decoded once (the
// decoded values recycled with their batches).
func TestReaderDecodersOrder(t *testing.T) {
	for _, n := range []int{decoders(), 3} {
		p := startSh(t, `seq 0 19999`)
		r := startReader(context.Background(), p, &runLog{}, nil, numDecoder, n, false, math.MaxInt)
		i, applied := 0, 0
		for b, ok := r.next(); ok; b, ok = r.next() {
			for _, l := range b {
				got := string(l.Data) // the first batches are not decoded
				if l.decoded {
					got = strconv.Itoa(*l.dec.(*int))
					applied++
				}
				if got != strconv.Itoa(i) {
					t.Fatalf("%d decoders, line %d: got %s", n, i, got)
				}
				i++
			}
			r.recycle(b)
		}
		if i != 20000 || applied < 19000 {
			t.Fatalf("%d decoders: %d lines, %d decoded", n, i, applied)
		}
		if e := p.Wait(); e.Code != 0 {
			t.Fatalf("exit %+v", e)
		}
	}
}

// With decoders too, a stalled consumer stops reading after a few
// batches.
func TestReaderDecodersBackpressure(t *testing.T) {
	for _, n := range []int{decoders(), 3} {
		p := startSh(t, `yes 12345 | head -n 5000000`)
		r := startReader(context.Background(), p, &runLog{}, nil, numDecoder, n, false, math.MaxInt)
		if _, ok := r.next(); !ok {
			t.Fatal("no first batch")
		}
		time.Sleep(300 * time.Millisecond)
		// One batch taken, and per decoder one waiting, one being decoded,
		// one handed in; one being filled.
		if read := r.read.Load(); read > int64(2+3*n)*batchLines+1 {
			t.Fatalf("%d decoders: the reader read %d lines ahead of a stalled consumer", n, read)
		}
		r.stop()
		if e := p.Wait(); !e.Stopped {
			t.Fatalf("exit %+v: the CLI was not stopped", e)
		}
	}
}

// A decoder's panic is raised on the consumer's goroutine, and the
// stages end.
func TestReaderDecoderPanic(t *testing.T) {
	p := startSh(t, `seq 1 3000; echo boom; yes 7 | head -n 1000000`)
	r := startReader(context.Background(), p, &runLog{}, nil, numDecoder, 2, false, math.MaxInt)
	defer func() {
		if v := recover(); v != "decoder panic" {
			t.Fatalf("recovered %v, want the decoder's panic", v)
		}
		if e := p.Wait(); !e.Stopped {
			t.Fatalf("exit %+v: the CLI was not stopped", e)
		}
	}()
	for b, ok := r.next(); ok; b, ok = r.next() {
		r.recycle(b)
	}
	t.Fatal("the stages ended without the panic")
}

// ownDecoder decodes a line into whether it was handed over for keeps.
func ownDecoder() func(*readLine) {
	return func(l *readLine) { l.dec, l.decoded = ptr(l.owned), true }
}

func ptr[T any](v T) *T { return &v }

// When borrowing, decoders take the lines that have memory of their own
// with owned set, and only those.
func TestReaderDecodeOwned(t *testing.T) {
	p := startSh(t, `awk 'BEGIN { big = "b"; while (length(big) < 307200) big = big big; for (i = 0; i < 20000; i++) { print i; if (i % 1000 == 999) print big } }'`)
	r := startReader(context.Background(), p, &runLog{}, nil, ownDecoder, 2, true, math.MaxInt)
	owned := 0
	for b, ok := r.next(); ok; b, ok = r.next() {
		for _, l := range b {
			if l.decoded && *l.dec.(*bool) != l.owned {
				t.Fatalf("line %.8q: owned %v, decoded as owned %v", l.Data, l.owned, *l.dec.(*bool))
			}
			if l.decoded && l.owned {
				owned++
			}
		}
		r.recycle(b)
	}
	if owned < 15 {
		t.Fatalf("%d lines decoded as owned, want the big ones (20)", owned)
	}
	if e := p.Wait(); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
}

// When not borrowing (the run keeps Raw), the lines longer than ownOver,
// trimmed, are handed over for keeps, wherever they were read (a chunk
// or memory of their own), and only those.
func TestReaderOwnOver(t *testing.T) {
	p := startSh(t, `awk 'BEGIN { big = "b"; while (length(big) < 307200) big = big big; for (i = 0; i < 20000; i++) { print i; if (i % 1000 == 999) print big; if (i % 1000 == 500) printf "%0300d  \n", i; if (i % 1000 == 600) printf "%0301d\n", i } }'`)
	const over = 300
	r := startReader(context.Background(), p, &runLog{}, nil, ownDecoder, 2, false, over)
	owned := 0
	for b, ok := r.next(); ok; b, ok = r.next() {
		for _, l := range b {
			if want := len(strings.TrimSpace(string(l.Data))) > over; l.owned != want {
				t.Fatalf("line of %d bytes (%.8q): owned %v, want %v", len(l.Data), l.Data, l.owned, want)
			}
			if l.decoded && *l.dec.(*bool) != l.owned {
				t.Fatalf("line %.8q: owned %v, decoded as owned %v", l.Data, l.owned, *l.dec.(*bool))
			}
			if l.owned {
				owned++
			}
		}
		r.recycle(b)
	}
	if owned != 40 {
		t.Fatalf("%d lines handed over, want the 20 big ones and the 20 of 301 bytes", owned)
	}
	if e := p.Wait(); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
}

// roomHeld returns how many runs hold the heap room and its first byte
// (nil when it is not allocated), read under its lock.
func roomHeld() (int, *byte) {
	room.mu.Lock()
	defer room.mu.Unlock()
	if room.mem == nil {
		return room.runs, nil
	}
	return room.runs, &room.mem[0]
}

// readAtLeast takes the lines r hands over until n bytes have arrived.
func readAtLeast(t *testing.T, r *lineReader, n int) {
	t.Helper()
	got := 0
	for got < n {
		b, ok := r.next()
		if !ok {
			t.Fatalf("the run ended after %d bytes", got)
		}
		for _, l := range b {
			got += len(l.Data)
		}
		r.recycle(b)
	}
}

// A run whose lines are kept holds the heap room once it has read more
// than roomAfter bytes, until it stops reading; two such runs share one
// room; a shorter run, and a run whose lines are borrowed, never take it.
func TestReaderHeapRoom(t *testing.T) {
	// Lines of 1000 bytes, then the CLI stays up with nothing to say.
	lines := func(n int) string {
		return `awk 'BEGIN { s = sprintf("%1000s", "x"); for (i = 0; i < ` + strconv.Itoa(n) + `; i++) print s }'; exec sleep 60`
	}
	if n, mem := roomHeld(); n != 0 || mem != nil {
		t.Fatalf("before any run: %d runs hold the room (allocated: %v)", n, mem != nil)
	}
	short := startReader(context.Background(), startSh(t, lines(roomAfter/1001-10)), &runLog{}, nil, nil, 0, false, math.MaxInt)
	readAtLeast(t, short, roomAfter-20000)
	borrowed := startReader(context.Background(), startSh(t, lines(2*roomAfter/1000+10)), &runLog{}, nil, nil, 0, true, math.MaxInt)
	readAtLeast(t, borrowed, 2*roomAfter)
	if n, mem := roomHeld(); n != 0 || mem != nil {
		t.Fatalf("a short run and a borrowing one: %d runs hold the room (allocated: %v)", n, mem != nil)
	}
	var long [2]*lineReader
	for i := range long {
		long[i] = startReader(context.Background(), startSh(t, lines(roomAfter/1000+10)), &runLog{}, nil, numDecoder, 2, false, math.MaxInt)
		readAtLeast(t, long[i], roomAfter+5000)
		// The reading goroutine counts a line before it hands it over.
		if n, mem := roomHeld(); n != i+1 || mem == nil {
			t.Fatalf("after %d long runs: %d runs hold the room (allocated: %v)", i+1, n, mem != nil)
		}
	}
	_, first := roomHeld()
	long[0].stop()
	if n, mem := roomHeld(); n != 1 || mem != first {
		t.Fatalf("one of two long runs stopped: %d runs hold the room (allocated: %v, the same: %v)", n, mem != nil, mem == first)
	}
	long[1].stop()
	short.stop()
	borrowed.stop()
	if n, mem := roomHeld(); n != 0 || mem != nil {
		t.Fatalf("every run stopped: %d runs hold the room (allocated: %v)", n, mem != nil)
	}
}
