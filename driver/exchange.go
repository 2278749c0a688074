package driver

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/agentcli/agentcli/internal/proc"
)

// Conn is the CLI process of Exchange as its talk function sees it.
type Conn struct {
	p     *proc.Process
	stdin io.WriteCloser
	limit int
}

// Send writes b to the CLI's stdin.
func (c *Conn) Send(b []byte) error {
	_, err := c.stdin.Write(b)
	return err
}

// CloseStdin closes the CLI's stdin (EOF).
func (c *Conn) CloseStdin() error { return c.stdin.Close() }

// Recv returns the CLI's next stdout line (without its newline); at the
// end of its output, io.EOF. A line longer than Exchange's limit is an
// error.
func (c *Conn) Recv() ([]byte, error) {
	l, err := c.p.ReadLine()
	if err != nil {
		return nil, err
	}
	if l.TooLong > 0 {
		return nil, fmt.Errorf("a line of more than %d bytes", c.limit)
	}
	return l.Data, nil
}

// Exchange runs the CLI binary of r with args (no model call: a request
// to its own protocol, such as a fork or a listing) in the run's directory
// and environment, with stdin a pipe, and calls talk, which writes
// requests and reads the answers line by line (each at most limit bytes).
// When talk returns, stdin is closed and the CLI is given until timeout
// (from the start) to exit, then stopped, and reaped like any run. It
// returns talk's error, else the CLI's failure (a nonzero exit status,
// with its stderr's tail), else nil. It gives up after timeout or when
// ctx ends.
func Exchange(ctx context.Context, r *Run, timeout time.Duration, limit int, args []string, talk func(c *Conn) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	spec := r.toolSpec(args, limit)
	spec.KeepStdin = true
	p, err := proc.Start(ctx, spec)
	if err != nil {
		return err
	}
	defer p.Close()
	c := &Conn{p: p, stdin: p.Stdin(), limit: limit}
	terr := talk(c)
	c.stdin.Close()
	if terr != nil {
		p.Stop()
	}
	for {
		// What the CLI still prints is read (and dropped), so that it
		// is never blocked on a full pipe on its way out.
		if _, err := p.ReadLine(); err != nil {
			break
		}
	}
	exit := p.Wait()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s %v: %w", r.Path, args, ctx.Err())
	case terr != nil:
		return fmt.Errorf("%s %v: %w (stderr: %s)", r.Path, args, terr, Tail(exit.Stderr, 300))
	case exit.Code != 0:
		return fmt.Errorf("%s %v: exit status %d: %s", r.Path, args, exit.Code, Tail(exit.Stderr, 300))
	}
	return nil
}
