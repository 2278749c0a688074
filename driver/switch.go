package driver

import (
	"context"

	"github.com/agentcli/agentcli"
)

// SetModel implements agentcli.ModelSetter for a redacted live session:
// the wrapped session's, its error redacted.
func (r *redactedSession) SetModel(ctx context.Context, model string) error {
	return r.red.Error(agentcli.SetModel(ctx, r.s, model))
}

// SetPermission implements agentcli.PermissionSetter (see SetModel).
func (r *redactedSession) SetPermission(ctx context.Context, mode agentcli.PermissionMode) error {
	return r.red.Error(agentcli.SetPermission(ctx, r.s, mode))
}

// Steer implements agentcli.Steerer (see SetModel).
func (r *redactedSession) Steer(ctx context.Context, prompt string) error {
	return r.red.Error(agentcli.Steer(ctx, r.s, prompt))
}

// MergeSteered returns the result of a turn that ran on after prev
// (input steered into it, or queued for it) and ended with next: next's
// text and everything else of next (its cost too, or prev's when it
// reports none: the CLIs that report one report the session's running
// total), with prev's usage added (unless either is cumulative: the
// last report covers both then) and the turns counted. Either may be
// nil.
func MergeSteered(prev, next *agentcli.Result) *agentcli.Result {
	if prev == nil {
		return next
	}
	if next == nil {
		return prev
	}
	out := *next
	if !next.Usage.Cumulative && !prev.Usage.Cumulative {
		out.Usage = prev.Usage.Add(next.Usage)
	}
	if next.CostUSD == nil {
		out.CostUSD = prev.CostUSD
	}
	if prev.Turns > 0 && next.Turns > 0 {
		out.Turns = prev.Turns + next.Turns
	}
	return &out
}

// Backend returns the wrapped session's backend name, when it says.
func (r *redactedSession) Backend() string {
	if b, ok := r.s.(interface{ Backend() string }); ok {
		return b.Backend()
	}
	return ""
}

// SetMode switches the permission mode that decides the host tools'
// calls (a live session's SetPermission). A nil h has none.
func (h *HostTools) SetMode(m agentcli.PermissionMode) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.mode = Mode(&agentcli.Request{Permission: m})
	h.mu.Unlock()
}

// SetModel implements agentcli.ModelSetter for a live session with host
// tools or hooks: the wrapped session's.
func (s *extrasSession) SetModel(ctx context.Context, model string) error {
	return agentcli.SetModel(ctx, s.Session, model)
}

// SetPermission implements agentcli.PermissionSetter (see SetModel).
func (s *extrasSession) SetPermission(ctx context.Context, mode agentcli.PermissionMode) error {
	return agentcli.SetPermission(ctx, s.Session, mode)
}

// Steer implements agentcli.Steerer: the input passes the
// UserPromptSubmit hook, as each prompt does; its events pass the
// running turn's wrappers.
func (s *extrasSession) Steer(ctx context.Context, prompt string) error {
	if CheckPrompt(s.backend, prompt) == nil {
		prompt = s.hooks.Prompt(ctx, s.Session.ID(), prompt)
	}
	return agentcli.Steer(ctx, s.Session, prompt)
}

// Backend returns the backend's name.
func (s *extrasSession) Backend() string { return s.backend }
