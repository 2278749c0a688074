package copilot

// Hooks, checked against copilot 1.0.102.
//
// PreToolUse is copilot's own: a run or live session with that hook
// loads a plugin of its own (--plugin-dir=DIR, DIR in the run's private
// temporary directory) in Claude Code's plugin format,
// .claude-plugin/plugin.json and hooks/hooks.json, whose PreToolUse hook
// is an "http" hook: copilot POSTs the hook's input to a loopback
// endpoint of the run's own, behind a secret of its own (the
// Authorization header of the hook), and reads the answer:
//
//	{}                                                   no opinion
//	{"hookSpecificOutput": {"hookEventName": "PreToolUse",
//	  "permissionDecision": "deny", "permissionDecisionReason": R}}
//	                                                     the call is refused; the model
//	                                                     hears "Denied by preToolUse hook: R"
//	                                                     and the turn goes on
//	{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": INPUT}}
//	                                                     the call runs with INPUT, which
//	                                                     copilot's permission rules then judge
//	                                                     (a rewrite approves nothing)
//
// Copilot calls it before every tool call (reads included), before it
// asks or decides permission, in -p runs and in ACP sessions alike, with
// {hook_event_name, session_id, cwd, tool_name, tool_input}, tool_name in
// Claude Code's vocabulary ("Bash", "Read"). A hook that fails or does
// not answer refuses the call (copilot: "preToolUse hook errors now deny
// the tool call"); the hook's "timeout" (seconds) is PermissionTimeout
// plus 10 s, and copilot honours it (a hook that answered after 45 s
// under "timeout": 90 was waited for). Copilot takes a plain-HTTP hook that can refuse calls
// only on loopback with COPILOT_HOOK_ALLOW_LOCALHOST=1, which the run
// sets (the user's own hooks may then post to localhost too). Calls of
// host tools are left to agentcli's MCP server, which calls PreToolUse
// itself.
//
// PostToolUse (with the tool's output) and Stop come from the event
// stream, UserPromptSubmit before each prompt (the runner's): copilot's
// own PostToolUse does not pass additionalContext to the model, and its
// Stop input carries no final text.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// hookSupport is copilot's Capabilities.Hooks.
var hookSupport = agentcli.HookSupport{PreToolUse: agentcli.HookAll, DenyReason: true, Rewrite: true,
	PostToolUse: true, PostOutput: true, UserPromptSubmit: true, Stop: true}

// nativeHooks reports the hooks copilot calls itself: PreToolUse, in a
// run and a live session.
func nativeHooks(*agentcli.Request, bool) driver.NativeHooks {
	return driver.NativeHooks{PreToolUse: true}
}

// hookPlugin starts the PreToolUse endpoint of r, when its request has
// that hook, writes the plugin that names it to tmp, and returns the
// plugin's directory and the environment entry it needs; "" for none.
func hookPlugin(r *driver.Run, tmp string) (string, []string, error) {
	h := r.Hooks()
	if !h.HasPreToolUse() || !h.Native().PreToolUse {
		return "", nil, nil
	}
	dir := filepath.Join(tmp, "hooks-plugin")
	if strings.Contains(dir, ",") {
		return "", nil, &agentcli.UnsupportedError{Backend: Name, Feature: "hooks",
			Reason: "the temporary directory's path holds a comma, which copilot's --plugin-dir would split (set TMPDIR)"}
	}
	ep, err := driver.ServeHooks(r, func(ctx context.Context, in *hookInput) any { return hookAnswer(ctx, h, r.HostTools(), in) })
	if err != nil {
		return "", nil, err
	}
	hook := map[string]any{"type": "http", "url": ep.URL,
		"headers": map[string]string{"Authorization": ep.Authorization}, "timeout": int(r.HookTimeout().Seconds())}
	cfg, err := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{hook}}}}})
	if err != nil {
		return "", nil, err
	}
	manifest := []byte(`{"name":"agentcli-hooks","version":"1.0.0","description":"agentcli's hooks of this run"}`)
	for _, f := range []struct {
		path string
		data []byte
	}{{".claude-plugin/plugin.json", manifest}, {"hooks/hooks.json", cfg}} {
		p := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", nil, err
		}
		if err := os.WriteFile(p, f.data, 0o600); err != nil {
			return "", nil, err
		}
	}
	return dir, []string{"COPILOT_HOOK_ALLOW_LOCALHOST=1"}, nil
}

// hookInput is what copilot posts to an http hook (no tool_response: its
// hooks are PreToolUse only).
type hookInput = driver.HookInput

// hookAnswer calls PreToolUse about in's call and returns copilot's
// answer (see above).
func hookAnswer(ctx context.Context, h *driver.RunHooks, host *driver.HostTools, in *hookInput) map[string]any {
	out := map[string]any{}
	if in.Event != "PreToolUse" {
		return out
	}
	use, hostTool := driver.HookToolUse(tools, host, in.ToolName, in.ToolInput)
	if hostTool {
		return out // agentcli's MCP server calls PreToolUse itself
	}
	res := h.PreToolUse(ctx, in.SessionID, use, "")
	switch {
	case res.Deny:
		out["hookSpecificOutput"] = map[string]any{"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": res.Reason}
	case res.Input != nil:
		out["hookSpecificOutput"] = map[string]any{"hookEventName": "PreToolUse", "updatedInput": res.Input}
	}
	return out
}
