package droid

// Hooks: droid has hooks of Claude Code's kind in its settings (events
// PreToolUse, PostToolUse, UserPromptSubmit, Stop, ...; handlers are
// commands that get the event as JSON on stdin and answer JSON on
// stdout), and reads them from the run's runtime settings file
// (hosttools.go) in droid exec and in its ACP daemon alike (checked
// against droid 0.225.2). PreToolUse and PostToolUse run a command that
// relays to agentcli: droid's own binary, which is a Bun executable and
// runs as Bun under BUN_BE_BUN=1 (so does npm's node shim of it, which
// passes its arguments and environment on: verified), runs a small script in the run's
// private temporary directory that posts the hook's input to a loopback
// endpoint of the run's own, behind a secret of its own, and prints the
// answer:
//
//	PreToolUse   {} | {"hookSpecificOutput": {"hookEventName": "PreToolUse",
//	             "permissionDecision": "deny", "permissionDecisionReason": R}}  (the model: "Error: R")
//	PostToolUse  {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": C}}
//	             (a system message to the model)
//
// so PreToolUse sees every call, one-shot and live, before droid's
// permission check, and a refusal's reason reaches the model. A changed
// input is refused (driver.RewriteRefused): droid applies one only with
// "permissionDecision": "allow", which also skips its permission check
// (a live session's PermissionAsk and deny), and merges it into the old
// input rather than replacing it. A relay that cannot reach the endpoint
// exits 2, which blocks the call (droid treats any other failure,
// its own timeout included, as a warning); droid's timeout is the
// permission timeout plus ten seconds, so that agentcli's own bound
// answers first. Calls of host tools are left to agentcli's MCP server,
// which calls PreToolUse itself. UserPromptSubmit and Stop are the
// runner's (droid's Stop hook is not told the final text).

import (
	"context"
	"encoding/json"
	"math"
	"runtime"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// hookSupport is droid's Capabilities.Hooks.
var hookSupport = agentcli.HookSupport{PreToolUse: agentcli.HookAll, DenyReason: true, PostToolUse: true, PostOutput: true,
	PostContext: true, UserPromptSubmit: true, Stop: true}

// nativeHooks reports the hooks droid calls itself: PreToolUse and
// PostToolUse, one-shot and live.
func nativeHooks(*agentcli.Request, bool) driver.NativeHooks {
	return driver.NativeHooks{PreToolUse: true, PostToolUse: true}
}

// hookSettings starts the hook relay of the run r when it has a
// PreToolUse or PostToolUse hook, and returns the runtime settings'
// "hooks" that register it, or nil.
func hookSettings(r *driver.Run) (map[string]any, error) {
	h := r.Hooks()
	events := map[string]bool{"PreToolUse": h.HasPreToolUse(), "PostToolUse": h.HasPostToolUse()}
	return driver.RelayHooks(r, events, func(ctx context.Context, in *hookInput) any { return hookAnswer(ctx, h, r.HostTools(), in) },
		func(relay string) any {
			return []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command",
				"command": relayCommand(r.Path, relay), "timeout": int(math.Ceil(r.HookTimeout().Seconds()))}}}}
		})
}

// relayCommand is the shell command of a hook: droid's binary (path) as
// Bun running the relay script; any failure blocks (exit 2).
func relayCommand(path, relay string) string {
	return "BUN_BE_BUN=1 " + shellQuote(path) + " " + shellQuote(relay) + " || exit 2"
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// hookInput is what droid gives a hook command on stdin.
type hookInput = driver.HookInput

// hookAnswer calls the hook of in's event and returns droid's answer.
func hookAnswer(ctx context.Context, h *driver.RunHooks, host *driver.HostTools, in *hookInput) map[string]any {
	out := map[string]any{}
	use, hostTool := driver.HookToolUse(tools, host, in.ToolName, in.ToolInput)
	switch in.Event {
	case "PreToolUse":
		if hostTool {
			break // agentcli's MCP server calls PreToolUse itself
		}
		res := h.PreToolUse(ctx, in.SessionID, use, "")
		reason := res.Reason
		if !res.Deny && res.Input != nil {
			reason = driver.RewriteRefused
		}
		if res.Deny || res.Input != nil {
			out["hookSpecificOutput"] = map[string]any{"hookEventName": "PreToolUse",
				"permissionDecision": "deny", "permissionDecisionReason": reason}
		}
	case "PostToolUse":
		res := h.PostToolUse(ctx, in.SessionID, use, agentcli.ToolResult{Output: responseText(in.ToolResponse)})
		if res.Context != "" {
			out["hookSpecificOutput"] = map[string]any{"hookEventName": "PostToolUse", "additionalContext": res.Context}
		}
	}
	return out
}

// responseText returns a PostToolUse tool_response as text: the string
// it is, else the JSON.
func responseText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// checkHooks fails with an *agentcli.UnsupportedError for a PreToolUse or
// PostToolUse hook on Windows, where the relay's command line (POSIX
// shell syntax) was not verified: a hook command that fails otherwise
// than with exit 2 lets droid run the call.
func checkHooks(req *agentcli.Request) error {
	if runtime.GOOS != "windows" || req.Hooks == nil || req.Hooks.PreToolUse == nil && req.Hooks.PostToolUse == nil {
		return nil
	}
	return &agentcli.UnsupportedError{Backend: Name, Feature: "PreToolUse and PostToolUse hooks on Windows",
		Reason: "droid runs its hook commands in the platform's shell; agentcli's relay command is verified with a POSIX shell only"}
}
