//go:build linux

package ptytest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// PTY is a pseudo-terminal. Hand Slave to the program as its stdin, stdout
// and stderr; the PTY plays the terminal on the other side. Its methods are
// safe for concurrent use.
type PTY struct {
	// Slave is the program's side of the terminal. It is opened with
	// O_NOCTTY: it is nobody's controlling terminal until a program
	// started in a new session claims it.
	Slave *os.File

	master *os.File
	wmu    sync.Mutex // serializes writes to master

	mu      sync.Mutex
	changed *sync.Cond
	raw     []byte
	lastOut time.Time // when the program last wrote
	text    strings.Builder
	vt      vtParser
	readErr error
	done    chan struct{}
}

// Open opens a pseudo-terminal of rows × cols cells and starts reading what
// the program writes. Close releases it.
func Open(rows, cols int) (*PTY, error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("ptytest: open /dev/ptmx: %w", err)
	}
	fail := func(err error) (*PTY, error) {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil { // unlockpt
		return fail(fmt.Errorf("ptytest: unlockpt: %w", err))
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN) // ptsname
	if err != nil {
		return fail(fmt.Errorf("ptytest: ptsname: %w", err))
	}
	name := "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(fmt.Errorf("ptytest: open %s: %w", name, err))
	}
	if err := unix.IoctlSetWinsize(sfd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		unix.Close(sfd)
		return fail(fmt.Errorf("ptytest: set window size: %w", err))
	}
	// Non-blocking, so that the runtime poller serves reads and Close
	// interrupts a blocked one.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(sfd)
		return fail(err)
	}
	p := &PTY{
		Slave:  os.NewFile(uintptr(sfd), name),
		master: os.NewFile(uintptr(fd), "/dev/ptmx"),
		done:   make(chan struct{}),
		vt:     vtParser{scr: newScreen(rows, cols)},
	}
	p.changed = sync.NewCond(&p.mu)
	go p.read()
	return p, nil
}

// New opens a pseudo-terminal for t (see Open) and closes it when t ends.
func New(t testing.TB, rows, cols int) *PTY {
	t.Helper()
	p, err := Open(rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// Close closes both sides and waits for the reader to stop.
func (p *PTY) Close() error {
	err := p.Slave.Close()
	if cerr := p.master.Close(); err == nil {
		err = cerr
	}
	<-p.done
	return err
}

// read records the program's output until the master is closed (or, once
// every slave descriptor is closed, fails with EIO).
func (p *PTY) read() {
	defer close(p.done)
	buf := make([]byte, 32<<10)
	for {
		n, err := p.master.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.raw = append(p.raw, buf[:n]...)
			p.lastOut = time.Now()
			replies := p.vt.feed(buf[:n], &p.text)
			p.changed.Broadcast()
			p.mu.Unlock()
			if len(replies) > 0 {
				p.write(replies)
			}
		}
		if err != nil {
			p.mu.Lock()
			p.readErr = err
			p.changed.Broadcast()
			p.mu.Unlock()
			return
		}
	}
}

func (p *PTY) write(b []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err := p.master.Write(b)
	return err
}

// Type writes s to the terminal as typed keys (use "\r" for Enter, "\x03"
// for Ctrl-C, "\x04" for Ctrl-D).
func (p *PTY) Type(s string) error { return p.write([]byte(s)) }

// Submit types text, then Enter once the program has drawn the text and
// gone quiet for a moment; it blocks until then, or until ctx ends, and
// presses Enter anyway. Drawn means that the text's last key was echoed
// after the typing (the text may have been on the screen before) and that
// the whole text is on the screen (within one line). Interactive UIs take
// an Enter that comes with the text as part of a paste: qwen pastes a read
// that holds text and a return, gemini makes a newline of an Enter it
// handles within 30 ms of the last key. A fixed pause ensures neither on a
// busy machine, where the program may read both at once.
func (p *PTY) Submit(ctx context.Context, text string) error {
	before := p.Len()
	if err := p.Type(text); err != nil {
		return err
	}
	if text != "" {
		if _, err := p.WaitFor(ctx, before, text[len(text)-1:]); err == nil && p.WaitScreen(ctx, text) == nil {
			p.WaitQuiet(ctx, 700*time.Millisecond)
		}
	}
	return p.Type("\r")
}

// Raw returns a copy of everything the program has written.
func (p *PTY) Raw() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]byte(nil), p.raw...)
}

// Text returns what the program has written as text: printable
// characters and newlines, escape sequences removed, a cursor-forward
// movement replaced by that many spaces.
func (p *PTY) Text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.text.String()
}

// Screen returns what the terminal shows now: one line per row, trailing
// blanks removed. Unlike Text, it is right for programs that redraw only
// the cells that changed.
func (p *PTY) Screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.vt.scr.String()
}

// wakeOnDone wakes the waiters on p.changed when ctx ends, so that a
// wait loop sees ctx.Err; the returned func stops that.
func (p *PTY) wakeOnDone(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.changed.Broadcast()
		p.mu.Unlock()
	})
}

// WaitScreen waits until the screen shows s (within one line). It fails
// when ctx ends first or the terminal was closed; the error shows the
// screen.
func (p *PTY) WaitScreen(ctx context.Context, s string) error {
	defer p.wakeOnDone(ctx)()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		scr := p.vt.scr.String()
		if strings.Contains(scr, s) {
			return nil
		}
		err := ctx.Err()
		if err == nil && p.readErr != nil {
			err = p.readErr
		}
		if err != nil {
			return fmt.Errorf("ptytest: %q is not on the screen (%w); the screen shows:\n%s", s, err, scr)
		}
		p.changed.Wait()
	}
}

