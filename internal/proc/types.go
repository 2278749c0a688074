package proc

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/agentcli/agentcli/driver/wirelog"
)

// Defaults for zero Spec fields.
const (
	// DefaultKillGrace is the default time between SIGTERM and SIGKILL.
	DefaultKillGrace = 3 * time.Second
	// DefaultMaxLine is the default maximum length of a stdout line.
	DefaultMaxLine = 64 << 20
	// DefaultStderrTail is the default size of the kept end of stderr.
	DefaultStderrTail = 8 << 10
)

// EnvRunID is the environment variable Start sets, to a value unique to the
// run, in the environment of the process it starts; descendants that
// inherit it are found by it (see the package comment).
const EnvRunID = "AGENTCLI_RUN_ID"

// Spec describes a process to start.
type Spec struct {
	// Path is the resolved path of the binary.
	Path string
	// Args are the arguments, without argv[0].
	Args []string
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Env is the complete environment; nil means the caller's. Start
	// replaces any EnvRunID entry with the run's own.
	Env []string
	// Stdin is written to the process's stdin, which is then closed. Nil
	// means /dev/null (unless KeepStdin).
	Stdin []byte
	// KeepStdin leaves stdin open as a pipe the caller writes with
	// Process.Stdin; Spec.Stdin must be nil then.
	KeepStdin bool
	// KillGrace is the time between SIGTERM and SIGKILL, and how long
	// output beyond what was in the pipes is still read after the process
	// has exited. Zero means DefaultKillGrace.
	KillGrace time.Duration
	// MaxLine is the longest stdout line returned; longer ones are
	// skipped. Zero means DefaultMaxLine.
	MaxLine int
	// StderrTail is how many bytes of the end of stderr are kept. Zero
	// means DefaultStderrTail.
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

// Exit describes how a process ended: its exit status and stderr tail
// (wirelog.Exit: Code, -1 if the process died from a signal; Stderr;
// Truncated, Stderr lacks the start of what was written), and more.
type Exit struct {
	wirelog.Exit
	// Signal is the signal that killed the process, if any.
	Signal syscall.Signal
	// Stopped reports that the process was stopped by Stop, Close or its
	// context (cancellation, timeout) before Wait returned.
	Stopped bool
	// HeldOpen reports that stdout was still held open (or still being
	// written) by some process KillGrace after the CLI had exited and its
	// group was killed: a descendant that left the group. Reading stopped
	// there.
	HeldOpen bool
	// Escaped is how many processes outside the CLI's group were found by
	// the run's tag and killed (Linux only).
	Escaped int
	// Err is a wait error that is not an exit status, if any.
	Err error
}

// ErrNotForeground is returned by StartTerminal when the terminal is this
// process's controlling terminal but this process is not in its foreground
// process group (it runs as a background job): handing the terminal to the
// CLI would take it from the foreground job.
var ErrNotForeground = errors.New("proc: not in the terminal's foreground process group")

// TerminalSpec describes a process to run on a terminal (see
// StartTerminal).
type TerminalSpec struct {
	// Path is the resolved path of the binary.
	Path string
	// Args are the arguments, without argv[0].
	Args []string
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Env is the complete environment; nil means the caller's. The run's
	// EnvRunID entry replaces any other.
	Env []string
	// Stdin, Stdout and Stderr become the process's standard files, as
	// they are: no pipe is put in between. Stdin must be a terminal.
	Stdin, Stdout, Stderr *os.File
	// KillGrace is the time between SIGTERM and SIGKILL. Zero means
	// DefaultKillGrace.
	KillGrace time.Duration
}
