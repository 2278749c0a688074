package acp

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/live"
)

// Switching mid-session and steering (agentcli.SetModel, SetPermission,
// Steer) over ACP: session/set_model {sessionId, modelId} or the "model"
// config option; session/set_mode or the "mode" config option; and, for
// an agent that merges a second session/prompt into the running turn
// (opencode), that prompt. An agent that would cancel the running turn
// for it (gemini) has its steered input queued by the session instead.

// ModelBy says how an agent's model is switched.
type ModelBy string

const (
	// ModelNone: it cannot be.
	ModelNone ModelBy = ""
	// ModelSetModel: session/set_model {sessionId, modelId}.
	ModelSetModel ModelBy = "set_model"
	// ModelOption: session/set_config_option "model"; a name without a
	// "/" is completed from the option's values ("provider/NAME") when
	// exactly one ends so.
	ModelOption ModelBy = "option"
	// ModelAuto: the "model" config option where the session offers one,
	// otherwise session/set_model (for an agent agentcli knows nothing
	// about).
	ModelAuto ModelBy = "auto"
)

// Switching is what an agent can switch mid-session.
type Switching struct {
	// Model says how the model is switched.
	Model ModelBy
	// Mode returns the agent's mode id for a permission mode, or an
	// *agentcli.UnsupportedError for a mode it cannot be switched to; nil
	// means none can. An empty id leaves the agent's mode as it is (the
	// session's answers to permission requests are the whole mode). ModeByOption selects it with session/set_config_option
	// "mode" rather than session/set_mode.
	Mode         func(agentcli.PermissionMode) (string, error)
	ModeByOption bool
	// ModeOptions, if set (and Mode nil), returns the config options
	// that switch the agent to a permission mode, set in order with
	// session/set_config_option (copilot: "mode" and "allow_all"), or an
	// *agentcli.UnsupportedError.
	ModeOptions func(agentcli.PermissionMode) ([]Option, error)
	// Steer reports that a session/prompt sent while a turn runs joins
	// that turn (both prompts are answered when it ends).
	Steer bool
}

// switchState is a client's state of switching and steering.
type switchState struct {
	// offered: the values of each config option, from the latest answer
	// that listed them.
	offered map[string][]string
	// pending counts the running turn's session/prompt requests not yet
	// answered; held is the answer that came while others were due.
	pending int
	held    *heldAnswer
}

type heldAnswer struct {
	raw json.RawMessage
	err error
}

var (
	_ live.ModelSwitcher      = (*client)(nil)
	_ live.PermissionSwitcher = (*client)(nil)
	_ live.Steerer            = (*client)(nil)
)

// heldBack records a session/prompt answer while another of the turn's
// prompts is still due, and reports whether it did (the turn ends with
// the last answer).
func (c *client) heldBack(raw json.RawMessage, err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sw.pending > 1 {
		c.sw.pending--
		c.sw.held = &heldAnswer{raw: raw, err: err}
		return true
	}
	c.sw.pending = 0
	return false
}

func (c *client) unsupported(feature string) error {
	return &agentcli.UnsupportedError{Backend: c.backend(), Feature: feature}
}

// SetModel implements live.ModelSwitcher.
func (c *client) SetModel(ctx context.Context, model string) error {
	c.mu.Lock()
	sid := c.session
	values := c.sw.offered["model"]
	c.mu.Unlock()
	by := c.cfg.Switch.Model
	if by == ModelAuto {
		by = ModelSetModel
		if len(values) > 0 {
			by = ModelOption
		}
	}
	switch by {
	case ModelSetModel:
		if _, err := c.rpc.Call(ctx, "session/set_model", map[string]string{"sessionId": sid, "modelId": model}); err != nil {
			return c.callError("session/set_model", err)
		}
		return nil
	case ModelOption:
		if !strings.Contains(model, "/") {
			var match []string
			for _, v := range values {
				if strings.HasSuffix(v, "/"+model) {
					match = append(match, v)
				}
			}
			if len(match) == 1 {
				model = match[0]
			}
		}
		return c.setOption(ctx, sid, "model", model)
	}
	return c.unsupported("SetModel")
}