// WaitQuiet waits until the program has written nothing for quiet (a UI
// that has finished drawing, its spinners stopped), or ctx ends; it
// reports whether the terminal went quiet.
func (p *PTY) WaitQuiet(ctx context.Context, quiet time.Duration) bool {
	for {
		p.mu.Lock()
		idle := time.Since(p.lastOut)
		p.mu.Unlock()
		if idle >= quiet {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(quiet - idle):
		}
	}
}

// Len returns the length of Text, for WaitFor's from.
func (p *PTY) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.text.Len()
}

// WaitFor waits until Text, from byte offset from on, contains s, and
// returns the offset just past it. It fails when ctx ends first or the
// terminal was closed; the error shows the end of the text.
func (p *PTY) WaitFor(ctx context.Context, from int, s string) (int, error) {
	defer p.wakeOnDone(ctx)()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		t := p.text.String()
		if from > len(t) {
			from = len(t)
		}
		if i := strings.Index(t[from:], s); i >= 0 {
			return from + i + len(s), nil
		}
		err := ctx.Err()
		if err == nil && p.readErr != nil {
			err = p.readErr
		}
		if err != nil {
			tail := t[from:]
			if len(tail) > 2000 {
				tail = "…" + tail[len(tail)-2000:]
			}
			return from, fmt.Errorf("ptytest: %q did not appear on the screen (%w); the screen showed:\n%s", s, err, tail)
		}
		p.changed.Wait()
	}
}

// vtParser splits the program's output into text and escape sequences,
// keeps the screen they draw, and produces the replies a terminal would
// send to the queries among them. It keeps its state across writes, so a
// sequence split between two reads is recognised.
type vtParser struct {
	state  int
	params []byte // of the CSI or OSC sequence being read
	utf8   []byte // an incomplete UTF-8 sequence
	scr    *screen
}

const (
	stGround  = iota
	stEsc     // after ESC
	stEscInt  // ESC followed by intermediate bytes (charset selection ...)
	stCSI     // ESC [
	stOSC     // ESC ]
	stOSCEsc  // ESC inside OSC: ST follows
	stString  // DCS, SOS, PM, APC: ignored up to ST
	stStrEsc  // ESC inside such a string
	maxParams = 256
)

// feed parses b, appends its text to text, draws it on the screen, and
// returns the replies.
func (v *vtParser) feed(b []byte, text *strings.Builder) []byte {
	var replies []byte
	for _, c := range b {
		switch v.state {
		case stGround:
			if len(v.utf8) > 0 || c >= 0x80 {
				v.utf8 = append(v.utf8, c)
				if utf8.FullRune(v.utf8) || len(v.utf8) >= utf8.UTFMax {
					r, _ := utf8.DecodeRune(v.utf8)
					text.WriteRune(r)
					v.scr.put(r)
					v.utf8 = v.utf8[:0]
				}
				continue
			}
			switch {
			case c == 0x1b:
				v.state = stEsc
			case c == '\n':
				text.WriteByte('\n')
				v.scr.control(c)
			case c == '\t':
				text.WriteByte(' ')
				v.scr.control(c)
			case c >= 0x20 && c != 0x7f:
				text.WriteByte(c)
				v.scr.put(rune(c))
			default:
				v.scr.control(c)
			}
		case stEsc:
			v.params = v.params[:0]
			switch {
			case c == '[':
				v.state = stCSI
			case c == ']':
				v.state = stOSC
			case c == 'P' || c == 'X' || c == '^' || c == '_':
				v.state = stString
			case c >= 0x20 && c <= 0x2f:
				v.state = stEscInt
			default:
				v.scr.esc(c)
				v.state = stGround
			}
		case stEscInt:
			if c < 0x20 || c > 0x2f {
				v.state = stGround
			}
		case stCSI:
			if c >= 0x40 && c <= 0x7e {
				replies = append(replies, v.csi(c, text)...)
				v.state = stGround
			} else if len(v.params) < maxParams {
				v.params = append(v.params, c)
			}
		case stOSC:
			switch {
			case c == 0x07:
				replies = append(replies, v.osc()...)
				v.state = stGround
			case c == 0x1b:
				v.state = stOSCEsc
			case len(v.params) < maxParams:
				v.params = append(v.params, c)
			}
		case stOSCEsc:
			replies = append(replies, v.osc()...)
			v.state = stGround
		case stString:
			if c == 0x1b {
				v.state = stStrEsc
			} else if c == 0x07 {
				v.state = stGround
			}
		case stStrEsc:
			v.state = stGround
		}
	}
	return replies
}

// csi handles the CSI sequence with final byte f.
func (v *vtParser) csi(f byte, text *strings.Builder) []byte {
	p := string(v.params)
	v.scr.csi(f, p)
	switch {
	case f == 'n' && p == "6": // cursor position report
		return fmt.Appendf(nil, "\x1b[%d;%dR", v.scr.row+1, v.scr.col+1)
	case f == 'c' && (p == "" || p == "0"): // primary device attributes: a VT220
		return []byte("\x1b[?62;22c")
	case f == 'C': // cursor forward: what it skips reads as blank
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			n = 1
		}
		text.WriteString(strings.Repeat(" ", min(n, 500)))
	}
	return nil
}

// osc handles a complete OSC sequence: colour queries get an answer
// (black background, white foreground).
func (v *vtParser) osc() []byte {
	switch string(v.params) {
	case "10;?":
		return []byte("\x1b]10;rgb:ffff/ffff/ffff\x1b\\")
	case "11;?":
		return []byte("\x1b]11;rgb:0000/0000/0000\x1b\\")
	}
	return nil
}
