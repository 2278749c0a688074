package toy

import (
	"strconv"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// buildArgs returns toyagent's arguments for req; system is the system
// prompt's file, or "". It is pure. Caller values are glued to their
// option (-model=VALUE): Go's flag package would read "-model VALUE" as
// well, but the glued form is one argv word whatever VALUE holds, so the
// command line has the same shape for every caller string. "--" ends the
// options, after ExtraArgs.
func buildArgs(req *agentcli.Request, system string) []string {
	args := []string{"-json"}
	if req.Permission == agentcli.PermissionBypass {
		args = append(args, "-yolo")
	}
	if req.Model != "" {
		args = append(args, "-model="+req.Model)
	}
	if req.SessionID != "" {
		args = append(args, "-resume="+req.SessionID)
	}
	if system != "" {
		args = append(args, "-system-file="+system)
	}
	if req.MaxTurns > 0 {
		args = append(args, "-max-turns="+strconv.Itoa(req.MaxTurns))
	}
	args = append(args, req.ExtraArgs...)
	return append(args, "--")
}

// validate checks what toyagent's own syntax demands: a session id is
// "toy-" and 12 hexadecimal digits.
func validate(req *agentcli.Request) error {
	if id := req.SessionID; id != "" && !(driver.IsPrefixedID(id, "toy-", 12) && len(id) == 16 && isHex(id[4:])) {
		return driver.SessionError(Name, `"toy-" and 12 hexadecimal digits`)
	}
	return nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
