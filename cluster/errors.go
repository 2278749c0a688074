package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"syscall"
	"time"

	"github.com/agentcli/agentcli"
)

// Sentinel errors of the pool. The typed errors below match them with
// errors.Is.
var (
	// ErrWorkerLost: the worker running a run or holding a live session
	// stopped answering (it died, was shut down or lost its connection)
	// after it had taken the work. The run is not run again by the pool:
	// it may have had side effects. See *WorkerLostError.
	ErrWorkerLost = errors.New("worker lost")
	// ErrCallerLost: the worker stopped hearing from the program that
	// submitted a run (it died or lost its connection), so it stopped the
	// run. Only the worker sees it (in its log); the caller is gone.
	ErrCallerLost = errors.New("caller lost")
	// ErrNoWorkers: no live worker serves the backend (Backend.Check).
	ErrNoWorkers = errors.New("no live worker for the backend")
	// ErrSessionNotSaved: a run or turn ended, but its session could not
	// be saved for other workers (see *SessionNotSavedError).
	ErrSessionNotSaved = errors.New("session not saved")
)

// SessionNotSavedError reports that a run or turn ended, with its result,
// but the worker could not save the session to the pool's object store
// (WorkerOptions.Sessions) within a few minutes of retries: resuming it
// on another worker would miss this run, so the caller is told instead
// of finding out from the model. It comes after the run's events (Run
// returns it with the Result) and is never transient: the run happened.
// A live session whose turn reports it keeps working on its worker.
type SessionNotSavedError struct {
	// Backend names the backend.
	Backend string
	// Session is the session id.
	Session string
	// Worker is the worker that holds the session's files.
	Worker string
	// Err says why (the store's or the porter's error).
	Err error
}

// Error implements the error interface.
func (e *SessionNotSavedError) Error() string {
	return fmt.Sprintf("%s: session %s not saved by worker %s (other workers would resume it without this run): %v",
		e.Backend, e.Session, e.Worker, e.Err)
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *SessionNotSavedError) Unwrap() []error { return []error{ErrSessionNotSaved, e.Err} }

// WorkerLostError reports that the worker running a run (or a turn of a
// live session) stopped answering after it took the work: nothing was
// heard from it for Options.WorkerDeadAfter while the caller's own
// connection was up, or it shut down before the run ended. The pool never
// runs such work again by itself, since the agent may already have acted.
//
// It matches ErrWorkerLost and agentcli.ErrNoResult (the run ended
// without a terminal result, like a CLI that crashed), so that
// agentcli.IsTransient and agentcli.WithRetry treat it as they treat a
// crashed CLI.
type WorkerLostError struct {
	// Backend names the backend.
	Backend string
	// Worker is the id of the worker that took the work.
	Worker string
	// Started reports that the worker had begun the run (it had sent at
	// least the handshake); false when it died after claiming the work
	// but before starting it, or died starting a live session before any
	// turn of it ran: nothing of the work ran, so it is safe to try again.
	Started bool
	// Silence is how long nothing was heard from the worker, when that is
	// how it was found lost.
	Silence time.Duration
	// Reason says what happened, e.g. "no heartbeat" or "worker shut
	// down".
	Reason string

	// tries counts the workers the work was handed to, when none of them
	// started it (Started false): it ends so only after maxResubmits.
	tries int
}

// Error implements the error interface.
func (e *WorkerLostError) Error() string {
	s := fmt.Sprintf("%s: worker %s lost", e.Backend, e.Worker)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Silence > 0 {
		s += fmt.Sprintf(" (silent for %v)", e.Silence.Round(time.Millisecond))
	}
	if e.tries > 1 {
		s += fmt.Sprintf(" (the last of %d workers handed the work; none started it)", e.tries)
	}
	return s
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *WorkerLostError) Unwrap() []error {
	return []error{ErrWorkerLost, agentcli.ErrNoResult}
}

// sessionLostError ends a live session whose worker was lost while the
// session could not move (no archive of it exists): it matches
// agentcli.ErrSessionClosed and the *WorkerLostError.
type sessionLostError struct{ lost error }

func (e *sessionLostError) Error() string   { return "session closed: " + e.lost.Error() }
func (e *sessionLostError) Unwrap() []error { return []error{agentcli.ErrSessionClosed, e.lost} }

// RemoteError is an error from the other side of the wire that has no
// type of its own on this side (for example a backend's unexported error
// type). Its message is the original's, and it matches, with errors.Is and
// errors.As, the sentinel errors and the agentcli typed errors the
// original matched.
type RemoteError struct {
	// Msg is the original error's message.
	Msg string
	// errs are the decoded sentinels and typed errors.
	errs []error
}

