package claude

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/streamjson"
)

// buildArgs returns the claude arguments for req. It is pure.
//
// The prompt is never an argument: it goes on stdin as one stream-json user
// message (see userMessage), so it cannot be read as a flag and may exceed
// the kernel's 128 KiB limit on one argument. Stream-json input requires
// stream-json output, so every run reads NDJSON; deltas asks for the
// partial messages (text deltas) too, which a Run without OnText leaves
// out. systemPromptFile is the path of a file
// holding the system prompt, or "" for none.
//
// Every value that comes from the caller is attached to its option with
// "=" (--resume=ID, --model=M, --allowedTools=RULE, ...), the one form in
// which Claude Code's option parser (commander.js) never reads the value as
// an option of its own. The separate-argument forms are unsafe: --resume
// takes an optional value, so `--resume --mcp-config=x.json` resumes the
// latest session and loads x.json; --allowedTools takes a variadic list,
// which swallows following words and ends at the first argument starting
// with "-", so a rule such as "--settings" would become an option. A
// variadic option given as --opt=value takes exactly that value, and the
// option may be repeated (2.1.330 collects the values of every repetition).
// validate refuses tool rules starting with "-" and session ids outside
// Claude Code's syntax as well, so the protection does not rest on one
// mechanism.
func buildArgs(req *agentcli.Request, deltas bool, systemPromptFile string) []string {
	return buildArgsMCP(req, deltas, systemPromptFile, "")
}

// buildArgsMCP is buildArgs with mcpConfigFile, the path of the file that
// holds req.MCPServers (see mcpConfig), or "" for none. It is pure.
//
// The settings of a run go after --model: --fallback-model=M,
// --effort=LEVEL, --max-budget-usd=AMOUNT (shortest decimal), and
// --json-schema=SCHEMA with the schema compacted to one line (claude takes
// the schema itself, not a file); then --mcp-config=FILE and
// --strict-mcp-config, so that the run uses the request's MCP servers and
// no other (none from the user's or the project's configuration).
func buildArgsMCP(req *agentcli.Request, deltas bool, systemPromptFile, mcpConfigFile string) []string {
	return buildArgsHost(req, deltas, systemPromptFile, mcpConfigFile, hostArgs{})
}

// hostArgs says what a run's host tools and questions add to claude's
// argv.
type hostArgs struct {
	// server: agentcli's MCP server (driver.HostTools) is among the
	// request's servers. agentcli decides each call of its tools itself,
	// so claude runs them without asking (--allowedTools=mcp__agentcli),
	// and an allow list does not take the server away.
	server bool
	// askNative: the request's OnQuestion gets claude's AskUserQuestion
	// (nativeQuestions), which claude offers only with
	// --permission-prompt-tool=stdio: under bypass too, where no other
	// tool then asks (claude 2.1.330).
	askNative bool
	// askHost: questions go to agentcli's question tool; claude's own
	// AskUserQuestion, which dontAsk would refuse, is taken away.
	askHost bool
}

// hostArgsOf returns what r's host tools and questions add.
func hostArgsOf(r *driver.Run) hostArgs {
	h := r.HostTools()
	native := nativeQuestions(r.Req)
	return hostArgs{
		server:    h != nil,
		askNative: r.Req.OnQuestion != nil && native,
		askHost:   r.Req.OnQuestion != nil && !native,
	}
}

// nativeQuestions reports whether claude asks req's questions itself
// (AskUserQuestion through can_use_tool, which needs stdin open: a live
// session): under PermissionAsk, and under PermissionBypass without an
// allow list. Elsewhere claude runs in dontAsk (which refuses
// AskUserQuestion) or plan mode, or an allow list leaves the tool out,
// and agentcli's question tool asks instead.
func nativeQuestions(req *agentcli.Request) bool {
	switch driver.Mode(req) {
	case agentcli.PermissionAsk:
		return len(req.AllowedTools) == 0
	case agentcli.PermissionBypass:
		return len(req.AllowedTools) == 0
	}
	return false
}

