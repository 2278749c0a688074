package agentcli

import (
	"context"
	"errors"
	"strings"
)

// Switching a live session's model and permission mode, and steering its
// running turn. These are functions over optional interfaces of a Session
// (as database/sql finds a driver's optional abilities), so that a Session
// written outside this module keeps compiling: one that has none of them
// answers *UnsupportedError.

// ErrNoTurn is the error of Steer on a session that is not running a
// turn (or whose turn has ended already): send the input as the next
// turn with Session.Stream or Session.Run.
var ErrNoTurn = errors.New("no turn running")

// SteerMode tells how Steer reaches a running turn
// (Capabilities.Steer).
type SteerMode string

const (
	// SteerNone: the backend cannot steer.
	SteerNone SteerMode = ""
	// SteerNative: the input goes into the running turn at once; the
	// model reads it at its next request of that turn (after the tool
	// call it is making, for example). Where the turn makes no further
	// request, the CLI answers the input right after it; the Stream
	// that runs the turn yields that answer too.
	SteerNative SteerMode = "native"
	// SteerQueued: the CLI cannot take input while a turn runs; the
	// input is held until the running turn ends, then sent as a
	// follow-up turn whose events the same Stream yields.
	SteerQueued SteerMode = "queued"
)

// ModelSetter is implemented by a Session that can switch its model (see
// SetModel). Backend authors implement it; callers use SetModel.
type ModelSetter interface {
	// SetModel switches the session's model, as SetModel documents.
	SetModel(ctx context.Context, model string) error
}

// PermissionSetter is implemented by a Session that can switch its
// permission mode (see SetPermission). Backend authors implement it;
// callers use SetPermission.
type PermissionSetter interface {
	// SetPermission switches the session's permission mode, as
	// SetPermission documents.
	SetPermission(ctx context.Context, mode PermissionMode) error
}

// Steerer is implemented by a Session whose running turn can take more
// input (see Steer). Backend authors implement it; callers use Steer.
type Steerer interface {
	// Steer sends prompt into the running turn, as Steer documents.
	Steer(ctx context.Context, prompt string) error
}

// findSession returns s, or the first session in the chain of sessions s
// wraps (each one's Unwrap method, as middleware's sessions have), that
// implements T.
func findSession[T any](s Session) (T, bool) {
	for x := s; x != nil; {
		if t, ok := x.(T); ok {
			return t, true
		}
		u, ok := x.(interface{ Unwrap() Session })
		if !ok {
			break
		}
		x = u.Unwrap()
	}
	var zero T
	return zero, false
}

// SetModel switches the live session s to model, in the backend's own
// naming, for what the session does next: claude, gemini and opencode
// from their next model request (within the running turn too), codex
// from its next turn. It blocks until the CLI has taken the switch (or
// ctx ends). An empty model is a *RequestError; a model the CLI refuses
// is the CLI's error (opencode and gemini know their models; claude and
// codex take any name, and a wrong one fails the next turn). A session
// whose backend cannot switch models (Capabilities.SetModel false) fails
// with an *UnsupportedError; a closed one with ErrSessionClosed.
func SetModel(ctx context.Context, s Session, model string) error {
	if strings.TrimSpace(model) == "" {
		return &RequestError{Backend: sessionBackend(s), Field: "model", Reason: "empty"}
	}
	if m, ok := findSession[ModelSetter](s); ok {
		return m.SetModel(ctx, model)
	}
	return &UnsupportedError{Backend: sessionBackend(s), Feature: "SetModel"}
}

// SetPermission switches the live session s to permission mode mode, as
// if it had been started with Request.Permission mode: the zero value is
// PermissionDeny, and only PermissionBypass lets every call run without
// asking. PermissionAsk needs the session's Request.OnPermission (a
// *RequestError otherwise). The session's own decisions (what it answers
// the CLI's permission requests) switch at once, the CLI's from its next
// request (codex: its next turn). During the switch, and after a switch
// that failed, the session decides as the stricter of the two modes. It
// blocks until the CLI has taken the switch (or ctx ends). A mode the
// backend cannot switch to (Capabilities.SetPermission) fails with an
// *UnsupportedError before anything changes.
func SetPermission(ctx context.Context, s Session, mode PermissionMode) error {
	if p, ok := findSession[PermissionSetter](s); ok {
		return p.SetPermission(ctx, mode)
	}
	return &UnsupportedError{Backend: sessionBackend(s), Feature: "SetPermission"}
}

// Steer sends prompt into the running turn of the live session s, as
// Capabilities.Steer says: natively where the CLI takes input mid-turn,
// otherwise queued until the turn ends and then sent as a follow-up turn.
// Either way the Stream (or Run) of the running turn goes on until the
// agent has answered prompt too, yields the events of both, and ends as
// usual with exactly one EventResult: its Text is the agent's last
// answer, its Usage the sum of what the turn and its follow-ups used
// (the last report where the CLI reports cumulative usage). It returns
// once prompt is sent or queued (not answered). Without a running turn
// (before the first, between turns, or after the turn's result was
// decided) it fails with an error matching ErrNoTurn; an empty prompt is
// a *RequestError. Queued input is dropped when the turn fails or is
// interrupted: the Stream ends with that error.
func Steer(ctx context.Context, s Session, prompt string) error {
	if strings.TrimSpace(prompt) == "" {
		return &RequestError{Backend: sessionBackend(s), Field: "Prompt", Reason: "empty or only white space"}
	}
	if st, ok := findSession[Steerer](s); ok {
		return st.Steer(ctx, prompt)
	}
	return &UnsupportedError{Backend: sessionBackend(s), Feature: "Steer"}
}

// sessionBackend names the backend of s when a session in its chain
// says (a Backend() string method), or "".
func sessionBackend(s Session) string {
	if b, ok := findSession[interface{ Backend() string }](s); ok {
		return b.Backend()
	}
	return ""
}

// Unwrap returns the session s wraps, for SetModel, SetPermission and
// Steer: switching takes no run slot, and a steer joins the running turn,
// which holds one already (without a running turn it fails with
// ErrNoTurn, so it never starts a turn past the limit).
func (s *limitSession) Unwrap() Session { return s.Session }
