package driver

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/wirelog"
	"github.com/agentcli/agentcli/internal/proc"
)

// Spec declares one backend: everything that is particular to its CLI, as
// data and pure functions. New turns a Spec into an agentcli.Backend; the
// run contract (validation, warnings, binary resolution, environment,
// timeouts, the process, the outcome, redaction) is this package's, the
// same for every backend.
type Spec struct {
	// Name is the registry name, e.g. "claude".
	Name string
	// Binary is the executable looked up on PATH when Options.Path is
	// empty.
	Binary string
	// Package is the npm package that installs Binary, named in the error
	// for a missing binary.
	Package string
	// Tested is the CLI version this release was tested with (the version
	// pinned in tools/clis/package.json).
	Tested string
	// Credentials lists the environment variables that carry the CLI's
	// credentials (reported by name only, by Doctor and in an
	// *agentcli.CredentialsError).
	Credentials []string
	// HasCredentials, if set, reports whether the CLI has a credential
	// it could use in the run r (its environment, home directory and
	// working directory): one of Credentials, a credential file its login
	// wrote, a configured provider or local server. When in doubt it
	// reports true; it starts no process and uses no network. A run or
	// live session without one fails before the CLI starts with an
	// *agentcli.CredentialsError (one with Request.ExtraArgs is left to
	// the CLI), and Doctor reports a failure; the interactive UI is left
	// to log in.
	HasCredentials func(r *Run) bool
	// Login says, for the hint of a missing credential, how to log in
	// other than with a variable, e.g. "run `codex login`".
	Login string
	// Caps is what the backend supports.
	Caps agentcli.Capabilities
	// Tools maps the CLI's raw tool names to canonical ones.
	Tools Tools

	// Validate checks the request against the CLI's own rules (session id
	// syntax, tool-rule syntax, ...), after the generic checks. It returns
	// a *agentcli.RequestError naming the field. Nil means no extra rules.
	Validate func(req *agentcli.Request) error
	// Prepare builds one run: argv, stdin and extra environment. It is
	// called when iteration starts, after validation. Files it puts in
	// r.TempDir() are removed when the run ends, on every path.
	Prepare func(ctx context.Context, r *Run) (*Job, error)
	// NewParser makes the parser of one run. It reads only r.Req's Model
	// and SessionID and r.Deltas, which a wire log records, so that a
	// replay parses exactly as the run did, and r.Options (MaxLineBytes
	// bounds what a parser buffers across lines).
	NewParser func(r *Run) Parser
	// Classify maps the CLI's own wording of an error to
	// agentcli.ErrSessionNotFound, ErrAuth, ErrRateLimited or nil. Generic
	// wording (HTTP statuses, "rate limit", "unauthorized") is recognised
	// without it.
	Classify func(msg string) error
	// Hint explains a failure the CLI is known for (a start-up refusal, an
	// empty prompt), or returns "".
	Hint func(e Exit) string
	// Stderr, if set, removes noise the CLI prints on stderr (colour
	// codes, stack backtraces) before the tail is reported.
	Stderr func(string) string
	// NewState, if set, makes the per-backend state passed to Prepare as
	// Run.State (for example a cache shared by the runs of one Backend).
	NewState func() any
	// StartSession, if set, starts a live session (see
	// SessionStarter). It records the session in
	// r.LiveWireLog's writer when that is not nil.
	StartSession func(ctx context.Context, r *Run) (agentcli.Session, error)
	// Questions, if set, reports that the CLI asks the user questions a
	// way of its own in a run or session of req, which the backend routes
	// to Request.OnQuestion (see AskQuestion); otherwise a request with
	// OnQuestion gets agentcli's question tool, served with the host
	// tools (see HostTools).
	Questions func(req *agentcli.Request) bool
	// NativeHooks, if set, reports which of req's hooks (Request.Hooks)
	// the backend calls itself, through its CLI's own hook protocol, in
	// a live session (live) or a one-shot run of the CLI; the runner
	// builds the others (see RunHooks).
	NativeHooks func(req *agentcli.Request, live bool) NativeHooks
	// LiveRun, if set, reports that a one-shot run of req goes through a
	// live session (StartSession) whatever its permission mode, because
	// it carries something only the live protocol takes privately (as
	// runs in a mode other than PermissionBypass always do).
	LiveRun func(req *agentcli.Request) bool
	// ReplaySession, if set, replays the wire log of a live session (see
	// agentcli.Replay): r.Req is the request as the log's start record
	// describes it, proto is what the session recorded for its protocol,
	// and log is positioned after the start record.
	ReplaySession func(r *Run, proto json.RawMessage, log *wirelog.Reader) iter.Seq2[agentcli.Event, error]
	// Interactive, if set, builds the command line (and extra
	// environment) of the CLI's own interactive UI, for
	// agentcli.Interactive. r.Req is validated as for a run, except that
	// Prompt may be empty (no first message) and Permission is left to
	// Interactive ("" means the UI's own asking mode): it maps the mode to the UI's own or
	// returns an *agentcli.UnsupportedError. Job.Stdin must be nil (the
	// CLI reads the terminal) and OnSession is not called. Files in
	// r.TempDir() and r.Defer functions are cleaned up when the CLI has
	// exited.
	Interactive func(ctx context.Context, r *Run) (*Job, error)
}

