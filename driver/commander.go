package driver

import (
	"strings"
	"unicode"
)

// CommanderPrompt returns the arguments that give prompt to a CLI whose
// option parser is commander.js (claude, droid) as its positional
// operand: "--" and the prompt, so that it is never an option; none for
// an empty prompt. Commander still dispatches a first operand that names
// a subcommand to it even after "--", so a prompt that is one word (no
// white space) gets a trailing space, which names no command. It is
// pure.
func CommanderPrompt(prompt string) []string {
	if prompt == "" {
		return nil
	}
	if strings.IndexFunc(prompt, unicode.IsSpace) < 0 {
		prompt += " "
	}
	return []string{"--", prompt}
}
