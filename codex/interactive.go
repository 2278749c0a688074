package codex

import (
	"context"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// interactive builds the command line of codex's interactive UI (see
// interactiveArgs). The TUI takes the system prompt and the MCP servers on
// its command line only (a stdio server's Env through a private file, a
// server with Headers refused; see commandLineSettings): nothing is
// written into the user's CODEX_HOME. It
// takes no output schema (--output-schema is codex exec's): it is ignored
// with a warning, or refused under Options.Strict.
func interactive(_ context.Context, r *driver.Run) (*driver.Job, error) {
	cl, err := commandLineSettings(r, restrict(r.Req), "codex's interactive UI")
	if err != nil {
		return nil, err
	}
	req := *cl
	if err := r.DropUI(&req, driver.UIOutputSchema); err != nil {
		return nil, err
	}
	args, err := interactiveArgs(&req, r.Dir)
	if err != nil {
		return nil, err
	}
	if err := checkArgs(args); err != nil {
		return nil, err
	}
	return &driver.Job{Args: args}, nil
}

// interactiveArgs returns the arguments of codex's interactive UI (the
// TUI) for req. It is pure. dir is the absolute working directory to pass
// with --cd, or "" for none.
//
//	codex [resume] --no-daemon PERMISSION [--cd=DIR] [--model=M]
//	      [-c developer_instructions="..."] [-c mcp_servers.NAME.KEY=VALUE ...]
//	      [-c model_reasoning_effort="LEVEL"] [ExtraArgs...] [-- [SESSION_ID] [PROMPT]]
//
// A session is resumed with the resume subcommand, which takes every
// option of the TUI, so all options follow it. --no-daemon keeps the TUI
// from starting (or joining) codex's shared background server, a process
// that would outlive the UI (and that codex 0.169.0 installs by copying
// its binary into CODEX_HOME). PERMISSION is
// --dangerously-bypass-approvals-and-sandbox for PermissionBypass and
// --ask-for-approval=on-request (the model asks the person at the
// terminal; the sandbox is codex's default) for PermissionAsk and the zero
// value; codex
// has no plan or deny mode on its command line. The session id and the
// first message are positional, after "--", so they are never options or
// a subcommand (codex's parser, clap, matches subcommands only before
// "--"). The first message is submitted as typed.
func interactiveArgs(req *agentcli.Request, dir string) ([]string, error) {
	var args []string
	if req.SessionID != "" {
		args = append(args, "resume")
	}
	args = append(args, "--no-daemon")
	pol, _ := policyFor(req) // validate refused what it cannot hold
	switch req.Permission {
	case agentcli.PermissionBypass:
		if pol.readOnly {
			args = append(args, "--ask-for-approval=never", "--sandbox=read-only")
			break
		}
		args = append(args, "--dangerously-bypass-approvals-and-sandbox")
	case "", agentcli.PermissionAsk:
		args = append(args, "--ask-for-approval=on-request")
	default:
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "permission mode " + string(req.Permission),
			Reason: "codex's interactive UI has no such mode on its command line"}
	}
	args = append(args, settingArgs(req, dir, pol)...)
	args = append(args, req.ExtraArgs...)
	if req.SessionID != "" || req.Prompt != "" {
		args = append(args, "--")
		if req.SessionID != "" {
			args = append(args, req.SessionID)
		}
		if req.Prompt != "" {
			args = append(args, strings.ToValidUTF8(req.Prompt, "\uFFFD"))
		}
	}
	return args, nil
}
