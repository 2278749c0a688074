package driver

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"os"
	"sync"

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
	// empty. Empty means the one tools/clis pins for Name.
	Binary string
	// Package is the npm package that installs Binary, named in the error
	// for a missing binary. Empty means the one tools/clis pins for Name
	// (when Binary is its binary).
	Package string
	// Tested is the CLI version this release was tested with. Empty means
	// the version tools/clis pins for Name (tools/clis/package.json; when
	// Binary is its binary).
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
	// Caps is what the backend supports. What follows from the Spec's
	// functions is the kit's, whatever Caps says: Sessions is whether
	// StartSession is set; ContinueSession (the kit resumes the newest
	// session ListSessions finds) holds where ListSessions is set and
	// Resume holds, one-shot and, with StartSession, live; Interactive,
	// PortableSessions and ListSessions are whether those functions are
	// set.
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
	// NewParser makes the parser of one run: one that Lines builds, for a
	// CLI that prints one JSON object per line, or a Parser of its own
	// for output of another shape. It reads only r.Req's Model and
	// SessionID and r.Deltas, which a wire log records, so that a replay
	// parses exactly as the run did, and r.Options (MaxLineBytes bounds
	// what a parser buffers across lines).
	NewParser func(r *Run) Parser
	// Classify maps the CLI's own wording of an error to
	// agentcli.ErrSessionNotFound, ErrAuth, ErrRateLimited or nil. Generic
	// wording (HTTP statuses, "rate limit", "unauthorized") is recognised
	// without it. ClassifyBy builds one from a table of wordings.
	Classify func(msg string) error
	// Hint explains a failure the CLI is known for (a start-up refusal, an
	// empty prompt), or returns "". HintOn builds one from a table of
	// stderr wordings.
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
	// ExportSession, if set, returns the files in which the CLI keeps
	// session id, run in r.Dir (agentcli.ExportSession), with names
	// relative to roots it knows; a session it has no files of is
	// SessionNotFound. ImportSession, if set, writes files, exported
	// from a session run in oldDir and already rewritten to name r.Dir
	// instead (RewriteDir), so that the CLI resumes the session from
	// r.Dir, and returns the id to resume it by (normally id). Both run
	// with r's environment (the CLI's home, its state directories) and
	// start no model call.
	ExportSession func(ctx context.Context, r *Run, id string) ([]SessionFile, error)
	ImportSession func(ctx context.Context, r *Run, oldDir, id string, files []SessionFile) (string, error)
	// ListSessions, if set, returns the sessions the CLI keeps for r.Dir
	// (agentcli.ListSessions; any order), with r's environment, starting
	// no model call. Request.Continue resumes the newest of them: the
	// backend sees its id as Request.SessionID, never Continue.
	ListSessions func(ctx context.Context, r *Run) ([]agentcli.SessionInfo, error)
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

	spec     *Spec
	cmu      sync.Mutex // guards tmp and cleanups (see Cleanup)
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
	var raw json.RawMessage
	if proto != nil {
		raw, _ = json.Marshal(proto)
	}
	start := r.wireStart(backend, args, r.red)
	start.Deltas, start.Live, start.Proto = true, true, raw
	start.Permission, start.Timeout = string(r.Req.Permission), r.Req.Timeout
	return wirelog.NewWriter(r.Req.WireLog, start)
}

// Defer registers f to run when the run ends (after the process is gone),
// on every path, like the temporary directory's removal. A live session
// runs them when it closes.
func (r *Run) Defer(f func()) {
	r.cmu.Lock()
	r.cleanups = append(r.cleanups, f)
	r.cmu.Unlock()
}

// TempDir returns a private (0700) directory that lives as long as the run
// and is removed with everything in it when the run ends.
func (r *Run) TempDir() (string, error) {
	r.cmu.Lock()
	defer r.cmu.Unlock()
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
	// A one-shot run that went through a live session cleans up when it
	// ends, and the session when its CLI is gone, which may come later:
	// whoever comes first does it, once.
	r.cmu.Lock()
	cleanups, tmp := r.cleanups, r.tmp
	r.cleanups, r.tmp = nil, ""
	r.cmu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	if tmp != "" {
		os.RemoveAll(tmp)
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
	// Before holds lines handled as if the CLI had printed them first:
	// the parser reads them and the wire log records them as stdout
	// lines, so that a replay yields the same events. It is for what the
	// backend knows of the run before the CLI says it (copilot's session
	// id, which agentcli chooses and copilot prints only at the end).
	Before [][]byte
	// After, if set, is called once the CLI has exited and its stdout is
	// read to the end (not when the run's context ended first). Each line
	// it returns is handled as if the CLI had printed it last: the parser
	// reads it and the wire log records it as a stdout line, so that a
	// replay yields the same events. It is for what a CLI writes to a
	// file rather than to stdout (copilot's usage statistics).
	After func() [][]byte
}

// Exit is how the CLI process ended, as a parser sees it: its exit
// status and the tail of its stderr, raw (the kit redacts what it
// reports). It is the exit record of the wire log, defined once.
type Exit = wirelog.Exit

// DefaultMaxLine is the longest output line a run reads when
// agentcli.Options.MaxLineBytes is zero: 64 MiB. A parser that buffers
// across lines bounds what it keeps by the same limit.
const DefaultMaxLine = proc.DefaultMaxLine