// Error implements the error interface.
func (e *RemoteError) Error() string { return e.Msg }

// Unwrap returns the errors e matches, for errors.Is and errors.As.
func (e *RemoteError) Unwrap() []error { return e.errs }

// sentinels are the errors whose identity crosses the wire by name.
var sentinels = []struct {
	name string
	err  error
}{
	{"not_found", agentcli.ErrNotFound},
	{"not_executable", agentcli.ErrNotExecutable},
	{"exit", agentcli.ErrExit},
	{"timeout", agentcli.ErrTimeout},
	{"canceled", agentcli.ErrCanceled},
	{"parse", agentcli.ErrParse},
	{"line_too_long", agentcli.ErrLineTooLong},
	{"no_result", agentcli.ErrNoResult},
	{"result", agentcli.ErrResult},
	{"session_not_found", agentcli.ErrSessionNotFound},
	{"auth", agentcli.ErrAuth},
	{"rate_limited", agentcli.ErrRateLimited},
	{"unknown_backend", agentcli.ErrUnknownBackend},
	{"bad_request", agentcli.ErrBadRequest},
	{"unsupported", agentcli.ErrUnsupported},
	{"interrupted", agentcli.ErrInterrupted},
	{"session_closed", agentcli.ErrSessionClosed},
	{"ctx_canceled", context.Canceled},
	{"ctx_deadline", context.DeadlineExceeded},
	{"worker_lost", ErrWorkerLost},
	{"caller_lost", ErrCallerLost},
	{"no_workers", ErrNoWorkers},
	{"session_not_saved", ErrSessionNotSaved},
	{"archive_too_large", ErrArchiveTooLarge},
	{"fs_not_exist", fs.ErrNotExist},
	{"fs_permission", fs.ErrPermission},
	{"exec_not_found", exec.ErrNotFound},
	// Errnos go by name: their numbers differ between systems.
	{"EAGAIN", syscall.EAGAIN},
	{"ENOMEM", syscall.ENOMEM},
	{"EMFILE", syscall.EMFILE},
	{"ENFILE", syscall.ENFILE},
	{"ETXTBSY", syscall.ETXTBSY},
	{"EINTR", syscall.EINTR},
	{"ENOENT", syscall.ENOENT},
	{"EACCES", syscall.EACCES},
}

func sentinelByName(name string) error {
	for _, s := range sentinels {
		if s.name == name {
			return s.err
		}
	}
	return nil
}

func sentinelName(err error) string {
	for _, s := range sentinels {
		if s.err == err {
			return s.name
		}
	}
	return ""
}

// wireError is an error as it crosses the wire: the typed errors of
// agentcli field by field, anything else as its message and the sentinels
// it matches.
type wireError struct {
	Type string   `json:"type,omitempty"`
	Msg  string   `json:"msg,omitempty"`
	Is   []string `json:"is,omitempty"`

	Backend        string       `json:"backend,omitempty"`
	Field          string       `json:"field,omitempty"`
	Reason         string       `json:"reason,omitempty"`
	Feature        string       `json:"feature,omitempty"`
	Path           string       `json:"path,omitempty"`
	Hint           string       `json:"hint,omitempty"`
	Stderr         string       `json:"stderr,omitempty"`
	Subtype        string       `json:"subtype,omitempty"`
	TerminalReason string       `json:"terminal_reason,omitempty"`
	Message        string       `json:"message,omitempty"`
	Name           string       `json:"name,omitempty"`
	Worker         string       `json:"worker,omitempty"`
	Kind           string       `json:"kind,omitempty"`
	Sentinel       string       `json:"sentinel,omitempty"`
	Code           int          `json:"code,omitempty"`
	APIStatus      int          `json:"api_status,omitempty"`
	Limit          int          `json:"limit,omitempty"`
	Len            int          `json:"len,omitempty"`
	Duration       int64        `json:"duration,omitempty"`
	Started        bool         `json:"started,omitempty"`
	Line           []byte       `json:"line,omitempty"`
	Valid          []string     `json:"valid,omitempty"`
	Result         *wireResult  `json:"result,omitempty"`
	Cause          *wireError   `json:"cause,omitempty"`
	Typed          []*wireError `json:"typed,omitempty"`

	Method    string              `json:"method,omitempty"`
	Variables []string            `json:"variables,omitempty"`
	ResetsAt  time.Time           `json:"resets_at,omitzero"`
	RateLimit *agentcli.RateLimit `json:"rate_limit,omitempty"`
}

