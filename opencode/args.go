package opencode

import "github.com/agentcli/agentcli"

// buildArgs returns the opencode arguments for req. It is pure.
//
// dir is the absolute directory opencode is told to run in (--dir), or ""
// to leave it out. The prompt is never an argument: opencode joins message
// arguments with spaces and wraps every argument that contains a space in
// literal double quotes, so the prompt goes on stdin, which opencode reads
// to EOF and sends verbatim. Values that come from the caller (model,
// session id, directory) use the --flag=value form, so that a value
// starting with "-" cannot be read as a flag by yargs.
func buildArgs(req *agentcli.Request, dir string) []string {
	args := []string{"run", "--format", "json", "--auto", "--thinking"}
	if dir != "" {
		args = append(args, "--dir="+dir)
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if req.SessionID != "" {
		args = append(args, "--session="+req.SessionID)
	}
	args = append(args, req.ExtraArgs...)
	return args
}
