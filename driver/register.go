package driver

import (
	"context"
	"io"
	"iter"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/registry"
)

// Factory creates a Backend. opts may be nil.
type Factory func(opts *agentcli.Options) agentcli.Backend

// Register makes a backend available to agentcli.Open under name, as
// database/sql drivers register with sql.Register. It is meant to be
// called from a backend package's init function. It panics if name is
// empty, f is nil, or name is already registered.
func Register(name string, f Factory) {
	if f == nil {
		registry.Register(name, nil)
		return
	}
	registry.Register(name, (func(*agentcli.Options) agentcli.Backend)(f))
}

// The optional interfaces below are what agentcli's entry points look
// for on a Backend, or on the backend a wrapper wraps (see Unwrapper):
// agentcli.StartSession, agentcli.Replay, agentcli.Doctor and
// agentcli.Interactive. A Backend made by New implements those its Spec
// declares. Programs call the entry points, never these methods.

// SessionStarter is the optional interface of a Backend that can hold a
// live session: one CLI process per conversation, taking prompt after
// prompt (agentcli.StartSession).
type SessionStarter interface {
	// StartSession starts the CLI and returns the live session. It runs
	// no turn: req.Prompt must be empty (a non-empty Prompt is a
	// *agentcli.RequestError naming it, before anything starts). It
	// reads every other field of req: Timeout bounds each turn, OnText
	// receives each turn's text, SessionID resumes an earlier session,
	// and WireLog records the whole session. The settings hold for every
	// turn. ctx bounds the start only; the session lives until Close. A
	// CLI that breaks its protocol fails with an *agentcli.ProtocolError.
	StartSession(ctx context.Context, req *agentcli.Request) (agentcli.Session, error)
}

// Replayer is the optional interface of a Backend that can turn a wire log
// (see agentcli.Request.WireLog) back into events (agentcli.Replay).
type Replayer interface {
	// Replay reads log and yields the events of the run (or of each turn
	// of the live session) it recorded.
	Replay(log io.Reader) iter.Seq2[agentcli.Event, error]
}

// Diagnoser is the optional interface of a Backend that can diagnose its
// own installation (agentcli.Doctor). Diagnose must not start a model
// call.
type Diagnoser interface {
	// Diagnose checks the backend's CLI and reports what it found. It
	// blocks while the CLI prints its version (bounded by ctx).
	Diagnose(ctx context.Context) agentcli.Diagnosis
}

// Interactor is the optional interface of a Backend that can hand a
// terminal to its CLI's own interactive UI (agentcli.Interactive).
type Interactor interface {
	// Interactive runs the CLI's interactive UI on term until it exits;
	// see agentcli.Interactive for the contract.
	Interactive(ctx context.Context, req *agentcli.Request, term *agentcli.Terminal) (exitCode int, err error)
}

// Unwrapper is implemented by a Backend that wraps another one (middleware
// such as agentcli.WithRetry), so that the optional interfaces of the
// wrapped backend are found.
type Unwrapper interface {
	// Unwrap returns the wrapped backend.
	Unwrap() agentcli.Backend
}
