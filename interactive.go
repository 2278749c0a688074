package agentcli

import (
	"context"
	"os"
)

// Terminal is the terminal an interactive CLI runs on (see Interactive).
// A nil *Terminal, like a nil field, means this process's own standard
// files.
//
// The fields are files, not io.Reader and io.Writer, because a CLI's
// interactive UI needs a terminal device: each of the four CLIs checks
// that its stdin and stdout are terminals (and runs headless, or fails,
// otherwise), switches the terminal to raw mode and asks for its size. A
// reader or writer would have to be connected through a pipe, which is
// none of that. A program that wants to show the UI elsewhere (a web
// terminal, a test) opens a pseudo-terminal and passes its slave side.
type Terminal struct {
	// Stdin is the terminal the CLI reads keys from. It must be a
	// terminal. Nil means os.Stdin.
	Stdin *os.File
	// Stdout is the terminal the CLI draws on. It must be a terminal.
	// Nil means os.Stdout.
	Stdout *os.File
	// Stderr receives what the CLI writes to standard error: a terminal
	// (usually the same as Stdout) or any file, such as a log. Nil means
	// os.Stderr.
	Stderr *os.File
}

// Interactive runs the interactive UI of b's CLI (or of the backend b wraps,
// middleware keeps it) on term (nil: this process's stdin, stdout and stderr)
// and returns the CLI's exit status. The person at the terminal talks to
// the CLI directly; agentcli reads nothing of what it shows. Interactive
// blocks until the CLI has exited, what it left behind has been killed and
// the terminal has been handed back.
//
// The request is read as for a run: Model, SystemPrompt (each CLI's own
// channel, as Capabilities().SystemPrompt describes; see the backend's
// documentation for the exceptions), SessionID (resume), Dir, Env,
// ReplaceEnv, ExtraArgs and, where the CLI's UI takes them, the tool
// filters, MCPServers, Effort and FallbackModel are validated and passed
// the same way, and private files are removed when the CLI exits. What a
// CLI's UI cannot take (MaxTurns, OutputSchema and MaxBudgetUSD, as a
// rule) is ignored with a warning, or refused under Options.Strict, like
// any option a backend does not support. Prompt is optional: when set, it is the
// first message, which the CLI sends as soon as it has started, as if it
// had been typed (the CLI's slash commands and file mentions apply to it,
// except where the backend documents an escape); it is never read as an
// option. Unlike a run's prompt, it is an argument of the CLI (the CLIs
// take a first message no other way), so other local users can read it in
// the process list, and it is limited to what one argument can hold
// (128 KiB on Linux). Permission maps to the UI's own modes: PermissionBypass to
// the CLI's skip-permissions (yolo) mode, PermissionAsk and the zero
// value to its mode that asks the person at the terminal
// (Request.OnPermission is not used), PermissionPlan and PermissionDeny where the CLI has such a
// mode; any other fails with an *UnsupportedError before anything starts.
// Timeout bounds the whole session. OnText, WireLog and PermissionTimeout
// are not used: nothing is parsed.
//
// The CLI runs with the terminal in the foreground. When term.Stdin is
// this process's controlling terminal, the CLI gets a process group of
// its own that is made the terminal's foreground group (so Ctrl-C reaches
// the CLI, not this program); this process must be in the foreground then,
// and must not use the terminal until Interactive returns. Any other
// terminal (a pseudo-terminal) becomes the controlling terminal of a new
// session the CLI leads. On Linux a CLI that suspends itself (Ctrl-Z) is
// continued at once: suspending the caller's job is not supported. When
// the CLI has exited, this process's group is the foreground group again
// and the terminal's mode is what it was before, also when the CLI died in
// raw mode; after a cancellation or a death by signal the escape sequences
// that leave the alternate screen, turn off mouse reporting and show the
// cursor are written to term.Stdout.
//
// A CLI that exits by itself returns its exit status and a nil error,
// whatever the status. Cancelling ctx (or Request.Timeout expiring) stops
// the CLI's process group (SIGTERM, then SIGKILL after Options.KillGrace)
// and returns -1 with an error matching ErrCanceled (or ErrTimeout)
// within KillGrace plus about a second; a CLI killed by a signal it did not
// get from agentcli returns -1 and an *ExitError. A request that cannot run
// returns -1 and a *RequestError (also when term.Stdin or term.Stdout is
// not a terminal, or this process runs in the background of its
// controlling terminal), an *UnsupportedError or a *BinaryError, before
// anything starts; a request the backend cannot run as asked (a permission
// mode its UI lacks, an option refused under Options.Strict, a bad field)
// is reported as such before the terminal is looked at. Interactive fails
// with an *UnsupportedError when no backend in b's chain implements
// an interactive mode; Capabilities().Interactive tells beforehand.
func Interactive(ctx context.Context, b Backend, req *Request, term *Terminal) (exitCode int, err error) {
	if i, ok := find[interface {
		Interactive(context.Context, *Request, *Terminal) (int, error)
	}](b); ok {
		return i.Interactive(ctx, req, term)
	}
	return -1, &UnsupportedError{Backend: nameOf(b), Feature: "interactive mode"}
}
