package opencode

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// buildArgs returns the opencode arguments for req. It is pure.
//
// dir is the absolute directory opencode is told to run in (--dir), or ""
// to leave it out. The prompt is never an argument: opencode joins message
// arguments with spaces and wraps every argument that contains a space in
// literal double quotes, so the prompt goes on stdin, which opencode reads
// to EOF and sends verbatim. Values that come from the caller (model,
// session id, directory) use the --flag=value form: opencode's option
// parser (yargs) takes everything after the first "=" as the value, while
// `--session -x` would leave the session empty and read -x as options.
func buildArgs(req *agentcli.Request, dir string) []string {
	args := []string{"run", "--format", "json"}
	switch req.Permission {
	case agentcli.PermissionBypass:
		// Approve every request the configuration does not deny (the
		// tool lists' "deny" entries hold; see tools.go).
		args = append(args, "--auto")
	case agentcli.PermissionPlan:
		args = append(args, "--agent=plan")
	}
	args = append(args, "--thinking")
	if dir != "" {
		args = append(args, "--dir="+dir)
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if req.SessionID != "" {
		args = append(args, "--session="+req.SessionID)
		if req.ForkSession {
			args = append(args, "--fork") // a new session with the history
		}
	}
	if req.Effort != "" {
		// The model's variant of that name (provider-specific reasoning
		// settings); opencode ignores a variant the model lacks.
		args = append(args, "--variant="+string(req.Effort))
	}
	args = append(args, req.ExtraArgs...)
	return args
}

// maxSessionIDLen bounds the part of an opencode session id after "ses_"
// (opencode 1.18.33 issues 26 characters).
const maxSessionIDLen = 64

// validate checks the request fields that reach opencode's argv. It is
// pure and returns nil or an *agentcli.RequestError naming the field.
//
// Request.SessionID must be an opencode session id: "ses_" followed by
// ASCII letters and digits, which is what opencode issues
// ("ses_" + 26 characters) and Result.SessionID holds. Anything else is
// refused. Tool rules must not be empty or start with "-" (see driver.CheckToolRules; opencode
// ignores them otherwise). Request.ExtraArgs are not checked: they are
// passed as they are, by design.
func validate(req *agentcli.Request) error {
	if id := req.SessionID; id != "" && !driver.IsPrefixedID(id, "ses_", maxSessionIDLen) {
		return driver.SessionError(Name, `"ses_" and letters or digits`)
	}
	if err := driver.CheckToolRules(Name, req); err != nil {
		return err
	}
	return checkTools(req)
}

// configEnv writes the private configuration file that carries system and
// servers, when there is either, and returns the environment that points
// opencode at it (OPENCODE_CONFIG=FILE), else nil.
func configEnv(r *driver.Run, system string, servers []agentcli.MCPServer) ([]string, error) {
	if system == "" && len(servers) == 0 {
		return nil, nil
	}
	tmp, err := r.TempDir()
	if err != nil {
		return nil, err
	}
	cfg, err := writeConfig(tmp, system, servers, driver.IsHostServer(r.Req, agentcli.HostServerName))
	if err != nil {
		return nil, err
	}
	return []string{"OPENCODE_CONFIG=" + cfg}, nil
}
