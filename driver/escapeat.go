package driver

import "strings"

// EscapeAt puts a backslash before every "@" of s that is not preceded by
// one and, when ref is set, after which ref reports that a file
// reference begins (ref gets the text after the "@"): what keeps a
// prompt's "@" from being read as an @-reference by a CLI that reads
// "\@" as text (gemini, qwen). Inserting "\" before an "@" changes only
// that "@"'s own look-behind. It is pure.
func EscapeAt(s string, ref func(after string) bool) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '@' && (i == 0 || s[i-1] != '\\') && (ref == nil || ref(s[i+1:])) {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
