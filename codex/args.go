package codex

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/argcheck"
	"github.com/agentcli/agentcli/internal/runner"
)

// maxArgLen is the longest single argument the Linux kernel passes to a new
// program (MAX_ARG_STRLEN, 32 pages of 4 KiB, including the terminating NUL).
const maxArgLen = 32*4096 - 1

// developerInstructionsKey is the codex config key whose value codex sends
// as a developer-role message at the start of a thread.
const developerInstructionsKey = "developer_instructions"

// buildArgs returns the codex arguments for req with the system prompt,
// if any, on the command line (-c developer_instructions="..."). It is
// pure. dir is the absolute working directory to pass with --cd, or "" for
// none. Prefer buildArgsProfile with a profile from writeSystemProfile: an
// argument is readable by every local user in /proc/PID/cmdline.
func buildArgs(req *agentcli.Request, dir string) []string {
	return buildArgsProfile(req, dir, "")
}

// buildArgsProfile returns the codex arguments for req. It is pure. dir is
// the absolute working directory to pass with --cd, or "" for none. profile
// is the name of a profile written by writeSystemProfile that carries
// req.SystemPrompt, or "" to pass the system prompt as
// -c developer_instructions="..." instead.
//
// Layout (checked against `codex exec --help` and `codex exec resume --help`
// of 0.169.0, and by real runs):
//
//	exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check
//	     [--cd=DIR] [--model=MODEL] [--profile=NAME | -c developer_instructions="..."] [ExtraArgs...]
//	     [resume -- SESSION_ID] -
//
// Every option sits before `resume`: --cd (like -s, -p and --add-dir) exists
// only at the exec level, and exec-level options apply to a resumed thread
// too. Values are attached with "=" so that a model name or directory can
// never be read as an option by codex's parser (clap), and the session id
// follows "--" for the same reason (validate also refuses any id that is
// not a UUID). The final "-" tells codex to read the prompt from stdin, so
// the prompt never appears in argv.
func buildArgsProfile(req *agentcli.Request, dir, profile string) []string {
	return buildArgsFiles(req, dir, runFiles{profile: profile})
}

// runFiles names the files prepare wrote for one run.
type runFiles struct {
	// profile is the name of a profile written by writeProfile, carrying
	// the system prompt and the MCP servers, or "" to pass them as -c
	// overrides instead.
	profile string
	// schema is the path of the file holding Request.OutputSchema, or ""
	// for none.
	schema string
}

// buildArgsFiles is buildArgsProfile with the files of f. It is pure.
//
// After the system prompt come the settings: the MCP servers as -c
// mcp_servers.NAME.KEY=VALUE overrides when there is no profile (prepare
// allows that only for servers without Env and Headers, which would be
// secrets on the command line), -c model_reasoning_effort="LEVEL", and
// --output-schema=FILE. Each -c value is a TOML value that agentcli
// encodes, never the caller's text as it is.
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
	if dir != "" {
		args = append(args, "--cd="+dir)
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if f.profile != "" {
		args = append(args, "--profile="+f.profile)
	} else {
		if req.SystemPrompt != "" {
			args = append(args, "-c", developerInstructionsArg(req.SystemPrompt))
		}
		for _, o := range mcpOverrides(req.MCPServers) {
			args = append(args, "-c", o)
		}
	}
	args = append(args, pol.args()...)
	if req.Effort != "" {
		args = append(args, "-c", reasoningEffortKey+"="+tomlString(string(req.Effort)))
	}
	if f.schema != "" {
		args = append(args, "--output-schema="+f.schema)
	}
	args = append(args, req.ExtraArgs...)
	if req.SessionID != "" {
		args = append(args, "resume", "--", req.SessionID)
	}
	return append(args, "-")
}

