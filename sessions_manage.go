package agentcli

import (
	"context"
	"errors"
	"time"
)

// ErrNoSession: Request.Continue found no session to continue in the
// directory. Every CLI agentcli drives would silently start a new session
// then; agentcli refuses instead, before the CLI starts, so that a
// conversation a caller meant to continue is never quietly lost. The error
// also matches ErrSessionNotFound; a caller that wants a fresh session in
// that case runs the request again without Continue.
var ErrNoSession = errors.New("no session to continue")

// SessionInfo describes one session a CLI keeps for a directory
// (ListSessions).
type SessionInfo struct {
	// ID is the session id, as Request.SessionID takes it.
	ID string `json:"id"`
	// Title is the session's title (the CLI's name or summary of it), or
	// its first prompt when it has none; "" when the CLI keeps neither.
	// It may be long: it is the CLI's text, not shortened.
	Title string `json:"title,omitempty"`
	// Updated is when the session last changed.
	Updated time.Time `json:"updated"`
}

// SessionModes says where a session feature (Request.ForkSession,
// Request.Continue, Request.NewSessionID) works.
type SessionModes struct {
	// OneShot: in Run and Stream.
	OneShot bool `json:"one_shot"`
	// Live: in StartSession, and in a Run or Stream that goes through a
	// live session (PermissionAsk, and what the backend documents).
	Live bool `json:"live"`
}

// ListSessions returns the sessions b's CLI keeps for dir ("" for the
// current directory), newest first, as a run of b in dir would find them
// (b's Options.Env over this process's environment). It starts no model
// call; on some CLIs it starts the CLI briefly to ask it (see the
// backend's documentation). A backend whose CLI cannot list
// (Capabilities().ListSessions false) fails with an *UnsupportedError.
// It blocks until the list is read or ctx is done.
func ListSessions(ctx context.Context, b Backend, dir string) ([]SessionInfo, error) {
	if l, ok := find[sessionLister](b); ok {
		return l.ListSessions(ctx, dir)
	}
	return nil, &UnsupportedError{Backend: nameOf(b), Feature: "listing sessions"}
}

// sessionLister is what ListSessions looks for.
type sessionLister interface {
	ListSessions(ctx context.Context, dir string) ([]SessionInfo, error)
}
