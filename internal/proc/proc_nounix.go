//go:build !unix

package proc

import (
	"context"
	"errors"
	"io"
)

// ErrUnsupportedPlatform is what Start returns where agentcli cannot yet
// guarantee its process handling (process groups, the kill ladder, reaping):
// everywhere but unix systems.
var ErrUnsupportedPlatform = errors.New("running CLIs is not supported on this platform")

// Process is a running CLI; on this platform none can be started.
type Process struct{}

// Start fails with ErrUnsupportedPlatform.
func Start(ctx context.Context, spec Spec) (*Process, error) { return nil, ErrUnsupportedPlatform }

// Stop does nothing.
func (p *Process) Stop() {}

// Stdin returns nil.
func (p *Process) Stdin() io.WriteCloser { return nil }

// ReadLine returns io.EOF.
func (p *Process) ReadLine() (Line, error) { return Line{}, io.EOF }

// Buffered returns 0: there is no output here.
func (p *Process) Buffered() int { return 0 }

// Wait returns a zero Exit.
func (p *Process) Wait() Exit { return Exit{} }

// Close does nothing.
func (p *Process) Close() {}

// Pid returns 0.
func (p *Process) Pid() int { return 0 }

// ReadLineTo returns io.EOF.
func (p *Process) ReadLineTo(buf []byte) (Line, []byte, error) { return Line{}, buf, io.EOF }
