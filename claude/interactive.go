package claude

import (
	"context"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// interactive builds the command line of Claude Code's interactive UI (see
// interactiveArgs); the system prompt and the MCP servers go to private
// files, as in a run. The UI takes no turn limit, spending cap or output
// schema (claude's flags for them work with --print only): those are
// ignored with a warning, or refused under Options.Strict.
func interactive(_ context.Context, r *driver.Run) (*driver.Job, error) {
	req := *r.Req
	if err := r.DropUI(&req, driver.UIMaxTurns, driver.UIMaxBudget, driver.UIOutputSchema); err != nil {
		return nil, err
	}
	sysFile, err := writeSystemPrompt(r)
	if err != nil {
		return nil, err
	}
	mcpFile, env, err := writeMCPConfig(r)
	if err != nil {
		return nil, err
	}
	args, err := interactiveArgs(&req, sysFile, mcpFile)
	if err != nil {
		return nil, err
	}
	return &driver.Job{Args: args, Env: env}, nil
}

// interactiveArgs returns the arguments of Claude Code's interactive UI for
// req. It is pure.
//
//	claude PERMISSION [--append-system-prompt-file=FILE] [--resume=ID]
//	       [--allowedTools=RULE]... [--disallowedTools=RULE]... [--model=M]
//	       [--fallback-model=M] [--effort=LEVEL] [--mcp-config=FILE --strict-mcp-config]
//	       [ExtraArgs...] [-- PROMPT]
//
// PERMISSION is --dangerously-skip-permissions for PermissionBypass (as
// root it needs IS_SANDBOX=1, and the UI shows its own
// warning dialog the first time unless the settings'
// skipDangerousModePermissionPrompt is set), and --permission-mode=default
// (asking, "manual" in the UI), =plan or =dontAsk (refuse what is not
// allowed) for PermissionAsk, PermissionPlan and PermissionDeny. Values
// are attached with "=" as in a run (see buildArgs); systemPromptFile and
// mcpConfigFile are "" for none. The first message is the positional
// prompt after "--", so it is never an option; it is submitted as typed,
// so "/cmd" runs a slash command and "@path" mentions a file. Commander,
// claude's option parser, still dispatches a first operand that names a
// subcommand ("mcp", "update", "doctor", ...) to it even after "--": a
// prompt that is a single word (no white space) therefore gets one
// trailing space, which never names a command.
func interactiveArgs(req *agentcli.Request, systemPromptFile, mcpConfigFile string) ([]string, error) {
	var args []string
	switch req.Permission {
	case agentcli.PermissionBypass:
		args = append(args, permissionArgs(req)...) // dontAsk with an allow list
	case "", agentcli.PermissionAsk:
		args = append(args, "--permission-mode=default")
	case agentcli.PermissionPlan:
		args = append(args, "--permission-mode=plan")
	case agentcli.PermissionDeny:
		args = append(args, "--permission-mode=dontAsk")
	default:
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "permission mode " + string(req.Permission)}
	}
	if systemPromptFile != "" {
		args = append(args, "--append-system-prompt-file="+systemPromptFile)
	}
	if req.SessionID != "" {
		args = append(args, "--resume="+req.SessionID)
	}
	args = append(args, toolArgs(req)...)
	args = append(args, modelArgs(req)...)
	if mcpConfigFile != "" {
		args = append(args, "--mcp-config="+mcpConfigFile, "--strict-mcp-config")
	}
	args = append(args, req.ExtraArgs...)
	return append(args, driver.CommanderPrompt(req.Prompt)...), nil
}