// buildArgsHost is buildArgsMCP with what host adds. It is pure.
func buildArgsHost(req *agentcli.Request, deltas bool, systemPromptFile, mcpConfigFile string, host hostArgs) []string {
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}
	if deltas {
		args = append(args, "--include-partial-messages")
	}
	args = append(args, permissionArgs(req)...)
	if host.askNative && driver.Mode(req) != agentcli.PermissionAsk {
		args = append(args, "--permission-prompt-tool=stdio")
	}
	if systemPromptFile != "" {
		args = append(args, "--append-system-prompt-file="+systemPromptFile)
	}
	args = append(args, streamjson.SessionArgs(req)...)
	args = append(args, toolArgsHost(req, host.server)...)
	if host.server {
		args = append(args, "--allowedTools=mcp__"+agentcli.HostServerName)
	}
	if host.askHost {
		args = append(args, "--disallowedTools="+agentcli.ToolNameAskUserQuestion)
	}
	if req.MaxTurns > 0 {
		args = append(args, "--max-turns="+strconv.Itoa(req.MaxTurns))
	}
	args = append(args, modelArgs(req)...)
	if req.MaxBudgetUSD > 0 {
		args = append(args, "--max-budget-usd="+strconv.FormatFloat(req.MaxBudgetUSD, 'f', -1, 64))
	}
	if len(req.OutputSchema) > 0 {
		args = append(args, "--json-schema="+compactJSON(req.OutputSchema))
	}
	if mcpConfigFile != "" {
		args = append(args, "--mcp-config="+mcpConfigFile, "--strict-mcp-config")
	}
	args = append(args, req.ExtraArgs...)
	return args
}

// modelArgs returns the options of req's model settings, which a run and
// the interactive UI pass alike: [--model=M] [--fallback-model=M]
// [--effort=LEVEL]. It is pure.
func modelArgs(req *agentcli.Request) []string {
	var args []string
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if req.FallbackModel != "" {
		args = append(args, "--fallback-model="+req.FallbackModel)
	}
	if req.Effort != "" {
		args = append(args, "--effort="+string(req.Effort))
	}
	return args
}

// compactJSON returns raw on one line, insignificant space removed (raw is
// valid JSON: the runner checked it).
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// maxTitleLen bounds a session title accepted as Request.SessionID.
const maxTitleLen = 256

// validate checks the request fields that reach claude's argv. It is pure
// and returns nil or an *agentcli.RequestError naming the field.
//
// Request.SessionID must be a session id (a UUID, which is what claude
// reports and what Result.SessionID holds) or a session title, which
// `claude -p --resume` also accepts (set with --name or /rename): printable
// text of at most 256 bytes that does not start with "-" or white space.
// Anything else is refused. Tool rules must not be empty or start with
// "-" (see driver.CheckToolRules). Request.ExtraArgs are not checked:
// they are passed as they are, by design.
func validate(req *agentcli.Request) error {
	if id := req.SessionID; id != "" && !driver.IsUUID(id) && !driver.IsTitle(id, maxTitleLen) {
		return driver.SessionError(Name, "a UUID or a session title")
	}
	return driver.CheckToolRules(Name, req)
}

// userMessage encodes prompt as the one stdin line of --input-format
// stream-json. A plain-text prompt (argument or stdin) is what a user types
// at Claude Code's prompt: a leading "/" runs a local slash command and
// "@path" pulls a file into the message. Marking the message as not typed
// (text_not_typed, the flag Claude Code itself sets on input that did not
// come from its prompt; verified on 2.1.330 by the conformance suite) makes
// the model receive the text exactly. It is pure. Invalid UTF-8 in prompt
// is replaced with U+FFFD.
func userMessage(prompt string) []byte {
	return userLine(prompt)
}

// userLine encodes a not-typed user message whose content is content (a
// string, or the content blocks of attach.go) as one stdin line.
func userLine(content any) []byte {
	type message struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}
	b, _ := json.Marshal(struct {
		Type            string  `json:"type"`
		Message         message `json:"message"`
		ParentToolUseID *string `json:"parent_tool_use_id"`
		SessionID       string  `json:"session_id"`
		TextNotTyped    bool    `json:"text_not_typed"`
	}{
		Type:         "user",
		Message:      message{Role: "user", Content: content},
		TextNotTyped: true,
	})
	return append(b, '\n')
}
