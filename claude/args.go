package claude

import (
	"encoding/json"
	"strconv"

	"github.com/agentcli/agentcli"
)

// format selects whether text deltas are asked for.
type format int

const (
	formatJSON   format = iota // whole messages and the result only
	formatStream               // plus partial messages (text deltas)
)

// buildArgs returns the claude arguments for req. It is pure.
//
// The prompt is never an argument: it goes on stdin as one stream-json user
// message (see userMessage), so it cannot be read as a flag, cannot be
// swallowed by the variadic --allowedTools, and may exceed the kernel's 128
// KiB limit on one argument. Stream-json input requires stream-json output,
// so every run reads NDJSON; Run without OnText just leaves out the partial
// messages. systemPromptFile is the path of a file holding the system
// prompt, or "" for none.
func buildArgs(req *agentcli.Request, f format, systemPromptFile string) []string {
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}
	if f == formatStream {
		args = append(args, "--include-partial-messages")
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

// userMessage encodes prompt as the one stdin line of --input-format
// stream-json. A plain-text prompt (argument or stdin) is what a user types
// at Claude Code's prompt: a leading "/" runs a local slash command and
// "@path" pulls a file into the message. Marking the message as not typed
// (text_not_typed, the flag Claude Code itself sets on input that did not
// come from its prompt; verified on 2.1.330 by the conformance suite) makes
// the model receive the text exactly. It is pure. Invalid UTF-8 in prompt
// is replaced with U+FFFD.
func userMessage(prompt string) []byte {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	b, _ := json.Marshal(struct {
		Type            string  `json:"type"`
		Message         message `json:"message"`
		ParentToolUseID *string `json:"parent_tool_use_id"`
		SessionID       string  `json:"session_id"`
		TextNotTyped    bool    `json:"text_not_typed"`
	}{
		Type:         "user",
		Message:      message{Role: "user", Content: prompt},
		TextNotTyped: true,
	})
	return append(b, '\n')
}
