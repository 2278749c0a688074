package agentcli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Every error returned by a Backend matches at most a few of
// them with errors.Is; the typed errors below carry the details.
var (
	// ErrNotFound: the CLI binary could not be found.
	ErrNotFound = errors.New("CLI binary not found")
	// ErrNotExecutable: the CLI binary exists but cannot be executed.
	ErrNotExecutable = errors.New("CLI binary not executable")
	// ErrExit: the CLI exited with a non-zero status (see *ExitError).
	ErrExit = errors.New("CLI exited with non-zero status")
	// ErrTimeout: Request.Timeout expired (see *TimeoutError).
	ErrTimeout = errors.New("query timed out")
	// ErrCanceled: the caller's context ended (see *CanceledError, which
	// also matches the context's own error).
	ErrCanceled = errors.New("run canceled")
	// ErrParse: the CLI's output could not be understood (see *ParseError).
	ErrParse = errors.New("failed to parse CLI output")
	// ErrLineTooLong: an output line exceeded Options.MaxLineBytes.
	ErrLineTooLong = errors.New("CLI output line too long")
	// ErrNoResult: the CLI ended without a terminal result.
	ErrNoResult = errors.New("CLI produced no result")
	// ErrResult: the CLI's terminal event reports failure (see *ResultError).
	ErrResult = errors.New("CLI reported an error result")
	// ErrSessionNotFound: the session to resume does not exist; callers
	// usually start a fresh session.
	ErrSessionNotFound = errors.New("session not found")
	// ErrAuth: the CLI or its API rejected the credentials.
	ErrAuth = errors.New("authentication failed")
	// ErrRateLimited: the API rate-limited the request.
	ErrRateLimited = errors.New("rate limited")
	// ErrUnknownBackend: no backend is registered under a name.
	ErrUnknownBackend = errors.New("unknown backend")
	// ErrBadRequest: the Request cannot be run as given (see
	// *RequestError).
	ErrBadRequest = errors.New("invalid request")
	// ErrUnsupported: the backend cannot do what was asked (see
	// *UnsupportedError).
	ErrUnsupported = errors.New("not supported")
	// ErrInterrupted: a live session's turn was interrupted
	// (Session.Interrupt); the session goes on.
	ErrInterrupted = errors.New("turn interrupted")
	// ErrSessionClosed: the live session has ended (closed, or its CLI
	// died); it takes no more turns.
	ErrSessionClosed = errors.New("session closed")
	// ErrProtocol: a live session's CLI broke its protocol or refused one
	// of its requests (see *ProtocolError).
	ErrProtocol = errors.New("protocol error")
)

