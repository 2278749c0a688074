package live

import (
	"context"
	"errors"
	"fmt"
)

// Writing to the CLI's stdin. One goroutine (write) owns the pipe and
// writes the queued messages in order, each whole: a CLI that stops
// reading blocks that goroutine only. Senders wait for their message with
// their own context (Host.Send) or not at all (Host.Post, for answers to
// the CLI's requests, so that the reader never waits for the CLI to read);
// Close closes the pipe under a blocked write, which then fails.

// errUnsent: a message was given up before any of it was written.
var errUnsent = errors.New("not sent")

// outMsg is one message for the CLI's stdin.
type outMsg struct {
	b     []byte
	done  chan error // nil for a posted message
	state msgState   // guarded by Session.wmu
}

type msgState int

const (
	msgQueued msgState = iota
	msgWriting
	msgWritten
	msgDropped
)

// send queues line (a newline is added when missing) and, with wait,
// waits until it is written, ctx ends or the session ends.
func (s *Session) send(ctx context.Context, line []byte, wait bool) error {
	select {
	case <-s.dead:
		return s.closedErr()
	default:
	}
	if len(line) == 0 || line[len(line)-1] != '\n' {
		line = append(line[:len(line):len(line)], '\n')
	}
	if s.sink != nil {
		s.sink() // replaying: what was written is in the log
		return nil
	}
	m := &outMsg{b: line}
	if wait {
		m.done = make(chan error, 1)
	}
	s.wmu.Lock()
	if !wait {
		if s.posted >= maxPosted {
			s.wmu.Unlock()
			err := s.protocolError("the CLI does not read its stdin: %d answers wait to be written; session killed", maxPosted)
			s.kill(err)
			return err
		}
		s.posted++
	}
	s.wq = append(s.wq, m)
	s.wmu.Unlock()
	select {
	case s.wwake <- struct{}{}:
	default:
	}
	if !wait {
		return nil
	}
	select {
	case err := <-m.done:
		return err
	case <-ctx.Done():
		s.wmu.Lock()
		if m.state == msgWritten {
			// Written before ctx ended (the writer's answer had not
			// been read yet: select picks either of two ready cases):
			// the message was sent.
			s.wmu.Unlock()
			return <-m.done
		}
		unsent := m.state == msgQueued
		if unsent {
			m.state = msgDropped
			for i, q := range s.wq {
				if q == m {
					s.wq = append(s.wq[:i], s.wq[i+1:]...)
					break
				}
			}
		}
		s.wmu.Unlock()
		if unsent {
			return fmt.Errorf("%w: %w", errUnsent, ctx.Err())
		}
		// Being written: it is finished on the writer's side.
		return ctx.Err()
	case <-s.dead:
		return s.closedErr()
	}
}

// write is the writer goroutine: it writes the queued messages to the
// CLI's stdin, in order, until the session ends.
func (s *Session) write() {
	w := s.p.Stdin()
	for {
		s.wmu.Lock()
		for len(s.wq) == 0 {
			s.wmu.Unlock()
			select {
			case <-s.wwake:
			case <-s.dead:
				return
			}
			s.wmu.Lock()
		}
		m := s.wq[0]
		s.wq[0] = nil
		s.wq = s.wq[1:]
		m.state = msgWriting
		if m.done == nil {
			s.posted--
		}
		s.wmu.Unlock()
		if s.wire != nil {
			s.wire.In(m.b)
		}
		_, err := w.Write(m.b)
		if err != nil {
			err = fmt.Errorf("%s: writing to the CLI: %w", s.backend, s.closedErrWith(err))
		} else {
			s.wmu.Lock()
			m.state = msgWritten
			s.wmu.Unlock()
		}
		if m.done != nil {
			m.done <- err
		}
	}
}
