//go:build unix

// Package proc is the one process layer every agentcli backend shares.
//
// A Process runs one CLI in its own process group, with its environment
// tagged EnvRunID=<128 random bits, hex>. These are its guarantees.
//
// Input and output:
//
//   - stdin always has an end: the given bytes followed by EOF, /dev/null,
//     or (Spec.KeepStdin) a pipe the caller writes that is closed by Stop,
//     Close and the CLI's exit;
//   - stderr is drained concurrently into a bounded tail, so a chatty CLI can
//     never block on a full pipe;
//   - stdout is read line by line with no 64 KiB limit; a line longer than
//     the configured maximum is skipped and reported, and reading goes on;
//   - nothing the CLI wrote to stdout before it exited is lost, however
//     slowly the caller reads, unless the process is stopped: when the CLI
//     exits, the bytes still in the pipe are counted (FIONREAD) and read
//     without a deadline; only reading beyond them is bounded (below). On
//     unix systems other than Linux, macOS and the BSDs the count is not
//     taken, and a caller slower than KillGrace may lose the last 64 KiB.
//
// Stopping: Stop, or the end of the context given to Start, sends SIGTERM
// to the group and SIGKILL KillGrace later. From then on ReadLine returns
// io.EOF (a line read after the stop is dropped) and further output is read
// and discarded.
//
// Bounds. Wait returns, whatever descendants that left the group do:
//
//   - at most KillGrace after the CLI exits: reading stdout and stderr beyond
//     what was in the pipes at the exit ends at exit + KillGrace (a writer
//     that keeps writing cannot extend it);
//   - once the CLI has exited after a stop, at once: what was in the pipes is
//     read and discarded (stderr into the tail), nothing beyond; so Wait
//     returns at most KillGrace after Stop, plus the time the kernel needs
//     to carry out SIGKILL;
//   - a stop after the exit, while the grace is running, ends it at once;
//   - plus the time of the reaping below: on Linux a scan of /proc (about
//     3 µs per process) and the wait for the killed processes to be gone
//     (normally milliseconds; at most 1 s; the scan is abandoned after
//     2 s).
//
// Reaping:
//
//   - When the CLI exits (by itself or after the kill ladder), every process
//     left in its process group gets SIGKILL. The group is signalled only
//     while the CLI's zombie still reserves the group id: the exit is
//     observed without reaping (Linux: waitid WNOWAIT; macOS and the BSDs:
//     kqueue NOTE_EXIT), the group is killed, and only then is the CLI
//     reaped. Every group signal (SIGTERM, the SIGKILL timer, the kill at
//     exit) goes through one path that refuses once reaping has begun, so a
//     group id freed and reused by unrelated processes is never signalled.
//     On other unix systems the exit cannot be observed without reaping:
//     there the group is not signalled after a natural exit (what is left in
//     it survives), and a stop racing the exit could signal a group id in
//     the microseconds after the reap.
//   - Linux only: then every process of the same effective uid that is
//     still in the group, or whose initial environment (/proc/<pid>/environ)
//     carries this run's tag, gets SIGKILL through pidfd_open +
//     pidfd_send_signal (Linux 5.3+), so a pid reused between the check and
//     the kill is never signalled (without pidfds: kill(2) after a re-check,
//     with that tiny window). The scan repeats until it finds no new
//     process (10 scans at most), so children forked by a process being
//     killed are found too, and Wait returns once every process it killed
//     is gone (at most 1 s), whether or not it held the CLI's pipes. This
//     catches descendants that left the group (setsid, setpgid, double
//     fork). It cannot catch a descendant that was exec'd with an
//     environment without the tag, that overwrote its initial environment
//     block, or that runs under another uid (setuid): those survive the
//     run, though they cannot delay it beyond the bounds above.
//   - Other unix systems: no tag scan; every descendant that left the group
//     survives the run (within the bounds above).
//   - Wait reaps the CLI itself before it returns.
//   - Linux only: the kernel kills the CLI (SIGKILL) when this process ends,
//     however it ends (Pdeathsig; see startCmd), and a sentinel in the
//     CLI's group kills the rest of the group then (see guardGroup; not
//     for a terminal's CLI). Descendants that left the group survive.
//
// Terminals: StartTerminal runs a CLI's interactive UI on a terminal
// instead of pipes, with the same stopping and reaping; it also hands the
// terminal to the CLI's process group and takes it back (see
// StartTerminal). Start is unchanged by it.
package proc

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentcli/agentcli/driver/wirelog"
)

