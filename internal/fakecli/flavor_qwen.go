package fakecli

import (
	"fmt"
	"slices"
)

// Qwen Code 0.24.4 (yargs, strict; a fork of Gemini CLI): the options of
// `qwen --help`. Its string options have no nargs (Optional): --key=value
// takes the value with one pair of surrounding quotes stripped (checked
// with the real binary: --model='"quoted"' asks for model quoted), and a
// bare `--resume` opens the session picker. Its arrays are not greedy: one
// value per occurrence (Once). Numbers are Optional too.
var qwenFlavor = &Flavor{
	Style: Yargs,
	Bool: []string{"--telemetry", "--telemetry-log-prompts", "-d", "--debug", "--bare", "--safe-mode",
		"--insecure", "--chat-recording", "-s", "--sandbox", "-y", "--yolo", "--acp", "--experimental-acp",
		"--experimental-lsp", "--restore-ask-user-question", "-l", "--list-extensions", "--openai-logging",
		"--screen-reader", "--include-partial-messages", "-c", "--continue", "--fork-session", "-v", "--version",
		"-h", "--help"},
	Optional: []string{"--telemetry-target", "--telemetry-otlp-endpoint", "--telemetry-otlp-protocol",
		"--telemetry-outfile", "--proxy", "-m", "--model", "-p", "--prompt", "-i", "--prompt-interactive",
		"--system-prompt", "--append-system-prompt", "--output-style", "--sandbox-image", "--approval-mode",
		"--channel", "--mcp-config", "--openai-logging-dir", "--openai-api-key", "--openai-base-url",
		"--input-format", "-o", "--output-format", "--json-fd", "--json-file", "--json-schema", "--input-file",
		"-r", "--resume", "--session-id", "--worktree", "--max-session-turns", "--max-wall-time",
		"--max-tool-calls", "--max-subagent-depth", "--auth-type"},
	Variadic: []string{"--fallback-model", "--allowed-mcp-server-names", "--allowed-tools", "-e", "--extensions",
		"--include-directories", "--add-dir", "--core-tools", "--exclude-tools", "--disabled-slash-commands"},
	Once: []string{"--fallback-model", "--allowed-mcp-server-names", "--allowed-tools", "--extensions",
		"--include-directories", "--core-tools", "--exclude-tools", "--disabled-slash-commands"},
	Aliases: [][]string{{"--debug", "-d"}, {"--sandbox", "-s"}, {"--yolo", "-y"}, {"--list-extensions", "-l"},
		{"--continue", "-c"}, {"--version", "-v"}, {"--help", "-h"}, {"--model", "-m"}, {"--prompt", "-p"},
		{"--prompt-interactive", "-i"}, {"--output-format", "-o"}, {"--resume", "-r"}, {"--extensions", "-e"},
		{"--include-directories", "--add-dir"}},
	FileFlags:   []string{"--mcp-config"},
	UsageExit:   1,
	Validate:    validateQwen,
	StdinPrompt: streamJSONPrompt("fakecli(qwen): not a stream-json user message: %q"),
}

func validateQwen(v map[string][]string, pos []string) string {
	choice := func(name string, ok ...string) string {
		for _, x := range v["--"+name] {
			if !slices.Contains(ok, x) {
				return fmt.Sprintf("Invalid values:\n  Argument: %s, Given: %q, Choices: %q", name, x, ok)
			}
		}
		return ""
	}
	for _, c := range [][]string{
		{"approval-mode", "plan", "default", "auto-edit", "auto", "yolo"},
		{"input-format", "text", "stream-json"},
		{"output-format", "text", "json", "stream-json"},
	} {
		if msg := choice(c[0], c[1:]...); msg != "" {
			return msg
		}
	}
	if len(v["--output-format"]) > 1 || len(v["--input-format"]) > 1 || len(v["--approval-mode"]) > 1 {
		return "fakecli(qwen): a format or the approval mode given more than once (yargs makes it an array)"
	}
	if r := v["--resume"]; len(r) > 0 && r[len(r)-1] == "" {
		return "fakecli(qwen): a bare --resume opens the interactive session picker"
	}
	if in := v["--input-format"]; len(in) > 0 && in[0] == "stream-json" {
		if len(v["--json-schema"]) > 0 {
			return "--json-schema cannot be used with --input-format stream-json"
		}
		if out := v["--output-format"]; len(out) == 0 || out[0] != "stream-json" {
			return "fakecli(qwen): --input-format stream-json needs --output-format stream-json"
		}
	}
	if len(pos) > 0 {
		return "fakecli(qwen): a positional prompt or subcommand is not supported"
	}
	if len(v["--prompt-interactive"]) > 0 || len(v["--acp"]) > 0 || len(v["--experimental-acp"]) > 0 {
		return "fakecli(qwen): interactive and ACP modes are not supported"
	}
	return ""
}

func init() {
	// A live session is the one-shot argv with stream-json input.
	qwenFlavor.Live = func(args []string) string {
		p, err := qwenFlavor.Parse(args)
		if err != nil {
			return err.Error()
		}
		if in := p.Values["--input-format"]; len(in) == 0 || in[0] != "stream-json" {
			return "fakecli(qwen): a live session needs --input-format stream-json"
		}
		return qwenFlavor.Validate(p.Values, p.Positional)
	}
	Flavors["qwen"] = qwenFlavor
	credential["qwen"] = "OPENAI_API_KEY"
}
