package opencode

import (
	"context"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// interactive builds the command line and environment of OpenCode's
// interactive UI (see interactiveArgs): a plain model name is resolved to
// provider/model, and the system prompt and the MCP servers go through a
// private OPENCODE_CONFIG file, as in a run. When OPENCODE_CONFIG is
// already set, MCP servers are refused with an *agentcli.UnsupportedError
// (as in a run) and the system prompt is prepended to the first message
// instead (with a warning), or refused when there is no first message.
// PermissionAsk and PermissionDeny set the tools that change things or
// reach out to "ask" or "deny" through OPENCODE_PERMISSION (merged over
// the caller's value), as a live session does. The TUI takes no effort
// (run's --variant): it is ignored with a warning, or refused under
// Options.Strict.
func interactive(ctx context.Context, r *driver.Run) (*driver.Job, error) {
	req := *r.Req
	if req.Effort != "" {
		if err := r.Unsupported("effort"); err != nil {
			return nil, err
		}
		req.Effort = ""
	}
	model, err := r.State.(*state).resolveModel(ctx, r, req.Model)
	if err != nil {
		return nil, err
	}
	req.Model = model
	job := &driver.Job{}
	system := req.SystemPrompt
	if v := r.Lookup("OPENCODE_CONFIG"); v != "" {
		if len(req.MCPServers) > 0 {
			return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "MCP servers",
				Reason: "OPENCODE_CONFIG is already set in the run's environment, and it names the one file through which agentcli would pass them"}
		}
		if system != "" {
			if req.Prompt == "" {
				return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "system prompt without a prompt",
					Reason: "OPENCODE_CONFIG is already set, so the system prompt could only be prepended to the first message (Request.Prompt)"}
			}
			if strings.IndexByte(system, 0) >= 0 {
				return nil, &agentcli.RequestError{Backend: Name, Field: "SystemPrompt", Reason: "contains a NUL byte"}
			}
			r.Warn("interactive: system prompt with OPENCODE_CONFIG", "agentcli: OPENCODE_CONFIG is already set; prepending the system prompt to the first message instead",
				"backend", Name, "OPENCODE_CONFIG", v)
			req.Prompt = system + "\n\n" + req.Prompt
			system = ""
		}
	}
	if job.Env, err = configEnv(r, system, req.MCPServers); err != nil { // args.go
		return nil, err
	}
	preq := req
	if preq.Permission == "" {
		preq.Permission = agentcli.PermissionAsk // the TUI asks the person
	}
	if v := permissionEnv(&preq, r.Lookup("OPENCODE_PERMISSION")); v != "" {
		job.Env = append(job.Env, "OPENCODE_PERMISSION="+v)
	}
	job.Args, err = interactiveArgs(&req)
	if err != nil {
		return nil, err
	}
	return job, nil
}

// interactiveArgs returns the arguments of OpenCode's interactive UI (the
// TUI, opencode's default command) for req. It is pure. req.Model is
// already provider/model (or empty).
//
//	opencode [--auto | --agent=plan] [--model=PROVIDER/MODEL] [--session=ID] [ExtraArgs...] [--prompt=TEXT]
//
// --auto (approve every permission request the configuration does not
// deny) is PermissionBypass; PermissionAsk (and the zero value, with
// which the TUI asks the person at the terminal) and PermissionDeny pass
// no flag (interactive sets their rules in
// OPENCODE_PERMISSION); PermissionPlan selects opencode's built-in
// read-only plan agent. The TUI runs in the process's working directory
// (Request.Dir); unlike a run it takes no --dir, so a session must be
// resumed from the directory it was created in. Values are attached with
// "=" (yargs takes everything after it), so the first message (--prompt,
// which the TUI submits at start-up, as typed) is never read as an option.
// opencode 1.18.33 ignores --prompt when it resumes a session (--session):
// a request with both fails with an *agentcli.UnsupportedError rather than
// silently dropping the message.
func interactiveArgs(req *agentcli.Request) ([]string, error) {
	var args []string
	switch req.Permission {
	case agentcli.PermissionBypass:
		args = append(args, "--auto")
	case "", agentcli.PermissionAsk, agentcli.PermissionDeny:
	case agentcli.PermissionPlan:
		args = append(args, "--agent=plan")
	default:
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "permission mode " + string(req.Permission)}
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if req.SessionID != "" {
		if req.Prompt != "" {
			return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "a first message (Request.Prompt) when resuming a session",
				Reason: "opencode's TUI ignores --prompt together with --session (1.18.33): type the message instead"}
		}
		args = append(args, "--session="+req.SessionID)
	}
	args = append(args, req.ExtraArgs...)
	if req.Prompt != "" {
		args = append(args, "--prompt="+req.Prompt)
	}
	return args, nil
}
