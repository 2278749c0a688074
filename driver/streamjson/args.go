package streamjson

import "github.com/agentcli/agentcli"

// SessionArgs returns the session options of Claude Code's command line,
// which Qwen Code copies: --resume=ID for req.SessionID, followed by
// --fork-session when req.ForkSession, and --session-id=ID for
// req.NewSessionID; nil for a request of neither. The ids are attached
// with "=", so that neither CLI's option parser reads one as an option;
// the backend's validate checks their syntax.
func SessionArgs(req *agentcli.Request) []string {
	var args []string
	if req.SessionID != "" {
		args = append(args, "--resume="+req.SessionID)
		if req.ForkSession {
			args = append(args, "--fork-session")
		}
	}
	if req.NewSessionID != "" {
		args = append(args, "--session-id="+req.NewSessionID)
	}
	return args
}