// Process is a running CLI. ReadLine, Wait and Close must be called from
// one goroutine; Stop, Pid and Stdin (and the writer it returns) from any.
type Process struct {
	cmd *exec.Cmd
	// release is called once the CLI is reaped: it lets the thread that
	// forked it end (see startCmd).
	release func()
	// unguard ends the sentinel that kills the group if this process
	// dies (see guardGroup); nil for a terminal's CLI.
	unguard func()
	pid     int
	tag     string
	grace   time.Duration

	out     *pipeReader
	lines   *bufio.Reader
	maxLine int
	errR    *pipeReader
	errTail *tailBuffer
	errDone chan struct{}
	stdin   *stdinPipe // nil when stdin is /dev/null
	keep    bool       // Spec.KeepStdin

	stopOnce sync.Once
	stopped  chan struct{}
	unwatch  func() bool // releases the context watcher

	sigMu  sync.Mutex // guards reaped and killT; held while signalling
	reaped bool       // reaping has begun: the group id may be freed
	killT  *time.Timer

	done    chan struct{} // closed when the CLI has been reaped
	waitErr error         // set before done is closed
	escaped int           // set before done is closed

	waited bool
	exit   Exit

	// A process started by StartTerminal has no pipes (out, lines, errR
	// and stdin are nil) and a terminal to give back.
	term     *termState
	contQuit chan struct{} // closed to stop continueStopped, if running
	contDone chan struct{} // closed when it has returned
}

// Test hooks, nil outside tests: called with the group id for every group
// signal actually sent, and with the pid right before the CLI is reaped.
var (
	testHookSignal func(pgid int, sig syscall.Signal)
	testHookReap   func(pid int)
)

// Start starts the process described by spec. The process is stopped (see
// Stop) when ctx is done; if ctx is already done, Start returns its error
// and starts nothing. Start does not block beyond starting the process.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if spec.KeepStdin && spec.Stdin != nil {
		return nil, errors.New("proc: Spec.Stdin must be nil with KeepStdin")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
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
	p, err := newProcess(spec.KillGrace, spec.StderrTail)
	if err != nil {
		return nil, err
	}
	p.maxLine, p.keep = spec.MaxLine, spec.KeepStdin

	pp, err := openPipes(spec.Stdin != nil || spec.KeepStdin)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = tagEnv(spec.Env, p.tag)
	cmd.Stdout = pp.outW
	cmd.Stderr = pp.errW
	if pp.inR != nil {
		cmd.Stdin = pp.inR
	} // else nil: os/exec connects /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	release, err := startCmd(cmd)
	if err != nil {
		pp.close()
		return nil, err
	}
	p.cmd, p.release = cmd, release
	p.pid = cmd.Process.Pid
	// Before waitLoop can reap the CLI: the group must still exist.
	p.unguard = guardGroup(p.pid)
	// The child has its own copies; close ours so EOF can be seen.
	pp.outW.Close()
	pp.errW.Close()
	if pp.inR != nil {
		pp.inR.Close()
		p.stdin = &stdinPipe{f: pp.inW}
	}
	p.out = &pipeReader{f: pp.outR, grace: spec.KillGrace, stopEOF: true}
	p.lines = bufio.NewReaderSize(p.out, readBuffer)
	p.errR = &pipeReader{f: pp.errR, grace: spec.KillGrace}

	go func() {
		defer close(p.errDone)
		io.Copy(p.errTail, p.errR)
		pp.errR.Close()
	}()
	if spec.Stdin != nil {
		go func(data []byte) {
			// An error (the CLI exited or closed stdin without reading it
			// all) is not worth reporting.
			p.stdin.Write(data)
			p.stdin.Close()
		}(spec.Stdin)
	}
	go p.waitLoop()
	p.unwatch = context.AfterFunc(ctx, p.Stop)
	return p, nil
}

