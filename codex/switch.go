package codex

// Switching mid-session and steering (agentcli.SetModel, SetPermission,
// Steer), checked against 0.169.0:
//
//   - SetModel and SetPermission are turn/start's per-turn overrides,
//     which codex keeps "for this turn and subsequent turns": model, and
//     approvalPolicy with sandboxPolicy ({"type":"dangerFullAccess"} or
//     {"type":"readOnly"}), chosen for the mode as thread/start chooses
//     them (approval). The session sends them with every later
//     turn/start; they take effect from the next turn, never within the
//     running one (whose commands codex runs under the old policy, while
//     the session's own answers to what codex asks follow the new mode
//     at once).
//   - Steer is turn/steer {threadId, expectedTurnId, input}: the input is
//     appended to the running turn's next model request, and the turn
//     ends with one turn/completed. When codex says the turn is over
//     ("no active turn to steer", or another turn id), the input is
//     queued as a follow-up turn.

import (
	"context"
	"errors"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/live"
)

// overrides are the sticky turn/start overrides.
type overrides struct {
	model   string
	policy  string // approvalPolicy
	sandbox string // sandbox mode, as thread/start names it
}

var (
	_ live.ModelSwitcher      = (*appServer)(nil)
	_ live.PermissionSwitcher = (*appServer)(nil)
	_ live.Steerer            = (*appServer)(nil)
)

// sandboxPolicy returns turn/start's sandboxPolicy for a sandbox mode.
func sandboxPolicy(mode string) map[string]any {
	switch mode {
	case "read-only":
		return map[string]any{"type": "readOnly"}
	case "workspace-write":
		return map[string]any{"type": "workspaceWrite"}
	}
	return map[string]any{"type": "dangerFullAccess"}
}

// withOverrides adds the sticky overrides to turn/start's params.
func (p *appServer) withOverrides(params map[string]any) map[string]any {
	p.mu.Lock()
	o := p.sw
	p.mu.Unlock()
	if o.model != "" {
		params["model"] = o.model
	}
	if o.policy != "" {
		params["approvalPolicy"] = o.policy
		params["sandboxPolicy"] = sandboxPolicy(o.sandbox)
	}
	return params
}

// SetModel implements live.ModelSwitcher: the next turn/start carries
// the model.
func (p *appServer) SetModel(_ context.Context, model string) error {
	p.mu.Lock()
	p.sw.model = model
	p.mu.Unlock()
	return nil
}

// CheckPermission implements live.PermissionSwitcher: codex can switch
// to every mode.
func (p *appServer) CheckPermission(agentcli.PermissionMode) error { return nil }

// SetPermission implements live.PermissionSwitcher: the next turn/start
// carries the mode's approvalPolicy and sandboxPolicy.
func (p *appServer) SetPermission(_ context.Context, mode agentcli.PermissionMode) error {
	req := *p.req
	req.Permission = mode
	policy, sandbox := approval(&req)
	p.mu.Lock()
	p.sw.policy, p.sw.sandbox = policy, sandbox
	p.mu.Unlock()
	return nil
}

// Steer implements live.Steerer with turn/steer, once the running turn's
// id is known.
func (p *appServer) Steer(ctx context.Context, prompt string) error {
	p.mu.Lock()
	running, known := p.running, p.idKnown
	p.mu.Unlock()
	if !running || known == nil {
		return live.ErrSteerQueue
	}
	if err := p.await(ctx, known); err != nil {
		return err
	}
	p.mu.Lock()
	thread, turn, running := p.thread, p.turn, p.running
	p.mu.Unlock()
	if !running || turn == "" {
		return live.ErrSteerQueue
	}
	_, err := p.rpc.Call(ctx, "turn/steer", map[string]any{"threadId": thread, "expectedTurnId": turn,
		"input": []map[string]any{{"type": "text", "text": strings.ToValidUTF8(prompt, "\uFFFD")}}})
	var re *live.RPCError
	if errors.As(err, &re) && (strings.Contains(re.Message, "no active turn") || strings.Contains(re.Message, "expected active turn id")) {
		return live.ErrSteerQueue
	}
	if err != nil {
		return p.callError("turn/steer", err)
	}
	return nil
}
