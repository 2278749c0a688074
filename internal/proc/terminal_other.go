//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package proc

import (
	"context"
	"errors"
	"os"
)

// ErrNotTerminal is returned by StartTerminal when TerminalSpec.Stdin is not
// a terminal, and on systems where terminals are not supported.
var ErrNotTerminal = errors.New("proc: terminals are not supported on this system")

// StartTerminal fails with ErrNotTerminal on this system.
func StartTerminal(context.Context, TerminalSpec) (*Process, error) { return nil, ErrNotTerminal }

// IsTerminal reports false on this system.
func IsTerminal(*os.File) bool { return false }

// termState is unused on this system.
type termState struct{}

func (*termState) restore(bool) {}