// setOption sets a config option and keeps the values the answer lists.
func (c *client) setOption(ctx context.Context, sid, id, value string) error {
	raw, err := c.rpc.Call(ctx, sdk.AgentMethodSessionSetConfigOption, map[string]string{
		"sessionId": sid, "configId": id, "value": value,
	})
	if err != nil {
		return c.callError(sdk.AgentMethodSessionSetConfigOption+" "+id, err)
	}
	c.mu.Lock()
	c.sw.offered = configOptions(raw, c.sw.offered)
	c.mu.Unlock()
	return nil
}

// CheckPermission implements live.PermissionSwitcher.
func (c *client) CheckPermission(mode agentcli.PermissionMode) error {
	if f := c.cfg.Switch.ModeOptions; f != nil && c.cfg.Switch.Mode == nil {
		_, err := f(mode)
		return err
	}
	if c.cfg.Switch.Mode == nil {
		return c.unsupported("SetPermission")
	}
	_, err := c.cfg.Switch.Mode(mode)
	return err
}

// SetPermission implements live.PermissionSwitcher.
func (c *client) SetPermission(ctx context.Context, mode agentcli.PermissionMode) error {
	if f := c.cfg.Switch.ModeOptions; f != nil && c.cfg.Switch.Mode == nil {
		opts, err := f(mode)
		if err != nil {
			return err
		}
		c.mu.Lock()
		sid := c.session
		c.mu.Unlock()
		for _, o := range opts {
			if err := c.setOption(ctx, sid, o.ID, o.Value); err != nil {
				return err
			}
		}
		return nil
	}
	if c.cfg.Switch.Mode == nil {
		return c.unsupported("SetPermission")
	}
	id, err := c.cfg.Switch.Mode(mode)
	if err != nil || id == "" {
		return err
	}
	c.mu.Lock()
	sid := c.session
	c.mu.Unlock()
	if c.cfg.Switch.ModeByOption {
		return c.setOption(ctx, sid, "mode", id)
	}
	if _, err := c.rpc.Call(ctx, sdk.AgentMethodSessionSetMode, sdk.SetSessionModeRequest{
		SessionId: sdk.SessionId(sid), ModeId: sdk.SessionModeId(id),
	}); err != nil {
		return c.callError(sdk.AgentMethodSessionSetMode, err)
	}
	return nil
}

// Steer implements live.Steerer: a second session/prompt into the running
// turn where the agent merges it (Switching.Steer); otherwise, or between
// the agent's turns, the session queues the input.
func (c *client) Steer(ctx context.Context, prompt string) error {
	if !c.cfg.Switch.Steer {
		return live.ErrSteerQueue
	}
	c.mu.Lock()
	if c.sw.pending == 0 {
		c.mu.Unlock()
		return live.ErrSteerQueue
	}
	c.sw.pending++
	sid := c.session
	c.mu.Unlock()
	if c.cfg.Guard != nil {
		prompt = c.cfg.Guard(prompt)
	}
	prompt = strings.ToValidUTF8(prompt, "\uFFFD")
	req := sdk.PromptRequest{SessionId: sdk.SessionId(sid), Prompt: []sdk.ContentBlock{sdk.TextBlock(prompt)}}
	if err := c.rpc.Go(ctx, sdk.AgentMethodSessionPrompt, req, c.answered); err != nil {
		// Not sent: the turn no longer waits for its answer; if the
		// others came meanwhile, the last of them ends it now.
		c.mu.Lock()
		c.sw.pending--
		held := c.sw.held
		end := c.sw.pending == 0 && held != nil
		if end {
			c.sw.pending, c.sw.held = 1, nil
		}
		c.mu.Unlock()
		if end {
			c.answered(held.raw, held.err)
		}
		return err
	}
	return nil
}
