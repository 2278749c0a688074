package gemini

import (
	"fmt"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// format selects Gemini CLI's --output-format.
type format int

const (
	formatJSON   format = iota // one pretty-printed document at the end
	formatStream               // stream-json JSONL events
)

func (f format) String() string {
	if f == formatStream {
		return "stream-json"
	}
	return "json"
}

// MaxPromptBytes is the most gemini reads from stdin: 0.61.0 silently
// truncates anything longer (readStdin.ts, 8 MiB). A longer prompt (system
// prompt and escaping included) is refused with a *PromptTooLongError rather
// than truncated.
const MaxPromptBytes = 8 << 20

// PromptTooLongError reports a prompt that gemini would truncate. It is
// returned before gemini starts, and matches agentcli.ErrBadRequest.
type PromptTooLongError struct {
	// Len is the length of the input, system prompt and escaping
	// included.
	Len int
	// Limit is what gemini reads at most.
	Limit int
}

// Error implements the error interface.
func (e *PromptTooLongError) Error() string {
	return fmt.Sprintf("gemini: prompt is %d bytes; gemini reads at most %d bytes from stdin", e.Len, e.Limit)
}

// Unwrap returns the sentinel errors e matches, for errors.Is and
// errors.As.
func (e *PromptTooLongError) Unwrap() error { return agentcli.ErrBadRequest }

// buildArgs returns the gemini arguments for req. It is pure.
//
// The prompt is never an argument: it goes on stdin (see promptInput). When
// stdin is not a terminal gemini runs headless and takes stdin as the whole
// prompt, so -p/--prompt is not needed (and would only be appended to stdin
// after a blank line). Values that come from the caller use the --flag=value
// form, in which gemini's option parser (yargs) takes everything after the
// first "=" as the value: as separate arguments, `--model -x` fails ("Not
// enough arguments following: model") and `--resume -x` resumes the latest
// session and reads -x as options. No other argument comes from the caller,
// and none is positional: a positional word would be prompt text or, for
// "mcp", "extensions", "skills", "hooks" or "gemma", a subcommand.
func buildArgs(req *agentcli.Request, f format) []string {
	return buildArgsFile(req, f, "")
}

// buildArgsFile is buildArgs for a run that forks a session:
// sessionFile is the chat file of Request.SessionID, whose history
// `--session-file=FILE` loads into a new session (instead of
// --resume), or "" for none. Request.NewSessionID is --session-id=ID. It
// is pure.
func buildArgsFile(req *agentcli.Request, f format, sessionFile string) []string {
	args := []string{
		"--output-format", f.String(),
		// Headless runs cannot ask for approval: yolo runs every tool;
		// default leaves out every tool that would ask (but those
		// tools.allowed lists; see tools.go); plan is read-only.
		"--approval-mode", approvalMode(req),
		// Folder trust is on by default: in an untrusted directory a
		// headless run downgrades yolo to "default" and then exits 55
		// (FatalUntrustedWorkspaceError). --skip-trust trusts the
		// working directory for this run only.
		"--skip-trust",
	}
	switch {
	case sessionFile != "":
		args = append(args, "--session-file="+sessionFile)
	case req.SessionID != "":
		args = append(args, "--resume="+req.SessionID)
	}
	if req.NewSessionID != "" {
		args = append(args, "--session-id="+req.NewSessionID)
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	lists, _ := listsFor(req) // validate refused what gemini cannot hold
	if names := lists.serverNames(req); names != "" {
		// Only the request's servers (and, with an allow list, those it
		// names): gemini skips every other one (the user's, the
		// project's, the extensions'), and ignores its mcp.excluded
		// list. Names hold no comma (driver.IsMCPName), which gemini
		// splits the value on.
		args = append(args, "--allowed-mcp-server-names="+names)
	}
	args = append(args, req.ExtraArgs...)
	return args
}

// validate checks the request fields that reach gemini's argv. It is pure
// and returns nil or an *agentcli.RequestError naming the field.
//
// Request.SessionID must be what `gemini --resume` accepts: a session UUID
// (what gemini reports and Result.SessionID holds), "latest" (the most
// recent session of the working directory) or an index such as "3" (the
// Nth session, as --list-sessions numbers them). Anything else is refused.
// Tool rules must not be empty or start with "-" (see driver.CheckToolRules; gemini ignores
// them otherwise). Request.ExtraArgs are not checked: they are passed as
// they are, by design.
func validate(req *agentcli.Request) error {
	if req.NewSessionID != "" && req.ForkSession {
		// gemini 0.61.0 exits 1 on --session-id with --session-file.
		return &agentcli.UnsupportedError{Backend: Name, Feature: "a caller-chosen id for a fork",
			Reason: "gemini takes --session-id only for a new session"}
	}
	if id := req.SessionID; id != "" && !driver.IsUUID(id) && id != "latest" && !driver.IsIndex(id) {
		return driver.SessionError(Name, `a UUID, "latest" or a session index`)
	}
	if err := driver.CheckToolRules(Name, req); err != nil {
		return err
	}
	return checkTools(req)
}

// approvalMode returns gemini's --approval-mode for req's permission
// mode: yolo for bypass (tools.core and tools.exclude still hold: gemini
// refuses a shell command outside the core list's prefixes "by policy"),
// plan for plan, and default otherwise (the zero value and deny: a tool
// that would ask is left out, unless tools.allowed approves it in
// advance).
func approvalMode(req *agentcli.Request) string {
	switch req.Permission {
	case agentcli.PermissionBypass:
		return "yolo"
	case agentcli.PermissionPlan:
		return "plan"
	}
	return "default"
}

// promptInput returns what is written to gemini's stdin for req: the system
// prompt (if any), a blank line and the prompt, made safe from gemini's
// input processing, which would otherwise act on the text before the model
// sees it:
//
//   - Input starting with "/" (but not "//" or "/*") is run as a slash
//     command (/init replaces the prompt and writes GEMINI.md, /quit exits
//     42, project .gemini/commands/*.toml define more). A single space is
//     prepended to such input; the model receives " /…".
//   - "@" followed by a path character is a file (or agent, or MCP
//     resource) reference: the file's content is appended to the message,
//     the text is rewritten, and a missing file may be found by a recursive
//     glob. Each such "@" gets a backslash in front ("\@"), gemini's own
//     escape, which it leaves in the text; the model receives "\@README.md".
//
// Everything else reaches the model byte for byte.
func promptInput(req *agentcli.Request) string {
	text := req.Prompt
	if req.SystemPrompt != "" {
		text = req.SystemPrompt + "\n\n" + text
	}
	text = escapeAt(text)
	if isSlashCommand(text) {
		text = " " + text
	}
	return text
}

// isSlashCommand mirrors gemini's isSlashCommand (commandUtils.ts).
func isSlashCommand(s string) bool {
	return strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") && !strings.HasPrefix(s, "/*")
}

// escapeAt puts a backslash before every "@" that gemini would read as the
// start of an @-reference.
//
// Gemini 0.61.0 finds references with /(?<!\\)@PATH/g where PATH is one or
// more of: a quoted "…" string, a backslash and any character, any character
// other than space, tab, newline, CR and ,;!?()[]{}. — or a "." that is
// followed by something other than end of input or whitespace
// (AT_COMMAND_PATH_REGEX_SOURCE in atCommandProcessor.ts). So an "@" starts a
// reference unless the character before it is a backslash or the character
// after it cannot begin PATH. Inserting "\" before such an "@" changes only
// that "@"'s own look-behind, so the result has no reference left.
func escapeAt(s string) string { return driver.EscapeAt(s, startsAtPath) }

// startsAtPath reports whether gemini's PATH pattern matches at the start
// of rest.
func startsAtPath(rest string) bool {
	if rest == "" {
		return false
	}
	switch c := rest[0]; c {
	case ' ', '\t', '\n', '\r', ',', ';', '!', '?', '(', ')', '[', ']', '{', '}':
		return false
	case '.':
		// \.(?!$|[ \t\n\r])
		if len(rest) == 1 {
			return false
		}
		switch rest[1] {
		case ' ', '\t', '\n', '\r':
			return false
		}
		return true
	default:
		// Any other character, including '"', '\\' and every non-ASCII
		// one, is a path character.
		return true
	}
}
