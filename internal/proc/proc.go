//go:build unix

// Package proc is the one process layer every agentcli backend shares.
//
// A Process runs one CLI in its own process group. Its guarantees:
//
//   - stdin always has an end: the given bytes followed by EOF, or /dev/null;
//   - stderr is drained concurrently into a bounded tail, so a chatty CLI can
//     never block on a full pipe;
//   - stdout is read line by line with no 64 KiB limit; a line longer than
//     the configured maximum is skipped and reported, and reading goes on;
//   - on cancellation the whole group gets SIGTERM, then SIGKILL after a
//     grace period (Cmd.Cancel, with Cmd.WaitDelay as a backstop);
//   - when the CLI itself exits, whatever it left behind in its group is
//     killed, and a descendant that escaped the group but still holds stdout
//     open cannot make the reader hang;
//   - Wait reaps everything before it returns.
package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Defaults for zero Spec fields.
const (
	DefaultKillGrace  = 3 * time.Second
	DefaultMaxLine    = 64 << 20
	DefaultStderrTail = 8 << 10
)

// Spec describes a process to start.
type Spec struct {
	Path string   // resolved path of the binary
	Args []string // arguments, without argv[0]
	Dir  string
	Env  []string // the complete environment
	// Stdin is written to the process's stdin, which is then closed. Nil
	// means /dev/null.
	Stdin []byte
	// KeepStdin leaves stdin open as a pipe the caller writes with
	// Process.Stdin; Spec.Stdin must be nil then.
	KeepStdin bool
	// KillGrace is the time between SIGTERM and SIGKILL, and how long
	// output is still read after the process has exited.
	KillGrace  time.Duration
	MaxLine    int
	StderrTail int
}

// Line is one line of stdout.
type Line struct {
	// Data is the line without its newline (and without a trailing \r).
	// The slice is owned by the caller.
	Data []byte
	// TooLong, when non-zero, is the length of a line that exceeded the
	// maximum and was skipped; Data is nil then.
	TooLong int
}

// Exit describes how a process ended.
type Exit struct {
	// Code is the exit status, or -1 if the process died from a signal.
	Code int
	// Signal is the signal that killed the process, if any.
	Signal syscall.Signal
	// Stopped reports that the process was stopped by Stop or by its
	// context (cancellation, timeout).
	Stopped bool
	// Stderr is the tail of what the process wrote to stderr.
	Stderr string
	// HeldOpen reports that stdout was still held open by some process
	// after the CLI had exited and its group was killed (a descendant that
	// left the group); reading stopped after the grace period.
	HeldOpen bool
	// Err is a wait error that is not an exit status, if any.
	Err error
}

// Process is a running CLI. Its methods other than Stop must be called from
// one goroutine.
type Process struct {
	cmd    *exec.Cmd
	pgid   int
	cancel context.CancelFunc
	grace  time.Duration

	out       *deadlineReader
	errReader *deadlineReader
	lines     *bufio.Reader
	maxLine   int
	stdinW    *os.File
	keepStdin bool
	errTail   *tailBuffer
	errDone   chan struct{}

	exited   chan struct{} // closed when cmd.Wait has returned
	waitErr  error
	stopOnce sync.Once
	stopped  chan struct{}
	killT    *time.Timer
	killMu   sync.Mutex
	waited   bool
	exit     Exit
}