// Run is what a Spec's Prepare sees of one run.
type Run struct {
	// Req is the validated request, without the settings the backend
	// does not support (they were warned about); never nil. Prepare must
	// not modify it.
	Req *agentcli.Request
	// Deltas reports that the caller consumes text as it streams (Stream,
	// or Run with OnText): a CLI that only reports text deltas on request
	// should be asked for them.
	Deltas bool
	// Path is the resolved CLI binary.
	Path string
	// Dir is the absolute working directory of the CLI process.
	Dir string
	// Env is the CLI's environment as built so far (inherited or not, per
	// Request.ReplaceEnv, then Options.Env, then Request.Env). Job.Env is
	// appended to it.
	Env []string
	// Options are the backend's options, defaults filled in.
	Options *agentcli.Options
	// Logger is Options.Logger.
	Logger *slog.Logger
	// State is the Spec's per-backend state (see Spec.NewState).
	State any

	tmp      string
	cleanups []func()
	backend  string    // set for interactive runs (see Unsupported)
	warned   *sync.Map // the backend's warnings logged so far (see Warn)
	red      *Redactor // the run's redactor, once it is known

	// host: the run's host tools, or nil (see attachHost); hooks: its
	// hooks, or nil (see attachHooks).
	host  *HostTools
	hooks *RunHooks
}

// Warn logs a warning about something the run ignores (an option the
// backend cannot honour) on the backend's logger, once per Backend and
// key rather than once per run: a program that sends the same request
// again and again is told once. key names what is ignored; the record
// has key as its "option" attribute, after attrs.
func (r *Run) Warn(key, msg string, attrs ...any) {
	if r.Logger == nil {
		return
	}
	if r.warned != nil {
		if _, dup := r.warned.LoadOrStore(key, true); dup {
			return
		}
	}
	r.Logger.Warn(msg, append(attrs, "option", key)...)
}

// Redactor returns the run's redactor (nil before the run's environment
// is known).
func (r *Run) Redactor() *Redactor { return r.red }

// LiveWireLog starts the wire log of a live session when the request asks
// for one, and returns nil otherwise. Its start record describes the
// session as Replay needs it: the request's model, session id, output
// schema, Raw limits, permission mode and per-turn timeout, args (secrets
// redacted, informational) and proto, what the backend's protocol needs
// to read the session as it did (see Spec.ReplaySession); proto must not
// hold secrets.
func (r *Run) LiveWireLog(backend string, args []string, proto any) *wirelog.Writer {
	if r.Req.WireLog == nil {
		return nil
	}
	argv := make([]string, 0, len(args))
	for _, a := range args {
		argv = append(argv, r.red.Redact(a))
	}
	var raw json.RawMessage
	if proto != nil {
		raw, _ = json.Marshal(proto)
	}
	return wirelog.NewWriter(r.Req.WireLog, wirelog.Start{
		Backend:     backend,
		Deltas:      true,
		Model:       r.Req.Model,
		SessionID:   r.Req.SessionID,
		Schema:      len(r.Req.OutputSchema) > 0,
		DropRaw:     r.Req.DropRaw,
		MaxRawBytes: r.Req.MaxRawBytes,
		Argv:        argv,
		Time:        time.Now().UTC(),
		Live:        true,
		Permission:  string(r.Req.Permission),
		Timeout:     r.Req.Timeout,
		Proto:       raw,
	})
}

// Defer registers f to run when the run ends (after the process is gone),
// on every path, like the temporary directory's removal. A live session
// runs them when it closes.
func (r *Run) Defer(f func()) { r.cleanups = append(r.cleanups, f) }

// TempDir returns a private (0700) directory that lives as long as the run
// and is removed with everything in it when the run ends.
func (r *Run) TempDir() (string, error) {
	if r.tmp != "" {
		return r.tmp, nil
	}
	d, err := os.MkdirTemp("", "agentcli-run-*")
	if err != nil {
		return "", err
	}
	r.tmp = d
	return d, nil
}

// Cleanup removes the run's temporary directory, if any. The runner calls
// it when a run ends; a live session calls it when it closes.
func (r *Run) Cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
		r.tmp = ""
	}
}

// Lookup returns the value of key in r.Env; the last entry wins, as with
// os/exec.
func (r *Run) Lookup(key string) string {
	return Lookup(r.Env, key)
}

// Job is one run as prepared by a Spec.
type Job struct {
	// Args are the CLI's arguments, without argv[0].
	Args []string
	// Stdin is written to the CLI's stdin, which is then closed. Nil means
	// no input (/dev/null).
	Stdin []byte
	// Env holds entries appended to Run.Env (later entries win).
	Env []string
	// OnSession, if set, is called once with the first session id the
	// run reports.
	OnSession func(id string)
}

