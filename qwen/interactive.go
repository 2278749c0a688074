package qwen

import (
	"context"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// interactive builds the command line of Qwen Code's interactive UI (see
// interactiveArgs); the MCP servers go to a private file, as in a run.
// The UI takes no effort, turn limit or output schema on its command line
// (qwen's --json-schema is headless only; the effort is a setting and a
// control request): those are ignored with a warning, or refused under
// Options.Strict.
func interactive(_ context.Context, r *driver.Run) (*driver.Job, error) {
	req := *r.Req
	if err := r.DropUI(&req, driver.UIEffort, driver.UIMaxTurns, driver.UIOutputSchema); err != nil {
		return nil, err
	}
	mcpFile, err := writeMCPConfig(r)
	if err != nil {
		return nil, err
	}
	args, err := interactiveArgs(&req, mcpFile)
	if err != nil {
		return nil, err
	}
	return &driver.Job{Args: args}, nil
}

// interactiveArgs returns the arguments of Qwen Code's interactive UI for
// req. It is pure.
//
//	qwen --approval-mode=MODE [--append-system-prompt=TEXT] [--resume=ID] [tool lists]
//	     [--model=M] [--fallback-model=M] [--mcp-config=FILE] [ExtraArgs...] [--prompt-interactive=TEXT]
//
// MODE is yolo for PermissionBypass, default (the UI asks the person at
// the terminal) for PermissionAsk and the zero value, and plan for
// PermissionPlan; qwen's UI has no mode that refuses without asking, so
// PermissionDeny is an *agentcli.UnsupportedError. The first message is
// the value of --prompt-interactive, attached with "=" so that it is never
// read as an option; qwen submits it as typed (slash commands and
// @-references apply, as they would at the prompt).
func interactiveArgs(req *agentcli.Request, mcpFile string) ([]string, error) {
	var args []string
	switch req.Permission {
	case agentcli.PermissionBypass:
		args = append(args, "--approval-mode="+approvalMode(req))
	case "", agentcli.PermissionAsk:
		args = append(args, "--approval-mode=default")
	case agentcli.PermissionPlan:
		args = append(args, "--approval-mode=plan")
	default:
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "permission mode " + string(req.Permission),
			Reason: "qwen's interactive UI asks the person at the terminal or runs everything; it has no mode that refuses without asking"}
	}
	if req.SystemPrompt != "" {
		args = append(args, "--append-system-prompt="+yargsValue(req.SystemPrompt))
	}
	if req.SessionID != "" {
		args = append(args, "--resume="+req.SessionID)
	}
	args = append(args, toolArgs(req, false)...)
	args = append(args, tailArgs(req, mcpFile)...)
	if req.Prompt != "" {
		args = append(args, "--prompt-interactive="+yargsValue(req.Prompt))
	}
	return args, nil
}
