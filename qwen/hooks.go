package qwen

// Hooks (Request.Hooks): qwen's own settings hooks, of its "http" type,
// which post each hook's input to a loopback endpoint of the run's own
// (behind a secret of its own) and read the answer as the hook's output.
// Qwen 0.24.4 has no hook protocol on stream-json (its initialize answers
// "can_handle_hook_callback": false), and reads hooks only from its
// settings files, so the run's hooks go into a private copy of qwen's
// system settings file (QWEN_CODE_SYSTEM_SETTINGS_PATH; the system
// defaults file stays where it was, QWEN_CODE_SYSTEM_DEFAULTS_PATH): the
// original's content, if there is one, plus
//
//	"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "http", "url": URL,
//	          "headers": {"Authorization": "Bearer SECRET"}, "timeout": SECONDS}]}],
//	          "PostToolUse": [...], "PostToolUseFailure": [...], "Stop": [...]}
//	"disableAllHooks": false
//
// System hooks run whatever the folder's trust; qwen concatenates every
// scope's hooks, so the user's and the project's own hooks run too, and
// "disableAllHooks": false at the system scope overrides a user's
// "disableAllHooks": true for the run (a system file that sets it true is
// an administrator's, and a run with hooks is refused, as is one in
// qwen's safe or bare mode, which runs no hooks). The endpoint
// answers as qwen's hook runner expects (checked with 0.24.4):
//
//	PreToolUse   {} | {"hookSpecificOutput": {"hookEventName": "PreToolUse",
//	             "permissionDecision": "deny", "permissionDecisionReason": R}}
//	PostToolUse  {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": C}}
//	             (PostToolUseFailure, a call that failed, the same way)
//	Stop         {"decision": "block", "reason": R}
//
// PreToolUse fires for every call qwen runs, in every mode, one-shot and
// live: qwen's hook when the call is about to run, after qwen's
// permission check; and, for a call qwen asks the host about
// (can_use_tool, in its default and plan modes), the live session calls
// PreToolUse first, before the permission mode decides (so OnPermission
// is asked only about calls the hook let through), and qwen's hook then
// leaves that call alone. A refusal's reason is the tool's error the
// model gets. Qwen's PreToolUse output has no way to
// change a call's input, so a changed input refuses the call
// (driver.RewriteRefused). PostToolUse sees the output (the tool's
// returnDisplay) and its context reaches the model with the tool's
// result; a Stop that blocks makes qwen go on with the reason as the next
// user message (stop_hook_active is set then). UserPromptSubmit is the
// runner's (its context goes after the prompt). Calls of host tools are
// left to agentcli's MCP server, which calls PreToolUse itself. Qwen
// treats a hook it cannot reach as no opinion (the call runs), so the
// endpoint answers every post, within qwen's timeout, which is the
// hooks' own (Request.PermissionTimeout) plus ten seconds.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// hookSupport is qwen's Capabilities.Hooks (see above).
var hookSupport = agentcli.HookSupport{PreToolUse: agentcli.HookAll, DenyReason: true,
	PostToolUse: true, PostOutput: true, PostContext: true, UserPromptSubmit: true, Stop: true, StopContinue: true}

// nativeHooks reports the hooks qwen calls itself: all but
// UserPromptSubmit.
func nativeHooks(*agentcli.Request, bool) driver.NativeHooks {
	return driver.NativeHooks{PreToolUse: true, PostToolUse: true, Stop: true}
}

// Environment variables that place qwen's system settings files.
const (
	envSystemSettings = "QWEN_CODE_SYSTEM_SETTINGS_PATH"
	envSystemDefaults = "QWEN_CODE_SYSTEM_DEFAULTS_PATH"
)

// systemSettingsPath returns qwen's system settings file for env, and its
// system defaults file (qwen 0.24.4's getSystemSettingsPath and
// getSystemDefaultsPath).
func systemSettingsPath(env []string) (settings, defaults string) {
	settings = driver.Lookup(env, envSystemSettings)
	if settings == "" {
		switch runtime.GOOS {
		case "darwin":
			settings = "/Library/Application Support/QwenCode/settings.json"
		case "windows":
			settings = `C:\ProgramData\qwen-code\settings.json`
		default:
			settings = "/etc/qwen-code/settings.json"
		}
	}
	defaults = driver.Lookup(env, envSystemDefaults)
	if defaults == "" {
		defaults = filepath.Join(filepath.Dir(settings), "system-defaults.json")
	}
	return settings, defaults
}