// Start starts the process described by spec. The process is stopped (see
// Stop) when ctx is done.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if spec.KeepStdin && spec.Stdin != nil {
		return nil, errors.New("proc: Spec.Stdin must be nil with KeepStdin")
	}
	if spec.KillGrace <= 0 {
		spec.KillGrace = DefaultKillGrace
	}
	if spec.MaxLine <= 0 {
		spec.MaxLine = DefaultMaxLine
	}
	if spec.StderrTail <= 0 {
		spec.StderrTail = DefaultStderrTail
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Process{
		cancel:  cancel,
		grace:   spec.KillGrace,
		maxLine: spec.MaxLine,
		errTail: &tailBuffer{max: spec.StderrTail},
		errDone: make(chan struct{}),
		exited:  make(chan struct{}),
		stopped: make(chan struct{}),

		keepStdin: spec.KeepStdin,
	}

	var files []*os.File // parent-side ends to close if Start fails
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		cancel()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		cancel()
		return nil, err
	}
	files = append(files, outR, outW, errR, errW)
	// Made before Start: Cmd.Cancel (terminate) may run as soon as the
	// process exists.
	p.out = &deadlineReader{f: outR, grace: spec.KillGrace}
	p.lines = bufio.NewReaderSize(p.out, 64<<10)
	p.errReader = &deadlineReader{f: errR, grace: spec.KillGrace}
	var inR *os.File
	if spec.Stdin != nil || spec.KeepStdin {
		inR, p.stdinW, err = os.Pipe()
		if err != nil {
			closeAll()
			cancel()
			return nil, err
		}
		files = append(files, inR, p.stdinW)
	}

	cmd := exec.CommandContext(ctx, spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdout = outW
	cmd.Stderr = errW
	if inR != nil {
		cmd.Stdin = inR
	} // else nil: os/exec connects /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		p.terminate()
		return nil
	}
	// Backstop: if the group ignores everything, os/exec kills the leader
	// itself this long after the context is done.
	cmd.WaitDelay = 2*spec.KillGrace + time.Second
	p.cmd = cmd

	if err := cmd.Start(); err != nil {
		closeAll()
		cancel()
		return nil, err
	}
	p.pgid = cmd.Process.Pid
	// The child has its own copies; close ours so EOF can be seen.
	outW.Close()
	errW.Close()
	if inR != nil {
		inR.Close()
	}

	errReader := p.errReader
	go func() {
		defer close(p.errDone)
		io.Copy(p.errTail, errReader)
		errR.Close()
	}()
	if p.stdinW != nil && !p.keepStdin {
		data := spec.Stdin
		w := p.stdinW
		go func() {
			// EPIPE (the CLI exited or closed stdin without reading it
			// all) is not an error worth reporting.
			w.Write(data)
			w.Close()
		}()
	}
	go func() {
		p.waitErr = cmd.Wait()
		// The leader is gone; anything still in its group is an orphan.
		syscall.Kill(-p.pgid, syscall.SIGKILL)
		close(p.exited)
		p.out.markExited()
		errReader.markExited()
		if p.stdinW != nil {
			p.stdinW.Close() // unblock a writer nobody reads from
		}
	}()
	return p, nil
}

// terminate starts the kill ladder: SIGTERM to the group now, SIGKILL after
// the grace period. It is idempotent.
func (p *Process) terminate() {
	p.stopOnce.Do(func() {
		// Not p.pgid: os/exec may call this (Cmd.Cancel) before Start has
		// returned to us.
		pgid := p.cmd.Process.Pid
		close(p.stopped)
		if p.keepStdin {
			p.stdinW.Close()
		}
		// SIGTERM now, SIGKILL at grace; after that, output still gets one
		// more grace period to drain.
		p.out.markStopped(2 * p.grace)
		p.errReader.markStopped(2 * p.grace)
		syscall.Kill(-pgid, syscall.SIGTERM)
		p.killMu.Lock()
		p.killT = time.AfterFunc(p.grace, func() {
			syscall.Kill(-pgid, syscall.SIGKILL)
		})
		p.killMu.Unlock()
	})
}

// Stop asks the process group to end: SIGTERM, then SIGKILL after the grace
// period. It does not wait; call Wait for that. Stop may be called from any
// goroutine, any number of times.
func (p *Process) Stop() {
	p.cancel() // os/exec calls Cmd.Cancel → terminate
	p.terminate()
}

