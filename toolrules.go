package agentcli

import "strings"

// splitToolRules splits a comma-separated list of tool rules, such as the
// ALLOWED_TOOLS variable, into rules. Only commas outside parentheses
// separate: "Bash(echo a,b),Read" is the two rules "Bash(echo a,b)" and
// "Read". Each rule is trimmed of surrounding white space; empty rules are
// dropped. A ")" without a matching "(" is kept as text and does not end
// anything; an unclosed "(" makes the rest of the list part of its rule. It
// runs in linear time.
func splitToolRules(s string) []string {
	var rules []string
	depth, start := 0, 0
	add := func(r string) {
		if r = strings.TrimSpace(r); r != "" {
			rules = append(rules, r)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return rules
}