// maxSystemSettings bounds the system settings file agentcli copies.
const maxSystemSettings = 16 << 20

// hookEvents returns the qwen hook events r's hooks need (see above).
func hookEvents(r *driver.Run) []string {
	h := r.Hooks()
	n := h.Native()
	var events []string
	if n.PreToolUse && h.HasPreToolUse() {
		events = append(events, "PreToolUse")
	}
	if n.PostToolUse && h.HasPostToolUse() {
		events = append(events, "PostToolUse", "PostToolUseFailure")
	}
	if n.Stop && h.HasStop() {
		events = append(events, "Stop")
	}
	return events
}

// preChecked holds the calls a live session has put to PreToolUse
// already, when qwen asked about them (can_use_tool, before its
// permission check): qwen's own PreToolUse hook, when such a call is
// about to run, leaves them alone. Keys are qwen's call ids.
type preChecked struct {
	mu  sync.Mutex
	ids map[string]bool
}

// add notes id as put to PreToolUse.
func (p *preChecked) add(id string) {
	if p == nil || id == "" {
		return
	}
	p.mu.Lock()
	if len(p.ids) < 4096 {
		p.ids[id] = true
	}
	p.mu.Unlock()
}

// take reports whether id was put to PreToolUse, and forgets it.
func (p *preChecked) take(id string) bool {
	if p == nil || id == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ok := p.ids[id]
	delete(p.ids, id)
	return ok
}

// hookEnv starts the hook endpoint of a run or session whose hooks qwen
// calls, writes the system settings file that registers it, and returns
// the environment entries that point qwen at it (none without such
// hooks) and the calls a live session checks before qwen's permission
// check. The endpoint stops when r is cleaned up.
func hookEnv(r *driver.Run) ([]string, *preChecked, error) {
	events := hookEvents(r)
	if len(events) == 0 {
		return nil, nil, nil
	}
	if why := hooksOff(r.Req.ExtraArgs, r.Env); why != "" {
		return nil, nil, &agentcli.UnsupportedError{Backend: Name, Feature: "hooks (Request.Hooks)", Reason: why}
	}
	pre := &preChecked{ids: map[string]bool{}}
	env, err := writeHookSettings(r, events, pre)
	return env, pre, err
}

// hooksOff returns why qwen would run no settings hook with args (the
// request's ExtraArgs) and env, or "": its safe mode (--safe-mode,
// QWEN_CODE_SAFE_MODE) and bare mode (--bare, QWEN_CODE_SIMPLE) skip every
// hook. It is pure.
func hooksOff(args, env []string) string {
	for _, a := range args {
		for _, f := range []string{"--safe-mode", "--bare"} {
			if (a == f || strings.HasPrefix(a, f+"=")) && a != f+"=false" {
				return "qwen's " + f + " (Request.ExtraArgs) runs no hooks"
			}
		}
	}
	for _, k := range []string{"QWEN_CODE_SAFE_MODE", "QWEN_CODE_SIMPLE"} {
		if v := strings.ToLower(strings.TrimSpace(driver.Lookup(env, k))); v != "" && v != "0" && v != "false" {
			return "qwen runs no hooks with " + k + " set"
		}
	}
	return ""
}

// writeHookSettings is hookEnv's work.
func writeHookSettings(r *driver.Run, events []string, pre *preChecked) ([]string, error) {
	origPath, defaults := systemSettingsPath(r.Env)
	settings, err := readSystemSettings(origPath)
	if err != nil {
		return nil, err
	}
	if off, _ := settings["disableAllHooks"].(bool); off {
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "hooks (Request.Hooks)",
			Reason: "qwen's system settings " + origPath + " set disableAllHooks"}
	}
	dir, err := r.TempDir()
	if err != nil {
		return nil, err
	}
	host := r.HostTools()
	ep, err := driver.ServeHooks(r, func(ctx context.Context, in *hookInput) any { return hookAnswer(ctx, r.Hooks(), host, pre, in) })
	if err != nil {
		return nil, err
	}
	hook := []map[string]any{{"matcher": "*", "hooks": []map[string]any{{"type": "http",
		"url": ep.URL, "headers": map[string]string{"Authorization": ep.Authorization},
		"timeout": int((r.HookTimeout() + time.Second - 1) / time.Second)}}}}
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	for _, ev := range events {
		prev, _ := hooks[ev].([]any)
		all := append([]any{}, prev...)
		for _, h := range hook {
			all = append(all, h)
		}
		hooks[ev] = all
	}
	settings["hooks"] = hooks
	settings["disableAllHooks"] = false
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return nil, err
	}
	f := filepath.Join(dir, "system-settings.json")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		return nil, err
	}
	return []string{envSystemSettings + "=" + f, envSystemDefaults + "=" + defaults}, nil
}