// maxErrText bounds each string of an encoded error.
const maxErrText = 16 << 10

func clip(s string) string {
	if len(s) > maxErrText {
		return s[:maxErrText]
	}
	return s
}

// encodeError turns err into its wire form; nil stays nil.
func encodeError(err error) *wireError {
	return encodeErrorDepth(err, 0)
}

func encodeErrorDepth(err error, depth int) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Msg: clip(err.Error())}
	if depth > 4 {
		return w
	}
	if !encodeTyped(w, err, depth) {
		for _, s := range sentinels {
			if errors.Is(err, s.err) {
				w.Is = append(w.Is, s.name)
			}
		}
		// Typed errors deeper in the chain, so that errors.As finds them
		// on the other side too.
		seen := 0
		walkErrors(err, func(e error) bool {
			if e == err {
				return true
			}
			t := &wireError{}
			if encodeTyped(t, e, depth+1) {
				t.Msg = clip(e.Error())
				w.Typed = append(w.Typed, t)
				seen++
			}
			return seen < 8
		})
	}
	return w
}

// walkErrors calls f on err and everything it wraps, depth first, until f
// returns false; it visits at most 64 errors.
func walkErrors(err error, f func(error) bool) {
	n := 0
	var walk func(error) bool
	walk = func(e error) bool {
		if e == nil {
			return true
		}
		n++
		if n > 64 || !f(e) {
			return false
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			return walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				if !walk(x) {
					return false
				}
			}
		}
		return true
	}
	walk(err)
}

// encodeTyped fills w from err when err is one of the typed errors that
// cross the wire field by field, and reports whether it was.
func encodeTyped(w *wireError, err error, depth int) bool {
	switch e := err.(type) {
	case *agentcli.RequestError:
		w.Type, w.Backend, w.Field, w.Reason = "request", e.Backend, clip(e.Field), clip(e.Reason)
	case *agentcli.UnsupportedError:
		w.Type, w.Backend, w.Feature, w.Reason = "unsupported", e.Backend, clip(e.Feature), clip(e.Reason)
	case *agentcli.BinaryError:
		w.Type, w.Backend, w.Path, w.Hint = "binary", e.Backend, clip(e.Path), clip(e.Hint)
		w.Sentinel = sentinelName(e.Err)
		w.Cause = encodeErrorDepth(e.Cause, depth+1)
	case *agentcli.ExitError:
		w.Type, w.Backend, w.Code, w.Stderr, w.Hint = "exit", e.Backend, e.Code, clip(e.Stderr), clip(e.Hint)
		w.Kind = sentinelName(e.Kind)
	case *agentcli.TimeoutError:
		w.Type, w.Backend, w.Duration, w.Stderr = "timeout", e.Backend, int64(e.Timeout), clip(e.Stderr)
	case *agentcli.CanceledError:
		w.Type, w.Backend = "canceled", e.Backend
		w.Cause = encodeErrorDepth(e.Err, depth+1)
	case *agentcli.ParseError:
		w.Type, w.Backend, w.Line = "parse", e.Backend, e.Line
		if len(w.Line) > 4096 {
			w.Line = w.Line[:4096]
		}
		w.Cause = encodeErrorDepth(e.Err, depth+1)
	case *agentcli.LineTooLongError:
		w.Type, w.Limit, w.Len = "line_too_long", e.Limit, e.Len
	case *agentcli.NoResultError:
		w.Type, w.Backend, w.Code, w.Stderr = "no_result", e.Backend, e.Code, clip(e.Stderr)
	case *agentcli.ResultError:
		w.Type, w.Backend, w.Subtype, w.APIStatus = "result", e.Backend, clip(e.Subtype), e.APIStatus
		w.TerminalReason, w.Message, w.Code = clip(e.TerminalReason), clip(e.Message), e.ExitCode
		w.Kind = sentinelName(e.Kind)
		if e.Result != nil {
			w.Result = toWireResult(e.Result)
		}
	case *agentcli.UnknownBackendError:
		w.Type, w.Name, w.Valid = "unknown_backend", clip(e.Name), e.Valid
	case *agentcli.RateLimitError:
		w.Type, w.Backend, w.ResetsAt, w.Duration = "rate_limit", e.Backend, e.ResetsAt, int64(e.RetryAfter)
		w.RateLimit = e.Limit
		w.Cause = encodeErrorDepth(e.Err, depth+1)
	case *agentcli.CredentialsError:
		w.Type, w.Backend, w.Variables, w.Hint = "credentials", e.Backend, e.Variables, clip(e.Hint)
	case *agentcli.ProtocolError:
		w.Type, w.Backend, w.Method, w.Code, w.Message = "protocol", e.Backend, clip(e.Method), e.Code, clip(e.Message)
		w.Kind = sentinelName(e.Kind)
	case *SessionNotSavedError:
		w.Type, w.Backend, w.Name, w.Worker = "not_saved", e.Backend, clip(e.Session), e.Worker
		w.Cause = encodeErrorDepth(e.Err, depth+1)
	case *WorkerLostError:
		w.Type, w.Backend, w.Worker, w.Started = "worker_lost", e.Backend, e.Worker, e.Started
		w.Duration, w.Reason = int64(e.Silence), clip(e.Reason)
	default:
		return false
	}
	return true
}