// Parser turns one run's stdout into events. A new Parser is made for every
// run; it need not be safe for concurrent use.
type Parser interface {
	// Line parses one stdout line (without its newline) and returns the
	// events it yields, in order. The returned slice may be reused by the
	// next call. Line never fails: output it cannot understand becomes
	// EventUnknown or EventNotice events.
	Line(line []byte) []agentcli.Event
	// End is called once, after the process has exited and stdout is
	// exhausted. It decides the outcome from the terminal event it saw
	// and the exit status: a Result, or an error (with the Result when
	// there is one). When the CLI printed no terminal event at all, End
	// returns nil, nil and the runner reports the exit (an
	// *agentcli.ExitError, or an *agentcli.NoResultError after exit 0).
	End(exit Exit) (*agentcli.Result, error)
}

// UTF8Parser is implemented by a Parser that can skip its checks for
// invalid UTF-8 in a line already known to be valid UTF-8. The runner
// checks each line on the goroutine that reads the CLI's output, in
// parallel with parsing, and calls LineUTF8 for the lines that pass.
type UTF8Parser interface {
	// LineUTF8 is Line for a line that is valid UTF-8; it returns the
	// same events.
	LineUTF8(line []byte) []agentcli.Event
}

// BorrowParser is implemented by a Parser that can parse lines it does
// not own, for runs that keep no Raw (Request.DropRaw): the runner then
// reads lines into buffers it reuses once their events are handled,
// instead of giving each line an allocation that Event.Raw would keep.
type BorrowParser interface {
	Parser
	// Borrow is called before the first line, and before any
	// NewLineDecoder (of a DecodeParser). From then on, nothing the
	// parser or its decoders return or keep (events, results, errors,
	// state carried to later lines) may hold memory of a line once Line
	// or Apply of that line has returned: strings and JSON values are
	// copies, and Raw is left empty, except on EventUnknown events, whose
	// Raw is a copy of the line. (A line handed over for keeps is the
	// exception: see OwnParser.)
	Borrow()
}

// OwnParser is implemented by a BorrowParser that can also take lines for
// keeps. Once it borrows, the runner hands it a line it read into memory
// of its own (one too long for the batch's buffer) through LineOwned
// instead of Line, or to its decoders with LineDecoder.Decode's owned set:
// nobody reads or reuses that memory afterwards, so what the parser
// returns may share it (a huge tool output then costs the line it came
// in, not a copy as well), and the parser may modify it, as long as what
// the line yields is the same as from Line.
type OwnParser interface {
	BorrowParser
	// LineOwned is Line for a line handed over for keeps; validUTF8
	// reports that it is valid UTF-8 (see UTF8Parser).
	LineOwned(line []byte, validUTF8 bool) []agentcli.Event
}

// DecodeParser is implemented by a Parser whose work on a line splits in
// two: decoding the line, which depends on nothing but the line and can
// run on any goroutine, and applying the decoded line, which updates the
// run's state and must follow the order of the lines. The runner then
// decodes lines on goroutines of their own, several at a time, and applies
// them in order on the run's goroutine. For every line, Apply of a Decode
// must return what Line returns.
type DecodeParser interface {
	Parser
	// NewLineDecoder returns a decoder for one goroutine. Decoders share
	// nothing with each other or with the parser.
	NewLineDecoder() LineDecoder
	// Apply returns the events of a line decoded by one of the parser's
	// decoders; lines are applied in the order they were printed, each
	// once. The returned slice may be reused by the next call, and
	// Apply may reuse what d holds once it returns.
	Apply(d Decoded) []agentcli.Event
}

// LineDecoder decodes lines for a DecodeParser.
type LineDecoder interface {
	// Decode decodes one stdout line; validUTF8 reports that the line is
	// known to be valid UTF-8, and owned that it is handed over for keeps
	// (only to a parser that borrows; see OwnParser, and BorrowParser for
	// a decoder that ignores it). into, if not nil, is an earlier result
	// of this decoder's parser, which Decode may reuse. A nil result
	// means the line is not decoded: the runner passes it to Line (or
	// LineOwned).
	Decode(line []byte, validUTF8, owned bool, into Decoded) Decoded
}

// Decoded is a line decoded by a LineDecoder; only its parser looks
// inside.
type Decoded any

// Exit is how the CLI process ended, as a parser sees it.
type Exit struct {
	// Code is the exit status; -1 if the process was killed by a signal.
	Code int
	// Stderr is the tail of stderr, raw (the runner redacts what it
	// reports).
	Stderr string
	// Truncated reports that Stderr lacks the start of what the CLI wrote.
	Truncated bool
}

// DefaultMaxLine is the longest output line a run reads when
// agentcli.Options.MaxLineBytes is zero: 64 MiB. A parser that buffers
// across lines bounds what it keeps by the same limit.
const DefaultMaxLine = proc.DefaultMaxLine
