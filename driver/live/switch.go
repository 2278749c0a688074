package live

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// ModelSwitcher is implemented by a Proto that can switch the CLI's model
// mid-session (agentcli.SetModel).
type ModelSwitcher interface {
	// SetModel switches the CLI to model and returns once the CLI has
	// taken it (or ctx ends).
	SetModel(ctx context.Context, model string) error
}

// PermissionSwitcher is implemented by a Proto that can switch the CLI's
// permission mode mid-session (agentcli.SetPermission). The session
// switches its own decisions (Host.Ask) itself.
type PermissionSwitcher interface {
	// CheckPermission returns an *agentcli.UnsupportedError for a mode
	// the CLI cannot be switched to, before anything changes.
	CheckPermission(mode agentcli.PermissionMode) error
	// SetPermission switches the CLI to mode (never the zero value:
	// PermissionDeny) and returns once the CLI has taken it.
	SetPermission(ctx context.Context, mode agentcli.PermissionMode) error
}

// Steerer is implemented by a Proto that can send input into a running
// turn (agentcli.Steer). Without it, steered input is queued: sent as a
// follow-up turn once the running turn has ended.
type Steerer interface {
	// Steer sends prompt into the running turn, whose end then waits
	// for the CLI's answer to it too. It returns ErrSteerQueue when the
	// CLI cannot take it now (no turn of its own running): the session
	// queues it then.
	Steer(ctx context.Context, prompt string) error
}

// ErrSteerQueue is what Steerer.Steer returns for input the session
// should queue instead.
var ErrSteerQueue = errors.New("queue the steered input")

// steering is the steered input of a running Stream: queued prompts, and
// whether the Stream's result has been decided (no input is taken then).
type steering struct {
	queue []string
	final bool
}

// startSteering makes a new steering the running Stream's.
func (s *Session) startSteering() *steering {
	st := &steering{}
	s.mu.Lock()
	s.steer = st
	s.mu.Unlock()
	return st
}

// endSteering ends st: input steered later fails with ErrNoTurn.
func (s *Session) endSteering(st *steering) {
	s.mu.Lock()
	st.final = true
	st.queue = nil
	if s.steer == st {
		s.steer = nil
	}
	s.mu.Unlock()
}

// nextSteered returns the next queued input of st, or decides the
// Stream's result (no input is taken any more) when there is none.
func (s *Session) nextSteered(st *steering) (string, bool) {
	if st == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(st.queue) == 0 || st.final {
		st.final = true
		return "", false
	}
	p := st.queue[0]
	st.queue = st.queue[1:]
	return p, true
}

// dropSteered drops the queued input of a Stream that failed.
func (s *Session) dropSteered(st *steering) {
	if st == nil {
		return
	}
	s.mu.Lock()
	st.final = true
	st.queue = nil
	s.mu.Unlock()
}

// permMode returns the session's permission mode (the zero value is
// PermissionDeny).
func (s *Session) permMode() agentcli.PermissionMode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return modeOf(s.mode)
}

// Backend returns the backend's name.
func (s *Session) Backend() string { return s.backend }

// alive returns the error of an operation on an ended session, or nil.
func (s *Session) alive() error {
	s.mu.Lock()
	dead := s.err != nil || s.closing
	s.mu.Unlock()
	if dead {
		return s.closedErr()
	}
	return nil
}

// switchError is the error of a switch that did not complete: ctx's, or
// err.
func (s *Session) switchError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && !errors.Is(err, agentcli.ErrCanceled) {
		return canceled(s.backend, context.Cause(ctx))
	}
	if errors.Is(err, agentcli.ErrSessionClosed) || s.alive() != nil {
		if e := s.alive(); e != nil {
			return e
		}
	}
	return err
}