// RequestError reports a Request that cannot be run as given: an empty
// prompt, a working directory that does not exist, a NUL byte in a field, a
// session id or tool rule the CLI would misread. It is returned before any
// CLI starts, and matches ErrBadRequest.
type RequestError struct {
	// Backend is the backend that refused the request.
	Backend string
	// Field names the Request field, e.g. "Dir" or "AllowedTools[2]".
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error implements the error interface.
func (e *RequestError) Error() string {
	return e.Backend + ": invalid request: " + e.Field + ": " + e.Reason
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *RequestError) Unwrap() error { return ErrBadRequest }

// UnsupportedError reports a request for something a backend cannot do,
// such as a permission mode or an option under Options.Strict. It is
// returned before any CLI starts, and matches ErrUnsupported.
type UnsupportedError struct {
	// Backend names the backend.
	Backend string
	// Feature names what is not supported, e.g. "live sessions" or
	// "permission mode plan".
	Feature string
	// Reason, when set, says why.
	Reason string
}

// Error implements the error interface.
func (e *UnsupportedError) Error() string {
	s := e.Feature + " not supported"
	if e.Backend != "" {
		s = e.Backend + ": " + s
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// BinaryError reports a CLI binary that cannot be run. It matches ErrNotFound
// or ErrNotExecutable, and the underlying error.
type BinaryError struct {
	// Backend names the backend.
	Backend string
	// Path is the binary as configured or resolved.
	Path string
	// Err is ErrNotFound or ErrNotExecutable.
	Err error
	// Cause is what the operating system said.
	Cause error
	// Hint, when set, tells how to fix the problem.
	Hint string
}

// Error implements the error interface.
func (e *BinaryError) Error() string {
	s := fmt.Sprintf("%s: %v: %s", e.Backend, e.Err, e.Path)
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *BinaryError) Unwrap() []error { return []error{e.Err, e.Cause} }

// ExitError reports a CLI that exited with a non-zero status and no result
// that explains it. It matches ErrExit and, when the CLI's message says so,
// one of ErrSessionNotFound, ErrAuth or ErrRateLimited.
type ExitError struct {
	// Backend names the backend.
	Backend string
	// Code is the exit status; -1 when the process was killed by a signal.
	Code int
	// Stderr is the tail of stderr (at most 500 characters here, secrets
	// redacted).
	Stderr string
	// Kind is ErrSessionNotFound, ErrAuth, ErrRateLimited or nil.
	Kind error
	// Hint, when set, tells how to fix the problem.
	Hint string
}

// Error implements the error interface.
func (e *ExitError) Error() string {
	s := fmt.Sprintf("%s: exit status %d", e.Backend, e.Code)
	if e.Kind != nil {
		s += " (" + e.Kind.Error() + ")"
	}
	if e.Hint != "" {
		s += ": " + e.Hint
	}
	if e.Stderr != "" {
		s += ": " + e.Stderr
	}
	return s
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *ExitError) Unwrap() []error {
	if e.Kind != nil {
		return []error{ErrExit, e.Kind}
	}
	return []error{ErrExit}
}

// TimeoutError reports that Request.Timeout expired. It matches ErrTimeout
// and context.DeadlineExceeded.
type TimeoutError struct {
	// Backend names the backend.
	Backend string
	// Timeout is the Request.Timeout that expired.
	Timeout time.Duration
	// Stderr is the tail of the CLI's stderr at the time it was stopped.
	Stderr string
}

// Error implements the error interface.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s: query timed out after %v", e.Backend, e.Timeout)
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *TimeoutError) Unwrap() []error { return []error{ErrTimeout, context.DeadlineExceeded} }

// CanceledError reports that the caller's context ended the run. It matches
// ErrCanceled and the context's error (context.Canceled or
// context.DeadlineExceeded, or the cancel cause).
type CanceledError struct {
	// Backend names the backend.
	Backend string
	// Err is the context's error (or its cancel cause).
	Err error
}

// Error implements the error interface.
func (e *CanceledError) Error() string {
	return fmt.Sprintf("%s: run canceled: %v", e.Backend, e.Err)
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *CanceledError) Unwrap() []error { return []error{ErrCanceled, e.Err} }

// ParseError reports CLI output that could not be understood. It matches
// ErrParse.
type ParseError struct {
	// Backend names the backend.
	Backend string
	// Line is the offending output (truncated to 4 KiB).
	Line []byte
	// Err is what was wrong with it.
	Err error
}

// Error implements the error interface.
func (e *ParseError) Error() string {
	s := "failed to parse CLI output"
	if e.Backend != "" {
		s = e.Backend + ": " + s
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *ParseError) Unwrap() []error { return []error{ErrParse, e.Err} }

// LineTooLongError reports an output line longer than Options.MaxLineBytes.
// The line is skipped; reading goes on at the next one. It matches
// ErrLineTooLong.
type LineTooLongError struct {
	// Limit is the configured maximum, Len the length of the skipped line.
	Limit, Len int
}

// Error implements the error interface.
func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("CLI output line too long: %d bytes, limit %d", e.Len, e.Limit)
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *LineTooLongError) Unwrap() error { return ErrLineTooLong }

// NoResultError reports a CLI that ended without a terminal result. It
// matches ErrNoResult, and ErrExit too when the exit status was non-zero.
type NoResultError struct {
	// Backend names the backend.
	Backend string
	// Code is the CLI's exit status.
	Code int
	// Stderr is the tail of stderr (at most 500 characters, secrets
	// redacted).
	Stderr string
}

// Error implements the error interface.
func (e *NoResultError) Error() string {
	s := fmt.Sprintf("%s: CLI produced no result (exit status %d)", e.Backend, e.Code)
	if e.Stderr != "" {
		s += ": " + e.Stderr
	}
	return s
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *NoResultError) Unwrap() []error {
	if e.Code != 0 {
		return []error{ErrNoResult, ErrExit}
	}
	return []error{ErrNoResult}
}

// ResultError reports a terminal event that says the run failed: an API
// error, a limit such as max turns, or an exit status that contradicts a
// successful-looking result. It matches ErrResult and Kind.
type ResultError struct {
	// Backend names the backend.
	Backend string
	// Subtype is the CLI's result subtype, e.g. "error_max_turns".
	Subtype string
	// APIStatus is the HTTP status of the failed API call, when known.
	APIStatus int
	// TerminalReason is the CLI's reason for ending, e.g. "api_error".
	TerminalReason string
	// Message is the CLI's error text.
	Message string
	// ExitCode is the CLI's exit status.
	ExitCode int
	// Kind is ErrSessionNotFound, ErrAuth, ErrRateLimited or nil.
	Kind error
	// Result is the parsed terminal result.
	Result *Result
}

// Error implements the error interface.
func (e *ResultError) Error() string {
	var b strings.Builder
	b.WriteString(e.Backend)
	b.WriteString(": error result")
	if e.Subtype != "" {
		b.WriteString(" (" + e.Subtype + ")")
	}
	if e.APIStatus != 0 {
		fmt.Fprintf(&b, ": API status %d", e.APIStatus)
	}
	if e.TerminalReason != "" {
		b.WriteString(": " + e.TerminalReason)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *ResultError) Unwrap() []error {
	if e.Kind != nil {
		return []error{ErrResult, e.Kind}
	}
	return []error{ErrResult}
}

// CredentialsError reports a CLI that has no credential it could use:
// none of its credential variables is set in the run's environment, and
// none of its other ways in (a credential file the CLI's login wrote, a
// configured provider or local server; see each backend's documentation)
// is there. It is returned before the CLI starts, instead of a run that
// fails later or, for some CLIs, retries until its timeout, and matches
// ErrAuth. Doctor reports the same as a failure.
type CredentialsError struct {
	// Backend names the backend.
	Backend string
	// Variables are the CLI's credential variables; any one of them
	// would do.
	Variables []string
	// Hint says what else would do, e.g. "run `codex login`".
	Hint string
}

// Error implements the error interface.
func (e *CredentialsError) Error() string {
	s := e.Backend + ": no credentials"
	var ways []string
	if len(e.Variables) > 0 {
		ways = append(ways, "set "+strings.Join(e.Variables, " or "))
	}
	if e.Hint != "" {
		ways = append(ways, e.Hint)
	}
	if len(ways) > 0 {
		s += ": " + strings.Join(ways, ", or ")
	}
	return s
}

// Unwrap returns ErrAuth, for errors.Is.
func (e *CredentialsError) Unwrap() error { return ErrAuth }

// ProtocolError reports a live session whose CLI broke its protocol or
// answered one of its requests with an error: a handshake or turn request
// the CLI refused, an answer that lacks what the protocol promises, a CLI
// that stops reading its stdin, or one that does not end a turn it was
// asked to interrupt (the session is then killed). It matches ErrProtocol
// and Kind.
type ProtocolError struct {
	// Backend names the backend.
	Backend string
	// Method is the protocol request that failed (for example
	// "session/load"), or "" when the failure is not a request's.
	Method string
	// Code is the CLI's JSON-RPC error code, when it sent one.
	Code int
	// Message says what went wrong: the CLI's error message (at most 500
	// characters, secrets redacted) or what the session saw.
	Message string
	// Kind is ErrSessionNotFound, ErrAuth, ErrRateLimited or nil.
	Kind error
}

// Error implements the error interface.
func (e *ProtocolError) Error() string {
	s := e.Backend + ": "
	if e.Method != "" {
		s += e.Method + " failed"
	} else {
		s += "protocol error"
	}
	if e.Kind != nil {
		s += " (" + e.Kind.Error() + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *ProtocolError) Unwrap() []error {
	if e.Kind != nil {
		return []error{ErrProtocol, e.Kind}
	}
	return []error{ErrProtocol}
}

// UnknownBackendError reports a backend name that is not registered. It
// matches ErrUnknownBackend.
type UnknownBackendError struct {
	// Name is the name asked for.
	Name string
	// Valid lists the registered names.
	Valid []string
}

// Error implements the error interface.
func (e *UnknownBackendError) Error() string {
	s := fmt.Sprintf("unknown backend %q", e.Name)
	pkg := knownBackends[strings.ToLower(strings.TrimSpace(e.Name))]
	switch {
	case pkg != "":
		// Like database/sql: the usual cause is a missing blank import.
		s += fmt.Sprintf(" (forgotten import? _ %q)", "github.com/agentcli/agentcli/"+pkg)
	case len(e.Valid) == 0:
		s += " (no backend is registered: import one, e.g. _ \"github.com/agentcli/agentcli/claude\")"
	}
	if len(e.Valid) > 0 {
		s += fmt.Sprintf(" (valid: %s)", strings.Join(e.Valid, ", "))
	}
	return s
}

// knownBackends maps the names of this module's backends (and their
// aliases) to their package.
var knownBackends = map[string]string{
	"": "claude", "claude": "claude", "claude-code": "claude", "claudecode": "claude",
	"codex": "codex", "codex-cli": "codex",
	"gemini": "gemini", "gemini-cli": "gemini",
	"opencode": "opencode", "open-code": "opencode",
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *UnknownBackendError) Unwrap() error { return ErrUnknownBackend }
