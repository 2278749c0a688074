package copilot

import (
	"context"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// interactive builds the command line and environment of copilot's
// interactive UI (see interactiveArgs): the system prompt and the MCP
// servers travel as in a run (COPILOT_CUSTOM_INSTRUCTIONS_DIRS, a private
// --additional-mcp-config file), and so do the tool lists.
//
// The UI asks first whether to trust the working directory. It takes the
// answer from COPILOT_HOME's config.json ({"trustedFolders": [DIR]}, what
// its "Yes, and remember" writes); agentclitest.Server.Wire writes it, and
// agentcli never writes into a CLI's home.
func interactive(_ context.Context, r *driver.Run) (*driver.Job, error) {
	s, err := setUp(r, r.Req, false) // args.go
	if err != nil {
		return nil, err
	}
	args, err := interactiveArgs(r.Req, s.p, s.f)
	if err != nil {
		return nil, err
	}
	return &driver.Job{Args: args, Env: s.env}, nil
}

// interactiveArgs returns the arguments of copilot's interactive UI for
// req. It is pure.
//
//	copilot --no-auto-update [--allow-all | --plan] [--model=M] [--reasoning-effort=LEVEL]
//	    [--additional-mcp-config=@FILE] [TOOL FLAGS] [--resume=ID] [ExtraArgs...] [--interactive=TEXT]
//
// --allow-all is PermissionBypass; PermissionAsk and the zero value (with
// which the UI asks the person at the terminal) pass no flag; --plan
// starts in copilot's plan mode. The UI has no mode that refuses every
// request without asking, so PermissionDeny is an
// *agentcli.UnsupportedError. The first message is the value of
// --interactive (attached with "="), which the UI submits at start-up.
func interactiveArgs(req *agentcli.Request, p toolPolicy, f files) ([]string, error) {
	switch req.Permission {
	case "", agentcli.PermissionAsk, agentcli.PermissionBypass, agentcli.PermissionPlan:
	default:
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "permission mode " + string(req.Permission),
			Reason: "copilot's interactive UI asks the person at the terminal or approves everything; it cannot refuse every request by itself"}
	}
	args := []string{"--no-auto-update"}
	args = append(args, commonArgs(req, p, f)...)
	if req.Permission == agentcli.PermissionPlan {
		args = append(args, "--plan")
	}
	if req.SessionID != "" {
		args = append(args, "--resume="+req.SessionID)
	}
	args = append(args, req.ExtraArgs...)
	if req.Prompt != "" {
		args = append(args, "--interactive="+req.Prompt)
	}
	return args, nil
}