// ReadLine returns the next line of stdout. It returns io.EOF when stdout
// is closed (the process and everything holding stdout are gone).
func (p *Process) ReadLine() (Line, error) {
	var acc []byte
	total := 0
	for {
		frag, err := p.lines.ReadSlice('\n')
		total += len(frag)
		if total <= p.maxLine+1 { // +1: the newline itself
			acc = append(acc, frag...)
		} else if acc != nil {
			acc = nil // drop what was gathered; keep counting
		}
		switch {
		case err == nil: // full line
			if total > p.maxLine+1 {
				return Line{TooLong: total - 1}, nil
			}
			return Line{Data: trimEOL(acc)}, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default: // EOF or read error: a last line without newline
			if total == 0 {
				if err == io.EOF || errors.Is(err, os.ErrClosed) {
					return Line{}, io.EOF
				}
				return Line{}, err
			}
			if total > p.maxLine {
				return Line{TooLong: total}, nil
			}
			return Line{Data: trimEOL(acc)}, nil
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// Wait waits for the process to exit, stops reading its output, kills what
// is left of its group, and returns how it ended. Unread stdout is
// discarded. Wait may be called more than once; later calls return the same
// Exit.
func (p *Process) Wait() Exit {
	if p.waited {
		return p.exit
	}
	p.waited = true
	<-p.exited
	// Unread output is discarded, for at most one grace period.
	p.out.markStopped(p.grace)
	io.Copy(io.Discard, p.lines)
	p.out.f.Close()
	<-p.errDone
	p.killMu.Lock()
	if p.killT != nil {
		p.killT.Stop()
	}
	p.killMu.Unlock()
	p.cancel()

	e := Exit{Stderr: p.errTail.String(), HeldOpen: p.out.heldOpen()}
	select {
	case <-p.stopped:
		e.Stopped = true
	default:
	}
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
	case errors.As(p.waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Code = -1
			e.Signal = ws.Signal()
		} else {
			e.Code = ee.ExitCode()
		}
	default:
		e.Code = -1
		e.Err = p.waitErr
	}
	p.exit = e
	return e
}

// Close stops the process if it is still running and waits for it. It is
// safe to call after Wait; it is meant for defer.
func (p *Process) Close() {
	if !p.waited {
		select {
		case <-p.exited:
		default:
			p.Stop()
		}
		p.Wait()
	}
}

// Stdin returns the write end of the process's stdin when Spec.KeepStdin
// was set, and nil otherwise. It may be used from any goroutine. Stop, Close
// and the process's exit close it, so a write after the process died (or
// one blocked on a full pipe when it dies) returns an error rather than
// blocking forever.
func (p *Process) Stdin() io.WriteCloser {
	if !p.keepStdin {
		return nil
	}
	return p.stdinW
}

// Pid returns the process id (and process group id) of the CLI.
func (p *Process) Pid() int { return p.pgid }

// deadlineReader reads a pipe without ever blocking forever on a writer
// that escaped the process group. Before the process exits it is a plain
// read. After the exit (when every writer in the group has been killed, so
// what is left in the pipe is bounded), a read that gets nothing for the
// grace period ends with EOF. After a stop, reading also ends at a fixed
// deadline, so an escaped writer that keeps writing cannot keep it alive.
// A slow consumer loses nothing: deadlines are set just before each read.
type deadlineReader struct {
	f     *os.File
	grace time.Duration
	mu    sync.Mutex
	done  bool      // the process has exited
	fixed time.Time // non-zero: reading ends by then (after exit)
	held  bool
}

func (r *deadlineReader) deadlineLocked() time.Time {
	d := time.Now().Add(r.grace)
	if !r.fixed.IsZero() && r.fixed.Before(d) {
		d = r.fixed
	}
	return d
}

// markExited arms the deadline, including for a read already blocked.
func (r *deadlineReader) markExited() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	r.f.SetReadDeadline(r.deadlineLocked())
}

// markStopped bounds how long reading may go on after a stop.
func (r *deadlineReader) markStopped(after time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := time.Now().Add(after); r.fixed.IsZero() || f.Before(r.fixed) {
		r.fixed = f
	}
	if r.done {
		r.f.SetReadDeadline(r.deadlineLocked())
	}
}

func (r *deadlineReader) Read(b []byte) (int, error) {
	r.mu.Lock()
	if r.done {
		r.f.SetReadDeadline(r.deadlineLocked())
	}
	r.mu.Unlock()
	n, err := r.f.Read(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		r.mu.Lock()
		r.held = true
		r.mu.Unlock()
		return n, io.EOF
	}
	if errors.Is(err, os.ErrClosed) {
		return n, io.EOF
	}
	return n, err
}

func (r *deadlineReader) heldOpen() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if len(b) >= t.max {
		t.buf = append(t.buf[:0], b[len(b)-t.max:]...)
		return n, nil
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return string(b)
}
