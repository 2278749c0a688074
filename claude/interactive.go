package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/runner"
)

// interactive builds the command line of Claude Code's interactive UI (see
// interactiveArgs); the system prompt goes to a private file, as in a run.
// Claude Code's UI takes no max-turns limit.
func interactive(_ context.Context, r *runner.Run) (*runner.Job, error) {
	if r.Req.MaxTurns > 0 {
		if err := r.Unsupported("max turns"); err != nil {
			return nil, err
		}
	}
	sysFile := ""
	if r.Req.SystemPrompt != "" {
		dir, err := r.TempDir()
		if err != nil {
			return nil, err
		}
		sysFile = filepath.Join(dir, "system-prompt.md")
		if err := os.WriteFile(sysFile, []byte(r.Req.SystemPrompt), 0o600); err != nil {
			return nil, err
		}
	}
	args, err := interactiveArgs(r.Req, sysFile)
	if err != nil {
		return nil, err
	}
	return &runner.Job{Args: args}, nil
}

// interactiveArgs returns the arguments of Claude Code's interactive UI for
// req. It is pure.
//
//	claude PERMISSION [--append-system-prompt-file=FILE] [--resume=ID]
//	       [--allowedTools=RULE]... [--disallowedTools=RULE]... [--model=M] [ExtraArgs...] [-- PROMPT]
//
// PERMISSION is --dangerously-skip-permissions for PermissionBypass (the
// zero value; as root it needs IS_SANDBOX=1, and the UI shows its own
// warning dialog the first time unless the settings' skipDangerousModePermissionPrompt
// is set), and --permission-mode=default (asking, "manual" in the UI),
// =plan or =dontAsk (refuse what is not allowed) for PermissionAsk,
// PermissionPlan and PermissionDeny. Values are attached with "=" as in a
// run (see buildArgs). The first message is the positional prompt after
// "--", so it is never an option; it is submitted as typed, so "/cmd" runs
// a slash command and "@path" mentions a file. Commander, claude's option
// parser, still dispatches a first operand that names a subcommand ("mcp",
// "update", "doctor", ...) to it even after "--": a prompt that is a single
// word (no white space) therefore gets one trailing space, which never
// names a command.
func interactiveArgs(req *agentcli.Request, systemPromptFile string) ([]string, error) {
	var args []string
	switch req.Permission {
	case "", agentcli.PermissionBypass:
		args = append(args, "--dangerously-skip-permissions")
	case agentcli.PermissionAsk:
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
	for _, t := range req.AllowedTools {
		args = append(args, "--allowedTools="+t)
	}
	for _, t := range req.DisallowedTools {
		args = append(args, "--disallowedTools="+t)
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	args = append(args, req.ExtraArgs...)
	if req.Prompt != "" {
		p := req.Prompt
		if strings.IndexFunc(p, unicode.IsSpace) < 0 {
			p += " "
		}
		args = append(args, "--", p)
	}
	return args, nil
}
