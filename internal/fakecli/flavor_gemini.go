package fakecli

import (
	"fmt"
	"slices"
)

// Gemini CLI 0.61.0 (yargs, strict): `gemini --help` and the options of
// parseArguments in the 0.61.0 bundle (config.ts). yargs rejects unknown
// options ("Unknown arguments: …"), a missing value ("Not enough arguments
// following: m") and an invalid choice ("Invalid values: …") with the help
// text and exit status 1. Options declared with nargs: 1 are Value; string
// options without nargs (-r/--resume, -w/--worktree, --delete-session) are
// Optional: `--resume -x` resumes the latest session and reads -x as
// options. The array options all have nargs: 1 (Once).
var geminiFlavor = &Flavor{
	Style: Yargs,
	Bool: []string{"-d", "--debug", "--skip-trust", "-s", "--sandbox", "-y", "--yolo",
		"--acp", "--experimental-acp", "-l", "--list-extensions", "--list-sessions",
		"--screen-reader", "--raw-output", "--accept-raw-output-risk", "-v", "--version",
		"-h", "--help"},
	Value: []string{"-m", "--model", "-p", "--prompt", "-i", "--prompt-interactive",
		"--approval-mode", "--session-file", "--session-id", "-o", "--output-format"},
	Optional: []string{"-w", "--worktree", "-r", "--resume", "--delete-session",
		"--fake-responses", "--fake-responses-non-strict", "--record-responses"},
	Variadic: []string{"--policy", "--admin-policy", "--allowed-mcp-server-names",
		"--allowed-tools", "-e", "--extensions", "--include-directories"},
	Once: []string{"--policy", "--admin-policy", "--allowed-mcp-server-names",
		"--allowed-tools", "--extensions", "--include-directories"},
	Aliases: [][]string{{"--debug", "-d"}, {"--sandbox", "-s"}, {"--yolo", "-y"},
		{"--list-extensions", "-l"}, {"--version", "-v"}, {"--help", "-h"}, {"--model", "-m"},
		{"--prompt", "-p"}, {"--prompt-interactive", "-i"}, {"--output-format", "-o"},
		{"--worktree", "-w"}, {"--resume", "-r"}, {"--extensions", "-e"}},
	UsageExit: 1,
	Validate:  validateGemini,
}

func validateGemini(v map[string][]string, pos []string) string {
	get := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, v[n]...)
		}
		return out
	}
	choice := func(name string, vals []string, ok ...string) string {
		for _, x := range vals {
			if !slices.Contains(ok, x) {
				return fmt.Sprintf("Invalid values:\n  Argument: %s, Given: %q, Choices: %q", name, x, ok)
			}
		}
		return ""
	}
	outFmt := get("-o", "--output-format")
	if msg := choice("output-format", outFmt, "text", "json", "stream-json"); msg != "" {
		return msg
	}
	if len(outFmt) > 1 {
		// yargs makes a repeated option an array; gemini then silently
		// falls back to text output. Not an error for the real CLI, but
		// never what a backend wants.
		return "fakecli(gemini): --output-format given more than once (gemini would print text)"
	}
	mode := get("--approval-mode")
	if msg := choice("approval-mode", mode, "default", "auto_edit", "yolo", "plan"); msg != "" {
		return msg
	}
	prompt := get("-p", "--prompt")
	inter := get("-i", "--prompt-interactive")
	switch {
	case len(prompt) > 0 && len(pos) > 0:
		return "Cannot use both a positional prompt and the --prompt (-p) flag together"
	case len(prompt) > 0 && len(inter) > 0:
		return "Cannot use both --prompt (-p) and --prompt-interactive (-i) together"
	case len(get("-y", "--yolo")) > 0 && len(mode) > 0:
		return "Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead."
	}
	n := 0
	for _, f := range [][]string{get("-r", "--resume"), get("--session-id"), get("--session-file")} {
		if len(f) > 0 {
			n++
		}
	}
	if n > 1 {
		return "The flags --resume, --session-id, and --session-file are mutually exclusive. Please provide only one."
	}
	if len(inter) > 0 || len(get("--acp", "--experimental-acp")) > 0 {
		return "fakecli(gemini): interactive and ACP modes are not supported"
	}
	return ""
}

func init() {
	// `gemini --acp --skip-trust [--model=M] ...`: the one-shot rules,
	// --acp required.
	geminiFlavor.Live = func(args []string) string {
		p, err := geminiFlavor.Parse(args)
		if err != nil {
			return err.Error()
		}
		if len(p.Values["--acp"]) == 0 {
			return "fakecli(gemini): a live session needs --acp"
		}
		delete(p.Values, "--acp")
		return geminiFlavor.Validate(p.Values, p.Positional)
	}
	Flavors["gemini"] = geminiFlavor
}

// CheckGeminiArgs reports whether gemini 0.61.0 would accept args (without
// argv[0]), as the fake's "gemini" flavor judges it: nil, or the error
// message the CLI would print before exiting with status 1.
func CheckGeminiArgs(args []string) error {
	p, err := geminiFlavor.Parse(args)
	if err != nil {
		return err
	}
	if msg := geminiFlavor.Validate(p.Values, p.Positional); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	return nil
}