// pipes are the ends of a CLI's stdout, stderr and (when wanted) stdin
// pipes: the CLI's ends (outW, errW, inR) and ours.
type pipes struct {
	outR, outW *os.File
	errR, errW *os.File
	inR, inW   *os.File // nil without stdin
}

// openPipes opens the pipes of a CLI, stdin's only when withStdin; on an
// error it closes what it opened.
func openPipes(withStdin bool) (pipes, error) {
	var pp pipes
	var err error
	if pp.outR, pp.outW, err = os.Pipe(); err != nil {
		return pipes{}, err
	}
	growPipe(pp.outR)
	if pp.errR, pp.errW, err = os.Pipe(); err == nil && withStdin {
		pp.inR, pp.inW, err = os.Pipe()
	}
	if err != nil {
		pp.close()
		return pipes{}, err
	}
	return pp, nil
}

// close closes every end that is open.
func (pp pipes) close() {
	for _, f := range []*os.File{pp.outR, pp.outW, pp.errR, pp.errW, pp.inR, pp.inW} {
		if f != nil {
			f.Close()
		}
	}
}

// newTag returns a fresh run id.
func newTag() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// tagEnv returns env (nil: the caller's) with EnvRunID set to tag.
func tagEnv(env []string, tag string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, EnvRunID+"=") {
			out = append(out, kv)
		}
	}
	return append(out, EnvRunID+"="+tag)
}

// waitLoop learns of the CLI's exit, kills what it left behind, and reaps
// it.
func (p *Process) waitLoop() {
	// waitExit returns true while the CLI is an unreaped zombie: its pid,
	// and so its group id, cannot be reused yet.
	zombie := waitExit(p.pid)
	exitAt := time.Now()
	if p.contQuit != nil {
		// Nothing may wait on the pid once it can be reaped.
		close(p.contQuit)
		<-p.contDone
	}
	if p.unguard != nil {
		p.unguard() // it is in the group: reaped first, not left to the scan
	}
	if zombie {
		p.signalGroup(syscall.SIGKILL) // leftovers in the group
	} else {
		// The exit cannot be observed without reaping here (or someone
		// else reaped the CLI): reap, and never signal the group again.
		p.waitErr = p.cmd.Wait()
		p.setReaped()
	}
	if p.out != nil {
		p.out.markExited(exitAt)
		p.errR.markExited(exitAt)
	}
	if p.stdin != nil {
		p.stdin.processExited()
	}
	group := 0 // the group id, while it is still ours
	if zombie {
		group = p.pid
	}
	p.escaped = reapTagged(p.tag, group)
	if zombie {
		p.setReaped()
		if testHookReap != nil {
			testHookReap(p.pid)
		}
		p.waitErr = p.cmd.Wait()
	}
	p.release()
	if p.term != nil {
		p.term.restore(p.isStopped() || signaled(p.waitErr))
	}
	close(p.done)
}

// signaled reports whether err is the wait status of a process killed by a
// signal.
func signaled(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws, ok := ee.Sys().(syscall.WaitStatus)
		return ok && ws.Signaled()
	}
	return false
}

// signalGroup sends sig to the CLI's process group unless reaping has begun
// (then the group id may belong to someone else). Every group signal goes
// through here.
func (p *Process) signalGroup(sig syscall.Signal) {
	p.sigMu.Lock()
	defer p.sigMu.Unlock()
	p.signalGroupLocked(sig)
}

