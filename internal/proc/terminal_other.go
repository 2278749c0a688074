//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package proc

import (
	"context"
	"errors"
	"os"
	"time"
)

// ErrNotForeground is returned by StartTerminal when this process is not in
// its controlling terminal's foreground process group.
var ErrNotForeground = errors.New("proc: not in the terminal's foreground process group")

// ErrNotTerminal is returned by StartTerminal when TerminalSpec.Stdin is not
// a terminal, and on systems where terminals are not supported.
var ErrNotTerminal = errors.New("proc: terminals are not supported on this system")

// TerminalSpec describes a process to run on a terminal.
type TerminalSpec struct {
	// Path is the resolved path of the binary.
	Path string
	// Args are the arguments, without argv[0].
	Args []string
	// Dir is the working directory.
	Dir string
	// Env is the complete environment.
	Env []string
	// Stdin, Stdout and Stderr become the process's standard files.
	Stdin, Stdout, Stderr *os.File
	// KillGrace is the time between SIGTERM and SIGKILL.
	KillGrace time.Duration
}

// StartTerminal fails with ErrNotTerminal on this system.
func StartTerminal(context.Context, TerminalSpec) (*Process, error) { return nil, ErrNotTerminal }

// IsTerminal reports false on this system.
func IsTerminal(*os.File) bool { return false }

// termState is unused on this system.
type termState struct{}

func (*termState) restore(bool) {}
