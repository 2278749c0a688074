// Package backendtest holds what the built-in backends' tests share beyond
// package drivertest, which runs the fault matrix, the live faults, the
// credential checks and the hostile-request properties against any
// backend: this package runs them with the built-in CLIs' fake flavors
// (internal/fakecli: their argv grammars and credentials), and adds the
// parser oracles, the real-CLI helpers and the golden files.
package backendtest

import (
	"context"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/drivertest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// Kit adapts the fault matrix to one built-in backend (see drivertest.Kit,
// which Public makes of it).
type Kit struct {
	// Name is the backend (and fake flavor) name.
	Name string
	// New creates the backend.
	New func(opts *agentcli.Options) agentcli.Backend
	// Success returns script lines (fake CLI commands) of a run that answers
	// text in session id, terminal event included, in the streaming format.
	Success func(text, session string) []string
	// Partial returns script lines of a run that started (session id known,
	// some output) but has not reached its terminal event.
	Partial func(session string) []string
	// Truncated returns script lines that end in a terminal event cut off in
	// the middle, without a newline.
	Truncated func(session string) []string
	// TempPrefix is the prefix of temporary files the backend creates in
	// os.TempDir, checked to be gone after every case ("" if none).
	TempPrefix string
	// Live scripts the CLI's live protocol (see LiveFaults), or is nil.
	Live *LiveKit
	// NoSystemPrompt leaves the system prompt out of the matrix's
	// requests, for a backend whose runs with one go through a live
	// session (driver.Spec.LiveRun), which the fake does not speak.
	NoSystemPrompt bool
}

// LiveKit scripts one CLI's live protocol for the fake CLI.
type LiveKit = drivertest.LiveKit

// Public returns the drivertest.Kit of k: the same scripts, with the
// credential of the flavor's CLI in Env (the fake's argv rules are the
// flavor's, registered by fakecli.MaybeRun).
func (k Kit) Public() drivertest.Kit {
	return drivertest.Kit{
		Name: k.Name, New: k.New, Env: fakecli.CredentialEnv(k.Name),
		Success: k.Success, Partial: k.Partial, Truncated: k.Truncated,
		TempPrefix: k.TempPrefix, NoSystemPrompt: k.NoSystemPrompt, Live: k.Live,
	}
}

// Self returns the path of the running test binary, which acts as the fake
// CLI when its TestMain calls fakecli.MaybeRun.
func Self(t testing.TB) string { t.Helper(); return drivertest.Self(t) }

// Setup makes a backend that runs the fake CLI with script. It returns the
// backend and the fake's record directory.
func (k Kit) Setup(t testing.TB, opts *agentcli.Options, script ...string) (agentcli.Backend, string) {
	t.Helper()
	return k.Public().Setup(t, opts, script...)
}

// Collect runs req as a stream and returns all events and the final error.
func Collect(ctx context.Context, b agentcli.Backend, req *agentcli.Request) ([]agentcli.Event, error) {
	return drivertest.Collect(ctx, b, req)
}

// AssertReaped fails the test if any process the fake started is alive.
func AssertReaped(t testing.TB, dir string) { t.Helper(); drivertest.AssertReaped(t, dir) }

// AssertNoLeaks fails the test if goroutines from agentcli's process layer
// remain, or temp files with prefix remain in os.TempDir.
func AssertNoLeaks(t testing.TB, tempPrefix string) {
	t.Helper()
	drivertest.AssertNoLeaks(t, tempPrefix)
}

// FaultMatrix runs drivertest's fault matrix against the backend.
func FaultMatrix(t *testing.T, k Kit) { t.Helper(); drivertest.FaultMatrix(t, k.Public()) }

// LiveFaults runs drivertest's live-session fault cases against the
// backend's fake CLI.
func LiveFaults(t *testing.T, k Kit) { t.Helper(); drivertest.LiveFaults(t, k.Public()) }

// ACPLive is the LiveKit of an Agent Client Protocol agent (gemini
// --acp, opencode acp); setMode: the session selects a mode after
// session/new.
func ACPLive(setMode bool) *LiveKit { return drivertest.ACPLive(setMode) }

// ReplayRoundTrip runs req on b with a wire log and replays the log (see
// drivertest.ReplayRoundTrip).
func ReplayRoundTrip(t testing.TB, b agentcli.Backend, req *agentcli.Request, stream bool) ([]agentcli.Event, error) {
	t.Helper()
	return drivertest.ReplayRoundTrip(t, b, req, stream)
}