func (p *Process) signalGroupLocked(sig syscall.Signal) {
	if p.reaped {
		return
	}
	if testHookSignal != nil {
		testHookSignal(p.pid, sig)
	}
	syscall.Kill(-p.pid, sig)
}

// setReaped closes the signal path for good.
func (p *Process) setReaped() {
	p.sigMu.Lock()
	defer p.sigMu.Unlock()
	p.reaped = true
	if p.killT != nil {
		p.killT.Stop()
	}
}

// Stop asks the process group to end: SIGTERM now, SIGKILL after the grace
// period. It closes stdin, makes ReadLine return io.EOF, and has further
// output discarded. It does not wait; call Wait for that. Stop may be
// called from any goroutine, any number of times, also after the process
// has exited.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		close(p.stopped)
		if p.out != nil {
			p.out.markStopped()
			p.errR.markStopped()
		}
		if p.stdin != nil {
			p.stdin.Close()
		}
		p.sigMu.Lock()
		defer p.sigMu.Unlock()
		if !p.reaped {
			p.signalGroupLocked(syscall.SIGTERM)
			p.killT = time.AfterFunc(p.grace, func() { p.signalGroup(syscall.SIGKILL) })
		}
	})
}

func (p *Process) isStopped() bool {
	select {
	case <-p.stopped:
		return true
	default:
		return false
	}
}

// Stdin returns the write end of the process's stdin when Spec.KeepStdin
// was set, and nil otherwise. Writes block while the pipe is full; once the
// CLI has exited they fail with os.ErrProcessDone instead of blocking, and
// after Close (or Stop) with os.ErrClosed. Close closes stdin (the CLI sees
// EOF); it is idempotent. The writer may be used from any goroutine.
func (p *Process) Stdin() io.WriteCloser {
	if !p.keep {
		return nil
	}
	return p.stdin
}

// readBuffer is the size of stdout's read buffer: lines up to it are read
// in place; longer ones gather in chunks (see longLine).
//
// Each run has a buffer of its own. Keeping buffers from one run to the
// next in a sync.Pool was measured without an effect (the time to the
// first event of a codex run, BenchmarkFirstEvent, 6 interleaved rounds:
// within noise; a run's start costs milliseconds, a buffer microseconds),
// so it was removed (issue 23).
const readBuffer = 256 << 10

// ReadLine returns the next line of stdout. It returns io.EOF when stdout
// is closed (the process and everything holding stdout are gone), when
// reading ended at the bounds described in the package comment, and from
// the moment the process is stopped: a line completed after Stop is never
// returned.
//
// Each line is one allocation of its exact size, the only copy made of it
// on the Go heap. A line longer than the read buffer is gathered in chunks
// as it arrives and joined once complete, never re-copied as it grows; on
// Linux the chunks are anonymous mappings released one by one as they are
// joined, so a huge line costs about its size once.
func (p *Process) ReadLine() (Line, error) {
	l, _, err := p.ReadLineTo(nil)
	return l, err
}

// ReadLineTo is ReadLine copying the line into buf's spare capacity when
// it fits there: it returns buf extended by the line, and the line's Data
// is then that part of buf (with no spare capacity of its own). A line
// that does not fit is allocated as by ReadLine, and buf is returned as
// it was. The caller owns the memory: it may reuse buf once it is done
// with the lines in it.
func (p *Process) ReadLineTo(buf []byte) (Line, []byte, error) {
	if p.isStopped() || p.lines == nil {
		return Line{}, buf, io.EOF
	}
	var long longLine // a long line's pieces so far, while within the limit
	defer long.free()
	total := 0
	for {
		frag, err := p.lines.ReadSlice('\n')
		total += len(frag)
		if errors.Is(err, bufio.ErrBufferFull) {
			if total <= p.maxLine+1 { // +1: the newline itself
				long.add(frag)
			} else {
				long.free() // drop what was gathered; keep counting
			}
			continue
		}
		if p.isStopped() {
			return Line{}, buf, io.EOF
		}
		if err != nil && total == 0 { // EOF or a read error, nothing pending
			if err == io.EOF || errors.Is(err, os.ErrClosed) {
				return Line{}, buf, io.EOF
			}
			return Line{}, buf, err
		}
		// A full line, or (EOF, read error) a last line without newline.
		n := total
		if err == nil {
			n-- // the newline
		}
		if n > p.maxLine {
			return Line{TooLong: n}, buf, nil
		}
		var data []byte
		switch {
		case long.n == 0 && len(frag) <= cap(buf)-len(buf):
			o := len(buf)
			buf = append(buf, frag...)
			data = buf[o:len(buf):len(buf)]
		case long.n == 0:
			data = make([]byte, len(frag))
			copy(data, frag) // not zeroed first
		default:
			data = long.join(frag)
		}
		return Line{Data: trimEOL(data)}, buf, nil
	}
}

