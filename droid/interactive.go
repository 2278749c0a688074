package droid

import (
	"context"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// interactive builds the command line of droid's interactive UI (see
// interactiveArgs). The UI takes no model, effort or MCP servers on its
// command line (they are its own settings and /model): those are ignored
// with a warning, or refused under Options.Strict. It takes no tool list:
// a request with one is an *agentcli.UnsupportedError.
func interactive(_ context.Context, r *driver.Run) (*driver.Job, error) {
	req := *r.Req
	if len(req.AllowedTools)+len(req.DisallowedTools) > 0 {
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "allowed/disallowed tools in interactive mode",
			Reason: "droid's interactive UI takes no tool list"}
	}
	if err := r.DropUI(&req, driver.UIModel, driver.UIEffort, driver.UIMCPServers); err != nil {
		return nil, err
	}
	sys, err := writeSystemPrompt(r)
	if err != nil {
		return nil, err
	}
	args, err := interactiveArgs(&req, sys)
	if err != nil {
		return nil, err
	}
	return &driver.Job{Args: args}, nil
}

// interactiveArgs returns the arguments of droid's interactive UI for req.
// It is pure.
//
//	droid [--auto=high | --use-spec] [--append-system-prompt-file=F] [--resume=ID] [ExtraArgs...] [-- PROMPT]
//
// The UI asks the person about every action in its default autonomy
// ("Auto (Off)"), which is PermissionAsk and the zero value; bypass is its
// highest autonomy (--auto=high: droid still refuses what it deems
// destructive), plan its spec mode. It has no mode that refuses without
// asking: PermissionDeny is an *agentcli.UnsupportedError. The first
// message is the positional prompt after "--"; droid's option parser
// (commander) runs a subcommand named by a first operand ("exec",
// "update", ...) even after "--", so a one-word prompt gets a trailing
// space.
func interactiveArgs(req *agentcli.Request, systemFile string) ([]string, error) {
	var args []string
	switch req.Permission {
	case agentcli.PermissionBypass:
		args = append(args, "--auto=high")
	case "", agentcli.PermissionAsk:
	case agentcli.PermissionPlan:
		args = append(args, "--use-spec")
	default:
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "permission mode " + string(req.Permission),
			Reason: "droid's interactive UI asks the person at the terminal; it has no mode that refuses without asking"}
	}
	if systemFile != "" {
		args = append(args, "--append-system-prompt-file="+systemFile)
	}
	if req.SessionID != "" {
		args = append(args, "--resume="+req.SessionID)
	}
	args = append(args, req.ExtraArgs...)
	return append(args, driver.CommanderPrompt(req.Prompt)...), nil
}
