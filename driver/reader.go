package driver

import (
	"bytes"
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/agentcli/agentcli/driver/wirelog"
	"github.com/agentcli/agentcli/internal/proc"
)

// lineReader reads a run's stdout on goroutines of its own, so that
// waiting for the pipe, copying lines, checking their UTF-8, logging them
// and (for a Parser made by Lines) decoding them overlap with each other and with
// the caller's handling of events.
//
// The reading goroutine gathers lines in batches. Without decoders it
// hands each batch to the run's goroutine over a channel; with decoders,
// batch k goes to decoder k mod n, which decodes its lines and hands it on
// over a channel of its own, and the run's goroutine takes the batches
// from the decoders in turn, so in order. Every channel holds one batch:
// when the caller is slow, the stages wait, reading stops, and the pipe
// fills up and blocks the CLI (backpressure); what is read ahead is
// bounded by a few batches of batchBytes (or one line, when a line is
// longer).
//
// Only the reading goroutine calls p.ReadLine. The run's goroutine calls
// p.Wait (and p.Close) only after every stage has ended: after stop, or
// once the last channel is seen closed. A panic on a stage (a parser's
// decoder, the wire log's writer) is raised again on the run's goroutine.
type lineReader struct {
	p *proc.Process
	// direct carries the first batches, small ones, straight to the run's
	// goroutine (see run), when there are decoders; nil once closed.
	direct chan []readLine
	outs   []chan []readLine // what the run's goroutine reads, in turn
	turn   int
	free   chan []readLine // batches the run's goroutine is done with
	done   chan struct{}   // closed to make the stages give up
	once   sync.Once       // closes done
	wg     sync.WaitGroup
	ended  bool         // the stages have ended
	read   atomic.Int64 // lines read (for tests)
	// checkUTF8: the reading goroutine checks each line's UTF-8 (there are
	// no decoders, see run).
	checkUTF8 bool
	// borrow: lines are read into memory that goes round with the
	// batches (see startReader).
	borrow bool
	// ownOver: when not borrowing, a line longer than this (trimmed) is
	// handed over for keeps (see startReader).
	ownOver int

	mu    sync.Mutex
	panic any // the first panic of a stage
}

// readLine is a line as the reader hands it over: utf8 reports that it is
// valid UTF-8 (checked on the reading goroutine, so that the parser need
// not), and dec, when decoded is set, is the line decoded by a decoder
// (see fastParser); dec stays with the batch for reuse.
type readLine struct {
	proc.Line
	utf8 bool
	// owned: the line is handed over for keeps: while borrowing, a line
	// read into memory of its own, not the batch's; otherwise a line
	// longer than ownOver.
	owned   bool
	decoded bool
	dec     any
	// mem, in a batch's first line only, is the memory the batch's
	// borrowed lines were read into (see startReader), reused with the
	// batch once it is recycled.
	mem []byte
}

// Batch bounds: a batch is sent when it holds batchBytes or batchLines,
// or at once when no more output is waiting, so that a line reaches the
// caller as soon as it arrives.
const (
	batchBytes = 256 << 10
	batchLines = 256
)

// decoders is how many goroutines decode lines for a Parser made by Lines
// when the process may run goroutines in parallel: two, whether the run
// keeps Raw or not. Each decoder holds up to three batches in flight (one
// handed in, one being decoded, one handed on), so each one more adds
// about 1 MB of lines and decoded strings to the live heap, and twice that
// to the peak. A third decoder was measured without a gain on two CPUs
// (internal/bench, 200 MB codex and claude streams, 6 interleaved rounds:
// CPU time and MB/s within noise) for 1-3 MB more peak RSS, which put
// codex over its 30 MB bound; see README, "Performance".
func decoders() int {
	if runtime.GOMAXPROCS(0) < 2 {
		return 0
	}
	return 2
}

// Bounds of the memory a batch's borrowed lines are read into: it starts
// small, so that a short run costs little, and doubles, as lines do not
// fit, up to what a full batch needs (batchBytes, plus its last line, of
// up to the read buffer's size). A longer line has an allocation of its
// own.
const (
	minBatchMem = 4 << 10
	maxBatchMem = 2 * batchBytes
)

// Heap room: a run whose lines are not borrowed allocates every line it
// reads, and the decoded strings of its events, while its live heap stays
// small (a few batches in flight), so the collector, which runs once the
// heap has grown by as much as it holds live (GOGC=100), runs every few
// megabytes: about 90 times in a 200 MB stream, each costing a couple of
// milliseconds of CPU (stopping the threads, waking its workers, faulting
// returned pages back in). Once a run has read roomAfter bytes of lines it
// keeps, the process holds one allocation of roomBytes, never read or
// written, until the last such run stops reading: it counts as live heap,
// so collections come about a third less often. The room is one for the
// whole process however many runs hold it, so it raises the heap a
// collection waits for by at most twice roomBytes; a short run never
// takes it. Measured (internal/bench, 200 MB streams, interleaved with a
// build without it): see README, "Performance".
const (
	roomAfter = 8 << 20
	roomBytes = 2 << 20
)

