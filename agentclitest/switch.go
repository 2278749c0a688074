package agentclitest

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Switch is a SetModel, SetPermission or Steer call on a scripted
// session, as recorded (Backend.Switches).
type Switch struct {
	// Kind is "model", "permission" or "steer".
	Kind string
	// Value is the model, the permission mode or the steered prompt.
	Value string
	// SessionID is the session's id at the time.
	SessionID string
	// Err is what the call returned.
	Err error
}

// Switches returns every SetModel, SetPermission and Steer call made on
// the backend's scripted sessions so far, in order, failed ones too.
func (b *Backend) Switches() []Switch {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.switches)
}

func (b *Backend) record(sw Switch) {
	b.mu.Lock()
	b.switches = append(b.switches, sw)
	b.mu.Unlock()
}

// switchCaps returns what a scripted session can switch: Caps, or
// everything (steering queued) when Caps lists no permission modes.
func (b *Backend) switchCaps() agentcli.Capabilities {
	c := b.Caps
	if len(c.PermissionModes) == 0 {
		c.SetModel = true
		c.SetPermission = driver.PermissionModes
		c.Steer = agentcli.SteerQueued
	}
	return c
}

// steerQueue is the steered input of a scripted Stream.
type steerQueue struct {
	queue []string
	final bool
}

func (s *scriptedSession) startSteer() *steerQueue {
	q := &steerQueue{}
	s.mu.Lock()
	s.steer = q
	s.mu.Unlock()
	return q
}

func (s *scriptedSession) endSteer(q *steerQueue) {
	s.mu.Lock()
	q.final, q.queue = true, nil
	if s.steer == q {
		s.steer = nil
	}
	s.mu.Unlock()
}

func (s *scriptedSession) dropSteer(q *steerQueue) { s.endSteer(q) }

// nextSteer returns the next steered input, or decides the Stream's
// result when there is none.
func (s *scriptedSession) nextSteer(q *steerQueue) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(q.queue) == 0 || q.final {
		q.final = true
		return "", false
	}
	p := q.queue[0]
	q.queue = q.queue[1:]
	return p, true
}

// SetModel implements agentcli.ModelSetter: later turns' requests
// (Backend.Requests) carry the model; the call is recorded
// (Backend.Switches). It fails as a real backend does: with an
// *agentcli.UnsupportedError when Caps.SetModel is false (Caps that list
// permission modes), and with agentcli.ErrSessionClosed after Close.
func (s *scriptedSession) SetModel(ctx context.Context, model string) error {
	err := s.setModel(ctx, model)
	s.b.record(Switch{Kind: "model", Value: model, SessionID: s.ID(), Err: err})
	return err
}

func (s *scriptedSession) setModel(ctx context.Context, model string) error {
	name := s.b.Name()
	if err := driver.CheckPrompt(name, model); err != nil {
		return &agentcli.RequestError{Backend: name, Field: "model", Reason: "empty"}
	}
	if !s.b.switchCaps().SetModel {
		return &agentcli.UnsupportedError{Backend: name, Feature: "SetModel"}
	}
	if err := s.usable(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.req.Model = model
	s.mu.Unlock()
	return nil
}

// SetPermission implements agentcli.PermissionSetter: the session
// decides later permission requests (Call.Ask) in the new mode, and
// later turns' requests carry it; the call is recorded (Backend.Switches).
// A mode Caps.SetPermission does not list is an
// *agentcli.UnsupportedError, PermissionAsk without OnPermission an
// *agentcli.RequestError, as on a real backend.
func (s *scriptedSession) SetPermission(ctx context.Context, mode agentcli.PermissionMode) error {
	err := s.setPermission(ctx, mode)
	s.b.record(Switch{Kind: "permission", Value: string(mode), SessionID: s.ID(), Err: err})
	return err
}

func (s *scriptedSession) setPermission(ctx context.Context, mode agentcli.PermissionMode) error {
	name := s.b.Name()
	if err := driver.CheckPermissionMode(name, mode, nil); err != nil {
		return err
	}
	m := driver.Mode(&agentcli.Request{Permission: mode})
	if mode == agentcli.PermissionAsk && s.req.OnPermission == nil {
		return &agentcli.RequestError{Backend: name, Field: "OnPermission", Reason: "required with PermissionAsk (set it when the session starts)"}
	}
	if !slices.Contains(s.b.switchCaps().SetPermission, m) {
		return &agentcli.UnsupportedError{Backend: name, Feature: "SetPermission " + string(m)}
	}
	if err := s.usable(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.req.Permission = m
	s.mu.Unlock()
	s.host.SetMode(m)
	return nil
}

// Steer implements agentcli.Steerer, queued: the running Stream goes on,
// once the running Call's events are out, with the next scripted Call
// (recorded in Requests with the steered prompt), and ends with one
// EventResult (the last Call's, with the usage added up). Without a
// running turn it fails with agentcli.ErrNoTurn. The call is recorded
// (Backend.Switches).
func (s *scriptedSession) Steer(ctx context.Context, prompt string) error {
	err := s.steerIn(ctx, prompt)
	s.b.record(Switch{Kind: "steer", Value: prompt, SessionID: s.ID(), Err: err})
	return err
}

func (s *scriptedSession) steerIn(ctx context.Context, prompt string) error {
	name := s.b.Name()
	if err := driver.CheckPrompt(name, prompt); err != nil {
		return err
	}
	if s.b.switchCaps().Steer == agentcli.SteerNone {
		return &agentcli.UnsupportedError{Backend: name, Feature: "Steer"}
	}
	if err := s.usable(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.steer == nil || s.steer.final {
		return fmt.Errorf("%s: steer: %w", name, agentcli.ErrNoTurn)
	}
	s.steer.queue = append(s.steer.queue, prompt)
	return nil
}

// usable returns the error of a switch on a closed session or with a
// done ctx.
func (s *scriptedSession) usable(ctx context.Context) error {
	if s.Err() != nil {
		return s.closedErr()
	}
	if ctx.Err() != nil {
		return &agentcli.CanceledError{Backend: s.b.Name(), Err: context.Cause(ctx)}
	}
	return nil
}