// validate checks the request fields that reach codex's argv. It is pure
// and returns nil or an *agentcli.RequestError naming the field.
//
// Request.SessionID must be a thread id: a UUID, which is what codex
// reports and what Result.SessionID holds. codex 0.169.0 also reads any
// other word as a thread name, and when no thread has that name it
// silently starts a new thread, so that a mistyped or forged id would
// quietly lose the conversation; such ids are refused. Tool rules must
// not be empty or start with "-" (see argcheck.ToolRules; codex ignores them otherwise).
// Request.ExtraArgs are not checked: they are passed as they are, by
// design.
func validate(req *agentcli.Request) error {
	if id := req.SessionID; id != "" && !argcheck.IsUUID(id) {
		return argcheck.SessionError(Name, "a thread UUID")
	}
	if err := argcheck.ToolRules(Name, req); err != nil {
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
// table: mcp_servers.NAME.command, .args and .url, each a TOML value. Env
// and Headers are left out: they go only in a profile file.
func mcpOverrides(servers []agentcli.MCPServer) []string {
	var out []string
	for _, s := range servers {
		key := "mcp_servers." + s.Name + "."
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

// tomlTable encodes m as a TOML inline table with quoted keys, in key
// order.
func tomlTable(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = tomlString(k) + " = " + tomlString(m[k])
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// profileContent returns the TOML of the profile that carries req's system
// prompt (developer_instructions) and MCP servers (one [mcp_servers.NAME]
// table each: command, args and env, or url and http_headers). It is pure.
// Server names are bare keys (runner.IsMCPName allows only letters,
// digits, "_" and "-"); every value is a TOML basic string, so any text
// arrives intact: codex 0.169.0 expands nothing in these values (checked
// by conformance TestMCPServers).
func profileContent(req *agentcli.Request) string {
	var b strings.Builder
	b.WriteString("# Written by agentcli for one run; removed when the run ends.\n")
	if req.SystemPrompt != "" {
		b.WriteString(developerInstructionsKey + " = " + tomlString(req.SystemPrompt) + "\n")
	}
	for _, s := range req.MCPServers {
		b.WriteString("\n[mcp_servers." + s.Name + "]\n")
		if s.URL != "" {
			b.WriteString("url = " + tomlString(s.URL) + "\n")
			if len(s.Headers) > 0 {
				b.WriteString("http_headers = " + tomlTable(s.Headers) + "\n")
			}
			continue
		}
		b.WriteString("command = " + tomlString(s.Command) + "\n")
		if len(s.Args) > 0 {
			b.WriteString("args = " + tomlArray(s.Args) + "\n")
		}
		if env := runner.MCPEnv(s); len(env) > 0 {
			b.WriteString("env = " + tomlTable(env) + "\n")
		}
	}
	return b.String()
}

// profilePrefix starts the name of every profile writeProfile creates.
const profilePrefix = "agentcli-system-"

// writeSystemProfile writes a codex profile that holds the system prompt,
// so that it reaches the model without appearing on the command line, and
// returns the profile's name (for buildArgsProfile) and a function that
// removes it. env is the run's complete child environment and dir the
// CLI's working directory ("" for the current one); they locate CODEX_HOME
// as codex does: $CODEX_HOME, else $HOME/.codex.
//
// codex 0.169.0 has no flag, environment variable or stdin channel for
// developer instructions, and its config overrides (-c) are arguments. Its
// profiles ("profile v2") are the one file it reads them from: with
// --profile=NAME it layers $CODEX_HOME/NAME.config.toml over the user's
// config, and its developer_instructions key is sent as a developer-role
// message at the start of the thread, after codex's own base instructions
// (which model_instructions_file would replace). NAME must be a plain name:
// a path such as ../x or /tmp/x is refused ("pass a plain name such as
// `work`"), so the file has to live in CODEX_HOME. It is created there
// exclusively (O_EXCL) with mode 0600 under a random name
// (agentcli-system-<16 hex digits>.config.toml), so no other local user can
// read it and concurrent runs never share one; remove deletes it when the
// run ends. A process killed before remove runs leaves the file behind;
// such files are safe to delete.
func writeSystemProfile(env []string, dir, system string) (name string, remove func(), err error) {
	return writeProfile(env, dir, profileContent(&agentcli.Request{SystemPrompt: system}))
}

// writeProfile writes content (see profileContent) as a private profile
// in CODEX_HOME, the way writeSystemProfile describes, and returns its name
// and a function that removes it.
func writeProfile(env []string, dir, content string) (name string, remove func(), err error) {
	home, err := codexHome(env, dir)
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", nil, fmt.Errorf("codex: writing the run's profile: %w", err)
	}
	for attempt := 0; ; attempt++ {
		var rnd [8]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return "", nil, err
		}
		name = profilePrefix + hex.EncodeToString(rnd[:])
		path := filepath.Join(home, name+".config.toml")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && attempt < 3 {
			continue
		}
		if err != nil {
			return "", nil, fmt.Errorf("codex: writing the run's profile: %w", err)
		}
		remove = func() { os.Remove(path) }
		_, werr := f.WriteString(content)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			remove()
			return "", nil, fmt.Errorf("codex: writing the run's profile: %w", werr)
		}
		return name, remove, nil
	}
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

// selectsProfile reports whether args (Request.ExtraArgs) select a codex
// profile themselves (-p, --profile): codex takes only one, so the system
// prompt must then go on the command line.
func selectsProfile(args []string) bool {
	for _, a := range args {
		if a == "--" || a == "resume" {
			return false
		}
		if a == "-p" || a == "--profile" || strings.HasPrefix(a, "--profile=") ||
			len(a) > 2 && a[0] == '-' && a[1] == 'p' {
			return true
		}
	}
	return false
}