// Buffered returns how many bytes of stdout have been read from the pipe
// but not returned by ReadLine yet: when it is 0, the next ReadLine waits
// for the CLI. It must be called from ReadLine's goroutine.
func (p *Process) Buffered() int {
	if p.lines == nil {
		return 0
	}
	return p.lines.Buffered()
}

// trimEOL drops a line's newline and a carriage return before it.
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// Wait discards unread stdout, waits for the CLI to exit and be reaped
// (with what it left behind killed, see the package comment), and returns
// how it ended. It blocks within the bounds of the package comment. Wait
// may be called more than once; later calls return the same Exit.
func (p *Process) Wait() Exit {
	if p.waited {
		return p.exit
	}
	p.waited = true
	if p.out != nil {
		p.out.startDraining()
		p.lines.Discard(p.lines.Buffered())
		io.Copy(io.Discard, p.out)
		p.out.f.Close()
		// Nothing reads stdout any more: ReadLine returns io.EOF.
		p.lines = nil
	}
	<-p.done
	<-p.errDone
	p.unwatch()

	e := Exit{
		Exit:     wirelog.Exit{Stderr: p.errTail.String(), Truncated: p.errTail.truncated()},
		HeldOpen: p.out != nil && p.out.heldOpen(),
		Stopped:  p.isStopped(),
		Escaped:  p.escaped,
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

// Close stops the process (see Stop) and waits for it, unless Wait has
// already returned. It is meant for defer.
func (p *Process) Close() {
	if !p.waited {
		p.Stop()
		p.Wait()
	}
}

// Pid returns the process id (and process group id) of the CLI.
func (p *Process) Pid() int { return p.pid }

// past is a deadline that has passed: setting it interrupts a blocked read.
var past = time.Unix(1, 0)

// pipeReader reads the parent's end of an output pipe within the bounds of
// the package comment. While the CLI runs, reads block. When it has exited
// (markExited), the bytes in the pipe at that moment are counted on the
// next read and read without a deadline; reading beyond them ends at
// exit + grace, or at the exit itself once stopped. A stop (markStopped)
// ends reading at once for a stopEOF reader that is not draining (ReadLine
// returns EOF), and otherwise only shortens the time after the exit.
// Every state change interrupts a blocked read, which then re-evaluates.
type pipeReader struct {
	f       *os.File
	grace   time.Duration
	stopEOF bool // end with io.EOF once stopped, unless draining

	mu       sync.Mutex
	exited   bool
	exitAt   time.Time
	stopped  bool
	draining bool
	counted  bool // budget holds the bytes in the pipe at the exit
	budget   int  // of those, not yet read
	held     bool // reading ended at the deadline with a writer left
}

func (r *pipeReader) markExited(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exited, r.exitAt = true, at
	r.f.SetReadDeadline(past)
}

func (r *pipeReader) markStopped() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	r.f.SetReadDeadline(past)
}

func (r *pipeReader) startDraining() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.draining = true
}

func (r *pipeReader) heldOpen() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

