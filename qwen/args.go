package qwen

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/streamjson"
)

// buildArgs returns the qwen arguments of a run or live session for req.
// It is pure; deltas asks for partial messages (text deltas), and mcpFile
// is the path of the private file holding the MCP servers ("" for none).
//
//	qwen --input-format stream-json --output-format stream-json [--include-partial-messages]
//	     --approval-mode=MODE --chat-recording=true [--append-system-prompt=TEXT] [--resume=ID [--fork-session]]
//	     [--session-id=NEWID]
//	     [--core-tools=NAME]... [--allowed-tools=RULE]... [--exclude-tools=NAME]...
//	     [--max-session-turns=N] [--model=M] [--fallback-model=M] [--mcp-config=FILE] [ExtraArgs...]
//
// The prompt is never an argument: it goes on stdin as one stream-json user
// message (userMessage), so it cannot be read as a flag and may be longer
// than one argument can be. Every value from the caller is attached with
// "=", the one form in which qwen's option parser (yargs) never reads it as
// an option (as a separate argument `--model -x` fails and `--resume -x`
// opens the session picker); yargs strips one pair of quotes around such a
// value, which yargsValue undoes. No argument is positional: a positional
// word would be a prompt or, for "mcp", "sessions", "serve", ..., a
// subcommand.
func buildArgs(req *agentcli.Request, deltas bool, mcpFile string) []string {
	args := []string{"--input-format", "stream-json", "--output-format", "stream-json"}
	if deltas {
		args = append(args, "--include-partial-messages")
	}
	args = append(args, "--approval-mode="+approvalMode(req))
	if req.SystemPrompt != "" {
		args = append(args, "--append-system-prompt="+yargsValue(req.SystemPrompt))
	}
	args = append(args, streamjson.SessionArgs(req)...)
	args = append(args, toolArgs(req, oneShot(req))...)
	if req.MaxTurns > 0 {
		args = append(args, "--max-session-turns="+strconv.Itoa(req.MaxTurns))
	}
	return append(args, tailArgs(req, mcpFile)...)
}

// tailArgs returns the options that end a run's and the interactive UI's
// argv alike: [--model=M] [--fallback-model=M] [--mcp-config=FILE]
// [ExtraArgs...]. It is pure.
func tailArgs(req *agentcli.Request, mcpFile string) []string {
	var args []string
	if req.Model != "" {
		args = append(args, "--model="+yargsValue(req.Model))
	}
	if req.FallbackModel != "" {
		args = append(args, "--fallback-model="+req.FallbackModel)
	}
	if mcpFile != "" {
		args = append(args, "--mcp-config="+mcpFile)
	}
	return append(args, req.ExtraArgs...)
}

// approvalMode returns qwen's --approval-mode for req: yolo runs every
// tool, plan is qwen's read-only mode; default asks the host (can_use_tool)
// about every call that needs approval, and the live session answers from
// the permission mode (deny refuses, ask calls OnPermission). A bypass run
// with an allow list that holds command patterns is default too: yolo
// would run every command, and the list must refuse those outside its
// patterns (the session answers from the list).
func approvalMode(req *agentcli.Request) string {
	switch driver.Mode(req) {
	case agentcli.PermissionBypass:
		if !hasPattern(req.AllowedTools) {
			return "yolo"
		}
	case agentcli.PermissionPlan:
		return "plan"
	}
	return "default"
}

// oneShot reports whether a run of req is a plain one-shot run (stdin
// closed after the prompt) rather than one turn of a live session: only
// under yolo, where qwen asks the host nothing. In its other modes qwen
// asks the host about tool calls on stdout (can_use_tool) whenever its
// input is stream-json, and waits for the answer; with stdin closed it
// would hang.
func oneShot(req *agentcli.Request) bool { return approvalMode(req) == "yolo" }

// hasPattern reports whether one of rules has a pattern ("Bash(git *)").
func hasPattern(rules []string) bool {
	for _, t := range rules {
		if r, err := driver.ParseRule(t); err == nil && r.HasPattern {
			return true
		}
	}
	return false
}

