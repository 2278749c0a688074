package gemini

import (
	"context"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// interactive builds the command line of Gemini CLI's interactive UI (see
// interactiveArgs); the settings (MCP servers, effort) go through a private
// overlay of the gemini home, as in a run (see settingsEnv).
func interactive(_ context.Context, r *driver.Run) (*driver.Job, error) {
	args, err := interactiveArgs(r.Req)
	if err != nil {
		return nil, err
	}
	env, err := settingsEnv(r)
	if err != nil {
		return nil, err
	}
	return &driver.Job{Args: args, Env: env}, nil
}

// interactiveArgs returns the arguments of Gemini CLI's interactive UI for
// req. It is pure.
//
//	gemini --approval-mode=MODE [--resume=ID] [--model=M] [ExtraArgs...] [--prompt-interactive=TEXT]
//
// MODE is yolo for PermissionBypass, default (the UI asks the person at
// the terminal) for PermissionAsk and the zero value and plan (read-only) for
// PermissionPlan; gemini has no deny mode. Folder trust is left to the UI
// (it asks, unless folder trust is off or the folder is trusted): an
// untrusted folder turns yolo into default.
//
// The first message is the value of --prompt-interactive, attached with
// "=" so that it is never read as an option; gemini sends it at start-up
// and stays interactive. TEXT is what a run writes to stdin (see
// promptInput): the system prompt and a blank line, then the prompt, with
// "@" references and a leading slash command escaped. That is also the only
// way the interactive UI can carry Request.SystemPrompt
// (SystemPromptPrepend): gemini has no flag for it, and GEMINI_SYSTEM_MD
// would replace its whole built-in system prompt, tool instructions
// included. A system prompt without a prompt is therefore refused with an
// *agentcli.UnsupportedError; set GEMINI_SYSTEM_MD in Request.Env to
// replace gemini's system prompt knowingly.
func interactiveArgs(req *agentcli.Request) ([]string, error) {
	var args []string
	switch req.Permission {
	case agentcli.PermissionBypass:
		args = append(args, "--approval-mode=yolo")
	case "", agentcli.PermissionAsk:
		args = append(args, "--approval-mode=default")
	case agentcli.PermissionPlan:
		args = append(args, "--approval-mode=plan")
	default:
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "permission mode " + string(req.Permission)}
	}
	if req.SessionID != "" {
		args = append(args, "--resume="+req.SessionID)
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	args = append(args, req.ExtraArgs...)
	if req.SystemPrompt != "" && req.Prompt == "" {
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "system prompt without a prompt",
			Reason: "gemini's interactive UI carries the system prompt only prepended to the first message (Request.Prompt)"}
	}
	if req.SystemPrompt != "" && strings.IndexByte(req.SystemPrompt, 0) >= 0 {
		return nil, &agentcli.RequestError{Backend: Name, Field: "SystemPrompt", Reason: "contains a NUL byte"}
	}
	if req.Prompt != "" {
		args = append(args, "--prompt-interactive="+promptInput(req))
	}
	return args, nil
}
