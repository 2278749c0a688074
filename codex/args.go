package codex

import (
	"fmt"
	"strings"

	"github.com/agentcli/agentcli"
)

// maxArgLen is the longest single argument the Linux kernel passes to a new
// program (MAX_ARG_STRLEN, 32 pages of 4 KiB, including the terminating NUL).
const maxArgLen = 32*4096 - 1

// developerInstructionsKey is the codex config key whose value codex sends
// as a developer-role message at the start of a thread.
const developerInstructionsKey = "developer_instructions"

// buildArgs returns the codex arguments for req. It is pure. dir is the
// absolute working directory to pass with --cd, or "" for none.
//
// Layout (checked against `codex exec --help` and `codex exec resume --help`
// of 0.169.0, and by real runs):
//
//	exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check
//	     [--cd=DIR] [--model=MODEL] [-c developer_instructions="..."] [ExtraArgs...]
//	     [resume -- SESSION_ID] -
//
// Every option sits before `resume`: --cd (like -s, -p and --add-dir) exists
// only at the exec level, and exec-level options apply to a resumed thread
// too. Values are attached with "=" so that a model name can never be read
// as a flag, and the session id follows "--" for the same reason. The final
// "-" tells codex to read the prompt from stdin, so the prompt never appears
// in argv.
func buildArgs(req *agentcli.Request, dir string) []string {
	args := []string{"exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check"}
	if dir != "" {
		args = append(args, "--cd="+dir)
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if req.SystemPrompt != "" {
		args = append(args, "-c", developerInstructionsArg(req.SystemPrompt))
	}
	args = append(args, req.ExtraArgs...)
	if req.SessionID != "" {
		args = append(args, "resume", "--", req.SessionID)
	}
	return append(args, "-")
}

// developerInstructionsArg is the value of the -c option that carries the
// system prompt: developer_instructions=<TOML basic string>.
func developerInstructionsArg(system string) string {
	return developerInstructionsKey + "=" + tomlString(system)
}

// checkArgs reports an argument too long for the kernel to pass, which
// would otherwise surface as a baffling exec failure (E2BIG).
func checkArgs(args []string) error {
	for _, a := range args {
		if len(a) > maxArgLen {
			what := "an argument"
			if strings.HasPrefix(a, developerInstructionsKey+"=") {
				what = "the system prompt (passed as -c " + developerInstructionsKey + "=...)"
			}
			return fmt.Errorf("codex: %s is %d bytes on the command line; the limit for one argument is %d bytes", what, len(a), maxArgLen)
		}
	}
	return nil
}

// tomlString encodes s as a TOML basic string ("..."), the form codex's -c
// parser reads as a string value. Quotation mark and backslash are escaped,
// and so is every control character TOML forbids raw (U+0000–U+001F and
// U+007F; tab too, for readability): with the short escapes \b \t \n \f \r
// where TOML has one and \uXXXX otherwise. Other characters, non-ASCII
// included, are kept as they are: TOML strings are UTF-8. Invalid UTF-8
// cannot be represented in TOML: each run of invalid bytes becomes one
// U+FFFD, as with strings.ToValidUTF8 (which the prompt gets too).
//
// The result never contains a NUL byte or a raw newline, so it survives argv
// unchanged.
func tomlString(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