// yargsValue returns s as the value of a --flag=value argument that
// yargs-parser hands over as s: it strips one pair of matching quotes
// (' or ") around such a value, so a value that starts and ends with the
// same quote gets one more pair.
func yargsValue(s string) string {
	if s != "" && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		q := s[:1]
		return q + s + q
	}
	return s
}

// validate checks the request fields that reach qwen's argv. It is pure
// and returns nil or an *agentcli.RequestError naming the field.
//
// Request.SessionID must be a session UUID (what qwen reports and
// Result.SessionID holds; `--resume` also opens an interactive picker
// without one). Tool rules must not be empty or start with "-" (see
// driver.CheckToolRules), and their patterns must be ones qwen holds
// (toolLists).
func validate(req *agentcli.Request) error {
	if id := req.SessionID; id != "" && !driver.IsUUID(id) {
		return driver.SessionError(Name, "a session UUID")
	}
	if err := validateManage(req); err != nil {
		return err
	}
	if m := req.FallbackModel; strings.Contains(m, ",") || m != "" && yargsValue(m) != m {
		// --fallback-model is a list that qwen splits on commas, and
		// whose values yargs may strip of surrounding quotes.
		return &agentcli.RequestError{Backend: Name, Field: "FallbackModel", Reason: "qwen reads a comma as a list of models, and quotes around the name as none"}
	}
	if err := driver.CheckToolRules(Name, req); err != nil {
		return err
	}
	_, err := listsFor(req)
	return err
}

// userMessage encodes prompt as one stdin line of --input-format
// stream-json, made safe from qwen's input processing (see promptText). It
// is pure. Invalid UTF-8 in prompt is replaced with U+FFFD.
func userMessage(prompt string) []byte {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	b, _ := json.Marshal(struct {
		Type            string  `json:"type"`
		SessionID       string  `json:"session_id"`
		Message         message `json:"message"`
		ParentToolUseID *string `json:"parent_tool_use_id"`
	}{
		Type:    "user",
		Message: message{Role: "user", Content: promptText(prompt)},
	})
	return append(b, '\n')
}

// promptText returns what qwen must read for prompt to reach the model as
// it is, as far as qwen allows. Qwen 0.24.4 processes every user message,
// stream-json ones included, before the model sees it:
//
//   - Text starting with "/" (but not "//", "/*" or a first word holding
//     a further "/") runs as a slash command: /help prints help and ends
//     the turn without a model call, /init writes QWEN.md. One space is
//     put in front of such text; the model receives " /help".
//   - "@" starts a file, directory, extension, MCP resource or URL
//     reference: the file's content is appended to the message. A
//     backslash goes before each "@" (qwen's own escape, which stays in the
//     text): the model receives "\@README.md", and "a\@b.com" for
//     "a@b.com".
//
// Everything else reaches the model byte for byte. Qwen has no way to pass
// such text untouched.
func promptText(prompt string) string {
	text := escapeAt(strings.ToValidUTF8(prompt, "\uFFFD"))
	if isSlashCommand(text) {
		text = " " + text
	}
	return text
}

// isSlashCommand mirrors qwen's isSlashCommand (0.24.4): a leading "/"
// that does not start "//" or "/*", and whose first word holds no further
// "/" (a path is not a command). It errs on the side of a command.
func isSlashCommand(s string) bool {
	return strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") && !strings.HasPrefix(s, "/*")
}

// escapeAt puts a backslash before every "@" that is not preceded by one.
//
// Qwen 0.24.4 (parseAllAtCommands) takes every "@" not preceded by a
// backslash as a reference, whose path runs up to white space or one of
// ,;!?()[]{}; once the text holds one, qwen rebuilds the whole message
// from its parts, which changes its white space (a lone "@" stays text,
// but the text around it is trimmed and re-joined: verified). With every
// "@" escaped the text holds no reference and reaches the model as it is,
// backslashes included. Inserting "\" before an "@" changes only that
// "@"'s own look-behind.
func escapeAt(s string) string { return driver.EscapeAt(s, nil) }
