package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// maxArgLen is the longest single argument the Linux kernel passes to a new
// program (MAX_ARG_STRLEN, 32 pages of 4 KiB, including the terminating NUL).
const maxArgLen = 32*4096 - 1

// developerInstructionsKey is the codex config key whose value codex sends
// as a developer-role message at the start of a thread.
const developerInstructionsKey = "developer_instructions"

// buildArgs returns the codex arguments for req, without an output schema
// file. It is pure; see buildArgsFiles.
func buildArgs(req *agentcli.Request, dir string) []string {
	return buildArgsFiles(req, dir, runFiles{})
}

// runFiles names the files prepare wrote for one run, in the run's own
// temporary directory.
type runFiles struct {
	// schema is the path of the file holding Request.OutputSchema, or ""
	// for none.
	schema string
}

// buildArgsFiles returns the codex arguments for req. It is pure. dir is
// the absolute working directory to pass with --cd, or "" for none; f
// names the run's private files.
//
// Layout (checked against `codex exec --help` and `codex exec resume --help`
// of 0.169.0, and by real runs):
//
//	exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check
//	     [--cd=DIR] [--model=MODEL] [-c developer_instructions="..."] [-c mcp_servers.NAME.KEY=VALUE ...]
//	     [-c model_reasoning_effort="LEVEL"] [--output-schema=FILE] [ExtraArgs...]
//	     [resume -- SESSION_ID] -
//
// Every option sits before `resume`: --cd (like -s, -p and --add-dir) exists
// only at the exec level, and exec-level options apply to a resumed thread
// too. Values are attached with "=" so that a model name or directory can
// never be read as an option by codex's parser (clap), and the session id
// follows "--" for the same reason (validate also refuses any id that is
// not a UUID). The final "-" tells codex to read the prompt from stdin, so
// the prompt never appears in argv.
//
// The system prompt and the MCP servers are on the command line only for a
// run with ExtraArgs: any other run that has them goes through codex
// app-server, which takes them on stdin (see needsAppServer). MCP servers
// become -c mcp_servers.NAME.KEY=VALUE overrides (prepare allows that only
// for servers without Env and Headers, which would be secrets on the
// command line). Each -c value is a TOML value that agentcli encodes,
// never the caller's text as it is.
func buildArgsFiles(req *agentcli.Request, dir string, f runFiles) []string {
	req = restrict(req)
	pol, _ := policyFor(req) // validate refused what it cannot hold
	args := []string{"exec", "--json"}
	if pol.readOnly {
		args = append(args, "--sandbox=read-only")
	} else {
		args = append(args, "--dangerously-bypass-approvals-and-sandbox")
	}
	args = append(args, "--skip-git-repo-check")
	args = append(args, settingArgs(req, dir, pol)...)
	if f.schema != "" {
		args = append(args, "--output-schema="+f.schema)
	}
	args = append(args, req.ExtraArgs...)
	if req.SessionID != "" {
		sub := "resume"
		if req.ForkSession {
			sub = "fork" // a new thread with the history (codex 0.169.0: exec fork SESSION_ID [PROMPT])
		}
		args = append(args, sub, "--", req.SessionID)
	}
	return append(args, "-")
}

// settingArgs returns the flags of req's settings that a run and the
// interactive UI share: the directory, the model, the system prompt, the
// MCP servers, the tool policy's flags and the effort. It is pure.
func settingArgs(req *agentcli.Request, dir string, pol toolPolicy) []string {
	var args []string
	if dir != "" {
		args = append(args, "--cd="+dir)
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if req.SystemPrompt != "" {
		args = append(args, "-c", developerInstructionsArg(req.SystemPrompt))
	}
	for _, o := range mcpOverrides(req.MCPServers) {
		args = append(args, "-c", o)
	}
	args = append(args, pol.args()...)
	if req.Effort != "" {
		args = append(args, "-c", reasoningEffortKey+"="+tomlString(string(req.Effort)))
	}
	return args
}

// validate checks the request fields that reach codex's argv. It is pure
// and returns nil or an *agentcli.RequestError naming the field.
//
// Request.SessionID must be a thread id: a UUID, which is what codex
// reports and what Result.SessionID holds. codex 0.169.0 also reads any
// other word as a thread name, and when no thread has that name it
// silently starts a new thread, so that a mistyped or forged id would
// quietly lose the conversation; such ids are refused. Tool rules must
// not be empty or start with "-" (see driver.CheckToolRules; codex ignores them otherwise).
// Request.ExtraArgs are not checked: they are passed as they are, by
// design.
func validate(req *agentcli.Request) error {
	if id := req.SessionID; id != "" && !driver.IsUUID(id) {
		return driver.SessionError(Name, "a thread UUID")
	}
	if err := driver.CheckToolRules(Name, req); err != nil {
		return err
	}
	return checkTools(req)
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

// reasoningEffortKey is the codex config key for the reasoning effort
// (sent as the Responses request's reasoning.effort).
const reasoningEffortKey = "model_reasoning_effort"

// mcpOverrides returns servers as -c overrides of codex's mcp_servers
// table: mcp_servers.NAME.command, .args and .url, each a TOML value, and
// .required and .startup_timeout_sec (see mcpStartupTimeout). Env and
// Headers are left out: they never go on a command line
// (commandLineSettings refuses servers that have them).
func mcpOverrides(servers []agentcli.MCPServer) []string {
	var out []string
	for _, s := range servers {
		key := "mcp_servers." + s.Name + "."
		out = append(out, key+"required=true", key+"startup_timeout_sec="+strconv.Itoa(mcpStartupTimeout))
		if s.URL != "" {
			out = append(out, key+"url="+tomlString(s.URL))
			continue
		}
		out = append(out, key+"command="+tomlString(s.Command))
		if len(s.Args) > 0 {
			out = append(out, key+"args="+tomlArray(s.Args))
		}
	}
	return out
}

// tomlArray encodes ss as a TOML array of basic strings.
func tomlArray(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = tomlString(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// codexHome returns the CODEX_HOME the CLI will use, from its environment:
// $CODEX_HOME (relative to dir when relative), else $HOME/.codex.
func codexHome(env []string, dir string) (string, error) {
	if h := lookupEnv(env, "CODEX_HOME"); h != "" {
		if !filepath.IsAbs(h) {
			if dir == "" {
				dir = "."
			}
			h = filepath.Join(dir, h)
		}
		return filepath.Abs(h)
	}
	home := lookupEnv(env, "HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("codex: cannot locate CODEX_HOME: %w", err)
		}
	}
	return filepath.Join(home, ".codex"), nil
}

// lookupEnv returns the value of key in env, "KEY=value" entries of which
// the last one wins (as with os/exec), or "".
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