var room struct {
	mu   sync.Mutex
	runs int    // reading goroutines holding the room
	mem  []byte // the room, while runs > 0
}

// holdRoom takes the heap room for a run; releaseRoom gives it back.
func holdRoom() {
	room.mu.Lock()
	if room.runs == 0 {
		room.mem = make([]byte, roomBytes)
	}
	room.runs++
	room.mu.Unlock()
}

func releaseRoom() {
	room.mu.Lock()
	room.runs--
	if room.runs == 0 {
		room.mem = nil
	}
	room.mu.Unlock()
}

// startReader starts reading p's stdout until it ends or ctx is done.
// Each line is noted in the run log and recorded in the wire log (if any)
// on the reading goroutine, in order. When newDecoder is not nil, lines
// are decoded by n of its decoders. When borrow is true, the lines are
// read into memory that is reused once their batch is recycled, so the
// parser must be borrowing (fastParser.borrowLines) and nothing may keep a
// line past its batch. Otherwise no line's memory is reused, and a line
// longer than ownOver, trimmed, is handed over for keeps.
func startReader(ctx context.Context, p *proc.Process, lg *runLog, wl *wirelog.Writer, newDecoder func() func(*readLine), n int, borrow bool, ownOver int) *lineReader {
	if newDecoder == nil {
		n = 0
	}
	// When borrowing, free holds more batches than can be in flight (one
	// being filled, one in each channel, one with each decoder, one with
	// the run's goroutine), so that recycle rarely drops one, and with it
	// its memory. Otherwise a dropped batch costs little, and fewer kept
	// batches hold fewer decoded values.
	free := 2 + 2*n
	if borrow {
		free = 4 + 3*n
	}
	r := &lineReader{
		p:       p,
		free:    make(chan []readLine, free),
		done:    make(chan struct{}),
		borrow:  borrow,
		ownOver: ownOver,
	}
	ins := make([]chan []readLine, max(n, 1))
	for i := range ins {
		ins[i] = make(chan []readLine, 1)
	}
	if n == 0 {
		r.outs = ins
		r.checkUTF8 = true
	} else {
		r.direct = make(chan []readLine, 1)
		r.outs = make([]chan []readLine, n)
		for i := range r.outs {
			r.outs[i] = make(chan []readLine, 1)
			r.wg.Add(1)
			go r.decode(newDecoder(), ins[i], r.outs[i])
		}
	}
	r.wg.Add(1)
	go r.run(ctx, lg, wl, r.direct, ins)
	return r
}

// catch records a stage's panic, to be raised on the run's goroutine.
func (r *lineReader) catch() {
	if v := recover(); v != nil {
		r.mu.Lock()
		if r.panic == nil {
			r.panic = v
		}
		r.mu.Unlock()
	}
}

// send hands a batch on, unless the stages are giving up.
func (r *lineReader) send(ch chan []readLine, b []readLine) bool {
	select {
	case ch <- b:
		return true
	case <-r.done:
		return false
	}
}

func (r *lineReader) run(ctx context.Context, lg *runLog, wl *wirelog.Writer, direct chan []readLine, ins []chan []readLine) {
	defer r.wg.Done()
	defer func() {
		if direct != nil {
			close(direct)
		}
		for _, ch := range ins {
			close(ch)
		}
	}()
	defer r.catch()
	var m lineMem
	defer m.leaveRoom()
	var batch []readLine
	size, k := 0, 0
	// The first batches are small, so that the first lines reach the
	// caller at once: their limit doubles from one line up to
	// batchLines, and they skip the decoders (the run's goroutine parses
	// them), which take over from the first full-size batch on.
	limit := 1
	send := func() bool {
		ch := direct
		if limit == batchLines && direct != nil {
			close(direct)
			direct = nil
		}
		if direct == nil {
			ch = ins[k%len(ins)]
			k++
		} else {
			for i := range batch {
				batch[i].decoded = false
			}
		}
		if !r.send(ch, batch) {
			return false
		}
		if limit == 1 {
			// The first line: let the run's goroutine take it now, on
			// this thread, rather than wait for another one to wake up
			// and steal it while reading goes on.
			runtime.Gosched()
		}
		limit = min(2*limit, batchLines)
		select {
		case batch = <-r.free:
		default:
			batch = nil
		}
		m.mem = nil
		if cap(batch) > 0 {
			m.mem = batch[:1][0].mem[:0]
		}
		size = 0
		return true
	}
	for ctx.Err() == nil {
		line, owned, err := r.readLine(&m)
		if err != nil {
			// EOF, or a read error: the exit status and the terminal
			// event decide the outcome.
			break
		}
		r.read.Add(1)
		lg.line()
		if wl != nil {
			if line.TooLong > 0 {
				wl.TooLong(line.TooLong)
			} else {
				wl.Out(line.Data)
			}
		}
		// A recycled batch keeps each slot's decoded value for reuse.
		if len(batch) < cap(batch) {
			batch = batch[:len(batch)+1]
		} else {
			batch = append(batch, readLine{})
		}
		e := &batch[len(batch)-1]
		// Without decoders the run's goroutine parses, so the UTF-8 check
		// of the whole line is done here, where it runs in parallel with
		// parsing; decoders check only the strings they keep, on their own
		// goroutines.
		e.Line, e.utf8, e.owned = line, r.checkUTF8 && utf8.Valid(line.Data), owned
		if r.borrow {
			batch[0].mem = m.mem
		}
		size += len(line.Data)
		if (size >= batchBytes || len(batch) >= limit || r.p.Buffered() == 0) && !send() {
			return
		}
	}
	if len(batch) > 0 {
		send()
	}
}