func (r *pipeReader) Read(b []byte) (int, error) {
	for {
		r.mu.Lock()
		if r.stopEOF && r.stopped && !r.draining {
			r.mu.Unlock()
			return 0, io.EOF
		}
		var deadline time.Time // zero: block
		counting := false
		if r.exited {
			if !r.counted {
				// Nobody else reads the pipe and the CLI is gone, so
				// every byte it wrote is in there now, and reading
				// that much cannot block.
				r.counted = true
				r.budget = pipeBytes(r.f)
			}
			if r.budget > 0 {
				counting = true
			} else {
				deadline = r.exitAt
				if !r.stopped {
					deadline = deadline.Add(r.grace)
				}
				if !time.Now().Before(deadline) {
					if !r.stopped && r.writerLeft() {
						r.held = true
					}
					r.mu.Unlock()
					return 0, io.EOF
				}
			}
		}
		r.f.SetReadDeadline(deadline)
		r.mu.Unlock()

		n, err := r.f.Read(b)
		if counting {
			r.mu.Lock()
			r.budget -= n
			r.mu.Unlock()
		}
		switch {
		case n > 0:
			return n, nil
		case err == nil:
			return 0, nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			continue // a state change or the deadline: re-evaluate
		case err == io.EOF || errors.Is(err, os.ErrClosed):
			return 0, io.EOF
		default:
			return 0, err
		}
	}
}

// writerLeft reports, without blocking, whether the pipe still has a writer
// (it is not at EOF). A byte it reads is dropped: it was written after the
// deadline.
func (r *pipeReader) writerLeft() bool {
	rc, err := r.f.SyscallConn()
	if err != nil {
		return false
	}
	r.f.SetReadDeadline(time.Time{})
	left := false
	var one [1]byte
	rc.Read(func(fd uintptr) bool {
		n, err := syscall.Read(int(fd), one[:])
		left = n > 0 || err == syscall.EAGAIN || err == syscall.EINTR
		return true // never wait
	})
	return left
}

// stdinPipe is the parent's end of a stdin pipe.
type stdinPipe struct {
	f      *os.File
	mu     sync.Mutex
	closed bool // by Close (or Stop)
	exited bool // the CLI exited
	once   sync.Once
	err    error // of the first close
}

func (s *stdinPipe) state() (closed, exited bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed, s.exited
}

func (s *stdinPipe) Write(b []byte) (int, error) {
	if closed, exited := s.state(); exited {
		return 0, os.ErrProcessDone
	} else if closed {
		return 0, os.ErrClosed
	}
	n, err := s.f.Write(b)
	if err != nil {
		// Closed under a blocked write: say why.
		if closed, exited := s.state(); exited {
			err = os.ErrProcessDone
		} else if closed {
			err = os.ErrClosed
		}
	}
	return n, err
}

func (s *stdinPipe) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.closeFile()
}

func (s *stdinPipe) closeFile() error {
	s.once.Do(func() { s.err = s.f.Close() })
	return s.err
}

// processExited closes the pipe, which unblocks a write stuck on a pipe
// that nobody will read (a descendant may still hold its other end).
func (s *stdinPipe) processExited() {
	s.mu.Lock()
	s.exited = true
	s.mu.Unlock()
	s.closeFile()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64 // bytes written
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	t.total += int64(n)
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

// truncated reports that the start of what was written is gone.
func (t *tailBuffer) truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total > int64(t.max)
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

// newProcess returns a Process not yet started, with a new tag for its
// children's environment, grace for its kill and a stderr tail of
// tailMax bytes.
func newProcess(grace time.Duration, tailMax int) (*Process, error) {
	tag, err := newTag()
	if err != nil {
		return nil, err
	}
	return &Process{
		tag:     tag,
		grace:   grace,
		errTail: &tailBuffer{max: tailMax},
		errDone: make(chan struct{}),
		stopped: make(chan struct{}),
		done:    make(chan struct{}),
	}, nil
}
