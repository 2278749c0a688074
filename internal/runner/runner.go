// Package runner is the one implementation of agentcli.Backend. Each
// backend package declares its CLI as a Spec (name, binary, capabilities,
// tool names, an argv builder, a parser, error wording and hints); New turns
// the Spec into a Backend that owns everything else, the same way for every
// CLI: request validation, warnings about options a CLI ignores, binary
// resolution, the environment, timeouts, the process (internal/proc), the
// event stream, the outcome of a run and the redaction of what errors carry.
package runner

import "strings"

// Tail returns at most n characters from the end of s, with secrets
// redacted and surrounding space trimmed.
func Tail(s string, n int) string {
	s = strings.TrimSpace(Redact(s))
	r := []rune(s)
	if len(r) > n {
		r = r[len(r)-n:]
	}
	return strings.ToValidUTF8(string(r), "\uFFFD")
}
