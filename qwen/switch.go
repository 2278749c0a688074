package qwen

// Switching mid-session (agentcli.SetModel, SetPermission), over qwen's
// control protocol: set_model {model} (qwen switches its configured
// model) and set_permission_mode {mode} with the --approval-mode a
// session started in that permission mode gets (approvalMode: yolo,
// default or plan). Steered input is queued (qwen's stream-json input
// would start another turn).

import (
	"context"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/live"
)

var (
	_ live.ModelSwitcher      = (*liveProto)(nil)
	_ live.PermissionSwitcher = (*liveProto)(nil)
)

// SetModel implements live.ModelSwitcher with set_model.
func (p *liveProto) SetModel(ctx context.Context, model string) error {
	_, err := p.ctl.Call(ctx, "set_model", map[string]any{"subtype": "set_model", "model": model})
	return err
}

// CheckPermission implements live.PermissionSwitcher: every mode.
func (p *liveProto) CheckPermission(agentcli.PermissionMode) error { return nil }

// SetPermission implements live.PermissionSwitcher with
// set_permission_mode.
func (p *liveProto) SetPermission(ctx context.Context, m agentcli.PermissionMode) error {
	r := *p.h.Request()
	r.Permission = m
	_, err := p.ctl.Call(ctx, "set_permission_mode", map[string]any{"subtype": "set_permission_mode", "mode": approvalMode(&r)})
	return err
}
