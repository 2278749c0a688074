package claude

import (
	"strconv"

	"github.com/agentcli/agentcli"
)

// format selects Claude Code's --output-format.
type format int

const (
	formatJSON   format = iota // one result object at the end
	formatStream               // stream-json NDJSON with partial messages
)

// buildArgs returns the claude arguments for req. It is pure.
//
// The prompt is never an argument: it goes on stdin (see prompt input in
// wire-formats §2.2), so it cannot be read as a flag, cannot be swallowed by
// the variadic --allowedTools, and may exceed the kernel's 128 KiB limit on
// one argument. systemPromptFile is the path of a file holding the system
// prompt, or "" for none.
func buildArgs(req *agentcli.Request, f format, systemPromptFile string) []string {
	args := []string{"-p"}
	if f == formatStream {
		args = append(args, "--output-format", "stream-json", "--verbose", "--include-partial-messages")
	} else {
		args = append(args, "--output-format", "json")
	}
	args = append(args, "--dangerously-skip-permissions")
	if systemPromptFile != "" {
		args = append(args, "--append-system-prompt-file", systemPromptFile)
	}
	if req.SessionID != "" {
		args = append(args, "--resume", req.SessionID)
	}
	if len(req.AllowedTools) > 0 {
		args = append(args, "--allowedTools")
		args = append(args, req.AllowedTools...)
	}
	if len(req.DisallowedTools) > 0 {
		args = append(args, "--disallowedTools")
		args = append(args, req.DisallowedTools...)
	}
	if req.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(req.MaxTurns))
	}
	if req.Model != "" {
		args = append(args, "--model", req.Model)
	}
	args = append(args, req.ExtraArgs...)
	return args
}
