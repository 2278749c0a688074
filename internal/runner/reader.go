package runner

import (
	"context"
	"sync/atomic"
	"unicode/utf8"

	"github.com/agentcli/agentcli/internal/proc"
	"github.com/agentcli/agentcli/internal/wirelog"
)

// lineReader reads a run's stdout on its own goroutine, so that waiting
// for the pipe, copying lines, checking their UTF-8 and logging them
// overlap with parsing and with the caller's handling of events. Lines travel in batches over a
// channel that holds one batch: when the caller is slow, the reader waits,
// stops reading, and the pipe fills up and blocks the CLI (backpressure);
// what is read ahead is bounded by about three batches of batchBytes (or
// one line, when a line is longer).
//
// Only the reader calls p.ReadLine. The run's goroutine calls p.Wait (and
// p.Close) only after the reader has ended: after stop, or once ch is
// closed.
type lineReader struct {
	p     *proc.Process
	ch    chan []readLine
	free  chan []readLine // batches the consumer is done with
	done  chan struct{}   // closed to make the reader give up
	ended bool            // ch was seen closed
	read  atomic.Int64    // lines read (for tests)
}

// readLine is a line as the reader hands it over: utf8 reports that it is
// valid UTF-8 (checked on the reader's goroutine, so that the parser need
// not; see UTF8Parser).
type readLine struct {
	proc.Line
	utf8 bool
}

// Batch bounds: a batch is sent when it holds batchBytes or batchLines,
// or at once when no more output is waiting, so that a line reaches the
// caller as soon as it arrives.
const (
	batchBytes = 64 << 10
	batchLines = 256
)

// startReader starts reading p's stdout until it ends or ctx is done.
// Each line is noted in the run log and recorded in the wire log (if any)
// on the reader's goroutine, in order.
func startReader(ctx context.Context, p *proc.Process, lg *runLog, wl *wirelog.Writer) *lineReader {
	r := &lineReader{
		p:    p,
		ch:   make(chan []readLine, 1),
		free: make(chan []readLine, 2),
		done: make(chan struct{}),
	}
	go r.run(ctx, lg, wl)
	return r
}

func (r *lineReader) run(ctx context.Context, lg *runLog, wl *wirelog.Writer) {
	defer close(r.ch)
	var batch []readLine
	size := 0
	send := func() bool {
		select {
		case r.ch <- batch:
		case <-r.done:
			return false
		}
		select {
		case batch = <-r.free:
			batch = batch[:0]
		default:
			batch = nil
		}
		size = 0
		return true
	}
	for ctx.Err() == nil {
		line, err := r.p.ReadLine()
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
		batch = append(batch, readLine{Line: line, utf8: utf8.Valid(line.Data)})
		size += len(line.Data)
		if (size >= batchBytes || len(batch) >= batchLines || r.p.Buffered() == 0) && !send() {
			return
		}
	}
	if len(batch) > 0 {
		send()
	}
}

// next returns the next batch of lines, or false once the reader has
// ended and every batch has been taken.
func (r *lineReader) next() ([]readLine, bool) {
	b, ok := <-r.ch
	if !ok {
		r.ended = true
	}
	return b, ok
}

// recycle gives a batch back to the reader once its lines are handled
// (the lines themselves are not reused: events keep them).
func (r *lineReader) recycle(b []readLine) {
	clear(b)
	select {
	case r.free <- b:
	default:
	}
}

// stop ends reading early: it stops the process (so that ReadLine returns
// EOF and the rest of the output is dropped), makes the reader give up and
// waits for it to end. After stop, p.Wait may be called. It does nothing
// once the reader has ended by itself.
func (r *lineReader) stop() {
	if r.ended {
		return
	}
	r.p.Stop()
	close(r.done)
	for range r.ch {
	}
	r.ended = true
}