// decodeError turns a wire error back into an error; nil stays nil.
func decodeError(w *wireError) error {
	return decodeErrorDepth(w, 0)
}

func decodeErrorDepth(w *wireError, depth int) error {
	if w == nil {
		return nil
	}
	if depth > 5 {
		return errors.New(w.Msg)
	}
	cause := func() error { return decodeErrorDepth(w.Cause, depth+1) }
	switch w.Type {
	case "request":
		return &agentcli.RequestError{Backend: w.Backend, Field: w.Field, Reason: w.Reason}
	case "unsupported":
		return &agentcli.UnsupportedError{Backend: w.Backend, Feature: w.Feature, Reason: w.Reason}
	case "binary":
		s := sentinelByName(w.Sentinel)
		if s == nil {
			s = agentcli.ErrNotFound
		}
		return &agentcli.BinaryError{Backend: w.Backend, Path: w.Path, Err: s, Cause: cause(), Hint: w.Hint}
	case "exit":
		return &agentcli.ExitError{Backend: w.Backend, Code: w.Code, Stderr: w.Stderr, Kind: sentinelByName(w.Kind), Hint: w.Hint}
	case "timeout":
		return &agentcli.TimeoutError{Backend: w.Backend, Timeout: time.Duration(w.Duration), Stderr: w.Stderr}
	case "canceled":
		c := cause()
		if c == nil {
			c = context.Canceled
		}
		return &agentcli.CanceledError{Backend: w.Backend, Err: c}
	case "parse":
		return &agentcli.ParseError{Backend: w.Backend, Line: w.Line, Err: cause()}
	case "line_too_long":
		return &agentcli.LineTooLongError{Limit: w.Limit, Len: w.Len}
	case "no_result":
		return &agentcli.NoResultError{Backend: w.Backend, Code: w.Code, Stderr: w.Stderr}
	case "result":
		e := &agentcli.ResultError{Backend: w.Backend, Subtype: w.Subtype, APIStatus: w.APIStatus,
			TerminalReason: w.TerminalReason, Message: w.Message, ExitCode: w.Code, Kind: sentinelByName(w.Kind)}
		if w.Result != nil {
			e.Result = w.Result.result()
		}
		return e
	case "unknown_backend":
		return &agentcli.UnknownBackendError{Name: w.Name, Valid: w.Valid}
	case "rate_limit":
		return &agentcli.RateLimitError{Backend: w.Backend, ResetsAt: w.ResetsAt, RetryAfter: time.Duration(w.Duration),
			Limit: w.RateLimit, Err: cause()}
	case "credentials":
		return &agentcli.CredentialsError{Backend: w.Backend, Variables: w.Variables, Hint: w.Hint}
	case "protocol":
		return &agentcli.ProtocolError{Backend: w.Backend, Method: w.Method, Code: w.Code, Message: w.Message,
			Kind: sentinelByName(w.Kind)}
	case "not_saved":
		return &SessionNotSavedError{Backend: w.Backend, Session: w.Name, Worker: w.Worker, Err: cause()}
	case "worker_lost":
		return &WorkerLostError{Backend: w.Backend, Worker: w.Worker, Started: w.Started,
			Silence: time.Duration(w.Duration), Reason: w.Reason}
	}
	r := &RemoteError{Msg: w.Msg}
	for _, n := range w.Is {
		if s := sentinelByName(n); s != nil {
			r.errs = append(r.errs, s)
		}
	}
	for _, t := range w.Typed {
		if t != nil && t.Type != "" {
			r.errs = append(r.errs, decodeErrorDepth(t, depth+1))
		}
	}
	return r
}