// SetModel implements agentcli.ModelSetter.
func (s *Session) SetModel(ctx context.Context, model string) error {
	if err := driver.CheckPrompt(s.backend, model); err != nil {
		return &agentcli.RequestError{Backend: s.backend, Field: "model", Reason: "empty"}
	}
	ms, ok := s.proto.(ModelSwitcher)
	if !ok {
		return &agentcli.UnsupportedError{Backend: s.backend, Feature: "SetModel"}
	}
	if err := s.alive(); err != nil {
		return err
	}
	s.switchMu.Lock()
	defer s.switchMu.Unlock()
	s.note(func(w *wirelog.Writer) { w.Model(model) })
	return s.switchError(ctx, ms.SetModel(ctx, model))
}

// rank orders permission modes by what they let run without asking.
func rank(m agentcli.PermissionMode) int {
	switch m {
	case agentcli.PermissionBypass:
		return 2
	case agentcli.PermissionAsk:
		return 1
	}
	return 0
}

// SetPermission implements agentcli.PermissionSetter: the session's own
// decisions take the stricter of the old and the new mode while the CLI
// switches, and the new one once it has.
func (s *Session) SetPermission(ctx context.Context, mode agentcli.PermissionMode) error {
	if err := driver.CheckPermissionMode(s.backend, mode, nil); err != nil {
		return err
	}
	mode = modeOf(mode)
	if mode == agentcli.PermissionAsk && s.req.OnPermission == nil {
		return &agentcli.RequestError{Backend: s.backend, Field: "OnPermission", Reason: "required with PermissionAsk (set it when the session starts)"}
	}
	ps, ok := s.proto.(PermissionSwitcher)
	if !ok {
		return &agentcli.UnsupportedError{Backend: s.backend, Feature: "SetPermission"}
	}
	if err := ps.CheckPermission(mode); err != nil {
		return err
	}
	if err := s.alive(); err != nil {
		return err
	}
	s.switchMu.Lock()
	defer s.switchMu.Unlock()
	old := s.permMode()
	if old == mode {
		return nil
	}
	tmp := mode
	if rank(old) < rank(mode) {
		tmp = old
	}
	s.setMode(tmp)
	s.note(func(w *wirelog.Writer) { w.Permission(string(mode)) })
	if err := ps.SetPermission(ctx, mode); err != nil {
		return s.switchError(ctx, err)
	}
	s.setMode(mode)
	return nil
}

// setMode switches the session's decisions, its host tools' included.
func (s *Session) setMode(m agentcli.PermissionMode) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
	s.htools.SetMode(m)
}

// Steer implements agentcli.Steerer: into the running turn where the
// protocol can (Steerer), otherwise queued as a follow-up turn of the
// running Stream.
func (s *Session) Steer(ctx context.Context, prompt string) error {
	if err := driver.CheckPrompt(s.backend, prompt); err != nil {
		return err
	}
	if err := s.alive(); err != nil {
		return err
	}
	noTurn := fmt.Errorf("%s: steer: %w", s.backend, agentcli.ErrNoTurn)
	s.mu.Lock()
	st := s.steer
	s.mu.Unlock()
	if st == nil {
		return noTurn
	}
	if n, ok := s.proto.(Steerer); ok {
		s.note((*wirelog.Writer).Steer)
		err := n.Steer(ctx, prompt)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrSteerQueue) {
			return s.switchError(ctx, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.steer != st || st.final {
		return noTurn
	}
	st.queue = append(st.queue, prompt)
	return nil
}

// note records a switch in the wire log, if any, between two stdout
// lines: where the live protocol's state was when it was asked, so that
// a replay asks at the same point.
func (s *Session) note(rec func(*wirelog.Writer)) {
	if s.wire == nil {
		return
	}
	s.lineMu.Lock()
	rec(s.wire)
	s.lineMu.Unlock()
}

// modeOf returns m, or PermissionDeny for the zero value.
func modeOf(m agentcli.PermissionMode) agentcli.PermissionMode {
	if m == "" {
		return agentcli.PermissionDeny
	}
	return m
}