// readSystemSettings returns the content of qwen's system settings file
// at path: empty when there is none; an error when it cannot be read as
// a JSON object (agentcli would drop the administrator's settings).
func readSystemSettings(path string) (map[string]any, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading qwen's system settings to add the hooks to: %w", Name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSystemSettings+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading qwen's system settings to add the hooks to: %w", Name, err)
	}
	var m map[string]any
	if len(data) > maxSystemSettings || json.Unmarshal(data, &m) != nil || m == nil {
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "hooks (Request.Hooks)",
			Reason: "qwen's system settings " + path + " are not a plain JSON object agentcli can add its hooks to"}
	}
	return m, nil
}

// hookInput is what qwen posts for a hook.
type hookInput struct {
	driver.HookInput
	ToolCallID     string `json:"tool_call_id"`
	ToolUseID      string `json:"tool_use_id"`
	Error          string `json:"error"` // PostToolUseFailure
	LastMessage    string `json:"last_assistant_message"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// hookAnswer calls the hook of in's event and returns qwen's answer ({}
// for no opinion).
func hookAnswer(ctx context.Context, h *driver.RunHooks, host *driver.HostTools, pre *preChecked, in *hookInput) map[string]any {
	out := map[string]any{}
	use, hostTool := driver.HookToolUse(tools, host, in.ToolName, in.ToolInput)
	use.ID = in.ToolCallID // the id the events carry
	if use.ID == "" {
		use.ID = in.ToolUseID
	}
	switch in.Event {
	case "PreToolUse":
		if hostTool || pre.take(in.ToolCallID) {
			// agentcli's MCP server calls PreToolUse itself; the
			// session has, when qwen asked.
			break
		}
		res := h.PreToolUse(ctx, in.SessionID, use, "")
		reason := res.Reason
		if !res.Deny && res.Input != nil {
			reason = driver.RewriteRefused // qwen cannot apply a changed input
		} else if !res.Deny {
			break
		}
		out["hookSpecificOutput"] = map[string]any{"hookEventName": "PreToolUse",
			"permissionDecision": "deny", "permissionDecisionReason": reason}
	case "PostToolUse":
		res := h.PostToolUse(ctx, in.SessionID, use, agentcli.ToolResult{ID: use.ID, Output: responseText(in.ToolResponse)})
		if res.Context != "" {
			out["hookSpecificOutput"] = map[string]any{"hookEventName": "PostToolUse", "additionalContext": res.Context}
		}
	case "PostToolUseFailure":
		res := h.PostToolUse(ctx, in.SessionID, use, agentcli.ToolResult{ID: use.ID, Output: in.Error, IsError: true})
		if res.Context != "" {
			out["hookSpecificOutput"] = map[string]any{"hookEventName": "PostToolUseFailure", "additionalContext": res.Context}
		}
	case "Stop":
		res := h.Stop(ctx, agentcli.StopInput{SessionID: in.SessionID, Text: in.LastMessage, Continued: in.StopHookActive})
		if res.Continue != "" {
			out["decision"], out["reason"] = "block", res.Continue
		}
	}
	return out
}

// responseText returns a PostToolUse tool_response as text: its
// returnDisplay when that is a string (what the events report: a
// command's output), else its llmContent, else the JSON.
func responseText(raw json.RawMessage) string { return driver.ToolResponseText(raw, true) }

// preToolUse puts a call qwen asked about (the can_use_tool request id,
// about pr, of qwen's tool raw) to PreToolUse before the permission mode
// decides it (see the top of the file): a refusal, or a changed input,
// refuses the call with the reason; otherwise the call is noted (qwen's
// own hook leaves it alone) and decided as usual.
func (p *liveProto) preToolUse(id, raw string, pr *agentcli.PermissionRequest) {
	go func() {
		ctx, cancel := p.h.TurnContext()
		defer cancel()
		out := p.hooks.PreToolUse(ctx, p.h.SessionID(), pr.Tool, pr.Title)
		switch {
		case out.Deny:
			p.ctl.Deny(id, out.Reason)
		case out.Input != nil:
			p.ctl.Deny(id, driver.RewriteRefused)
		default:
			p.pre.add(pr.Tool.ID)
			p.permission(id, raw, pr)
		}
	}()
}
