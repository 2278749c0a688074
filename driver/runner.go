package driver

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
