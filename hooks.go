package agentcli

import (
	"context"
	"encoding/json"
)

// Hooks are functions of the host called at points of a run or live
// session (Request.Hooks): before a tool call runs, after it ran, when a
// prompt is submitted, and when a turn ends. A nil function is not
// called. Each CLI offers a different view of its tool calls, which
// Capabilities.Hooks describes and the README's "Hooks" section details.
//
// Hooks are called from goroutines of the backend, one call at a time
// per run or session; each call is bounded by Request.PermissionTimeout
// (DefaultPermissionTimeout when zero) and by the turn. A PreToolUse that
// panics or does not answer in time refuses the call; the other hooks
// are then ignored.
type Hooks struct {
	// PreToolUse is called before a tool call runs, in every permission
	// mode, before the mode decides (PermissionBypass included): it can
	// let the call go on to the mode's decision, refuse it with a
	// reason for the model, or change its input. Which calls it sees
	// differs by CLI (Capabilities.Hooks.PreToolUse); calls of host
	// tools (Request.Tools) it sees on every CLI.
	PreToolUse func(ctx context.Context, in *PreToolUseInput) PreToolUseOutput
	// PostToolUse is called once a tool call has run, with its output.
	PostToolUse func(ctx context.Context, in *PostToolUseInput) PostToolUseOutput
	// UserPromptSubmit is called with each prompt before it is sent to
	// the CLI (each turn's, in a live session).
	UserPromptSubmit func(ctx context.Context, in *UserPromptSubmitInput) UserPromptSubmitOutput
	// Stop is called when the agent ends a turn, with its final text.
	Stop func(ctx context.Context, in *StopInput) StopOutput
}

// PreToolUseInput is a tool call about to run.
type PreToolUseInput struct {
	// SessionID is the CLI's session id, when known.
	SessionID string `json:"session_id,omitempty"`
	// Tool is the call: canonical name and kind, the CLI's raw name, and
	// the model's input (JSON) as far as the CLI tells it.
	Tool ToolUse `json:"tool"`
	// Title is the CLI's one-line description of the call, when it gives
	// one: for a shell command on gemini, whose permission requests
	// carry no input, the command line.
	Title string `json:"title,omitempty"`
}

// PreToolUseOutput is PreToolUse's answer. The zero value lets the call
// go on to the permission mode's decision.
type PreToolUseOutput struct {
	// Deny refuses the call: it does not run.
	Deny bool `json:"deny,omitempty"`
	// Reason tells the model why the call was refused, where the CLI
	// passes a message on (Capabilities.Hooks.DenyReason).
	Reason string `json:"reason,omitempty"`
	// Input, when not nil, replaces the call's input (a JSON object),
	// where the CLI can run a call with changed input
	// (Capabilities.Hooks.Rewrite); elsewhere the call is refused, never
	// run unchanged.
	Input json.RawMessage `json:"input,omitempty"`
}

// PostToolUseInput is a tool call that has run.
type PostToolUseInput struct {
	// SessionID is the CLI's session id, when known.
	SessionID string `json:"session_id,omitempty"`
	// Tool is the call, as PreToolUseInput.Tool.
	Tool ToolUse `json:"tool"`
	// Result is its outcome: the output as text, and whether it failed.
	Result ToolResult `json:"result"`
}

// PostToolUseOutput is PostToolUse's answer.
type PostToolUseOutput struct {
	// Context is extra text for the model about the call's outcome,
	// where the CLI takes some (Capabilities.Hooks.PostContext).
	Context string `json:"context,omitempty"`
}

// UserPromptSubmitInput is a prompt about to be sent.
type UserPromptSubmitInput struct {
	// SessionID is the session id the prompt continues, when known.
	SessionID string `json:"session_id,omitempty"`
	// Prompt is the prompt.
	Prompt string `json:"prompt"`
}

// UserPromptSubmitOutput is UserPromptSubmit's answer.
type UserPromptSubmitOutput struct {
	// Context, when set, is added to the prompt the model receives, as a
	// paragraph of its own after it.
	Context string `json:"context,omitempty"`
}

// StopInput is a turn the agent has ended.
type StopInput struct {
	// SessionID is the CLI's session id, when known.
	SessionID string `json:"session_id,omitempty"`
	// Text is the agent's final text of the turn.
	Text string `json:"text"`
	// Continued reports that the turn went on already because Stop asked
	// it to (Capabilities.Hooks.StopContinue): a Stop that keeps asking
	// would never let the turn end.
	Continued bool `json:"continued,omitempty"`
}

// StopOutput is Stop's answer.
type StopOutput struct {
	// Continue, when set, makes the agent go on instead of ending the
	// turn, with Continue as its instruction, where the CLI can
	// (Capabilities.Hooks.StopContinue); elsewhere it is ignored.
	Continue string `json:"continue,omitempty"`
}

// HookCoverage says which tool calls a backend's PreToolUse sees before
// they run.
type HookCoverage string

const (
	// HookNone: PreToolUse is not supported.
	HookNone HookCoverage = ""
	// HookAll: every tool call.
	HookAll HookCoverage = "all"
	// HookAsked: every call the CLI asks permission for when it asks
	// about everything it can (which calls those are is in the
	// backend's documentation and the README), and every host tool
	// call.
	HookAsked HookCoverage = "asked"
)

// HookSupport describes how a backend carries Request.Hooks.
type HookSupport struct {
	// PreToolUse says which calls PreToolUse sees before they run.
	PreToolUse HookCoverage `json:"pre_tool_use"`
	// DenyReason reports that a refusal's Reason reaches the model in
	// the turn.
	DenyReason bool `json:"deny_reason"`
	// Rewrite reports that PreToolUse can change a call's input.
	Rewrite bool `json:"rewrite"`
	// PostToolUse reports that PostToolUse is called.
	PostToolUse bool `json:"post_tool_use"`
	// PostOutput reports that PostToolUse sees the output of every tool
	// (some CLIs report some tools' outputs to nobody: gemini's shell in
	// a live session).
	PostOutput bool `json:"post_output"`
	// PostContext reports that PostToolUse's Context reaches the model.
	PostContext bool `json:"post_context"`
	// UserPromptSubmit reports that UserPromptSubmit is called.
	UserPromptSubmit bool `json:"user_prompt_submit"`
	// Stop reports that Stop is called.
	Stop bool `json:"stop"`
	// StopContinue reports that Stop can make the turn go on.
	StopContinue bool `json:"stop_continue"`
}