// lineMem is the memory the reading goroutine reads lines into.
type lineMem struct {
	mem    []byte // while borrowing, the current batch's memory
	memCap int    // the largest mem so far
	kept   int    // bytes of lines allocated, counted up to roomAfter
	room   bool   // the heap room is held
}

// readLine reads the next line. While borrowing, it reads it into m.mem,
// or, if it does not fit there, into memory of its own (owned), and
// gives later lines more memory. Otherwise each line has an allocation of
// its own, of its size, handed over for keeps (owned) when it is longer
// than ownOver; once such lines have passed roomAfter bytes the heap room
// is held until m.leaveRoom.
func (r *lineReader) readLine(m *lineMem) (line proc.Line, owned bool, err error) {
	if r.borrow {
		n := len(m.mem)
		line, m.mem, err = r.p.ReadLineTo(m.mem)
		owned = err == nil && len(m.mem) == n && len(line.Data) > 0
		if owned && cap(m.mem) < maxBatchMem {
			// Later lines go to more memory (the lines already in mem
			// keep theirs), as much as the largest so far, or twice as
			// much.
			m.memCap = max(m.memCap, min(max(2*cap(m.mem), minBatchMem), maxBatchMem))
			m.mem = make([]byte, 0, m.memCap)
		}
		return line, owned, err
	}
	// Reading lines one after another into shared 32 KiB chunks instead
	// saved 1-2 % of the instructions of a 200 MB run (cachegrind), too
	// little to measure in time on this VM, and made every event kept
	// alive keep its chunk alive: removed (issue 23).
	line, err = r.p.ReadLine()
	owned = err == nil && longerThan(line.Data, r.ownOver)
	if !m.room {
		if m.kept += len(line.Data); m.kept > roomAfter {
			holdRoom()
			m.room = true
		}
	}
	return line, owned, err
}

// leaveRoom gives the heap room back if m holds it.
func (m *lineMem) leaveRoom() {
	if m.room {
		releaseRoom()
		m.room = false
	}
}

// longerThan reports whether line, trimmed of surrounding space (as the
// parsers keep it as Raw), is longer than n bytes.
func longerThan(line []byte, n int) bool {
	return len(line) > n && len(bytes.TrimSpace(line)) > n
}

// decode decodes the lines of the batches from in and hands them to out.
func (r *lineReader) decode(dec func(*readLine), in, out chan []readLine) {
	defer r.wg.Done()
	defer close(out)
	defer r.catch()
	for b := range in {
		for i := range b {
			if e := &b[i]; e.TooLong == 0 {
				dec(e)
			} else {
				e.decoded = false
			}
		}
		if !r.send(out, b) {
			return
		}
	}
}

// next returns the next batch of lines, in order, or false once the
// stages have ended and every batch has been taken. It raises a stage's
// panic.
func (r *lineReader) next() ([]readLine, bool) {
	if r.direct != nil {
		if b, ok := <-r.direct; ok {
			return b, true
		}
		r.direct = nil
	}
	b, ok := <-r.outs[r.turn]
	if ok {
		r.turn = (r.turn + 1) % len(r.outs)
		return b, true
	}
	r.ended = true
	r.mu.Lock()
	v := r.panic
	r.mu.Unlock()
	if v != nil {
		// A stage died: the others may be waiting for it.
		r.giveUp()
	}
	r.wg.Wait()
	if v != nil {
		panic(v)
	}
	return nil, false
}

// giveUp stops the process (so that ReadLine returns EOF and the rest of
// the output is dropped) and makes the stages give up.
func (r *lineReader) giveUp() {
	r.once.Do(func() {
		r.p.Stop()
		close(r.done)
	})
}

// recycle gives a batch back to the reader once its lines are handled.
// The lines themselves are dropped (events keep them); the decoded values
// stay, for their decoder to reuse.
func (r *lineReader) recycle(b []readLine) {
	for i := range b {
		b[i].Line, b[i].decoded = proc.Line{}, false
	}
	select {
	case r.free <- b[:0]:
	default:
	}
}

// stop ends reading early: it stops the process (so that ReadLine returns
// EOF and the rest of the output is dropped), makes the stages give up and
// waits for them to end. After stop, p.Wait may be called. It does nothing
// once the stages have ended by themselves.
func (r *lineReader) stop() {
	if r.ended {
		return
	}
	r.ended = true
	r.giveUp()
	r.wg.Wait()
}
