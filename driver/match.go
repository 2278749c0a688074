package driver

import "strings"

// ErrorMatch is one line of a CLI's error table (see ClassifyBy): a
// message that contains any of Contains, compared case-insensitively, is
// of kind Err (agentcli.ErrSessionNotFound, ErrAuth or ErrRateLimited).
type ErrorMatch struct {
	Contains []string
	Err      error
}

// ClassifyBy returns a Spec.Classify that looks matches up in order and
// returns the Err of the first one whose Contains has a string in the
// message (case-insensitively, as Contains does), or nil. A CLI whose
// wording needs more than substrings keeps a func of its own.
func ClassifyBy(matches ...ErrorMatch) func(msg string) error {
	table := make([]ErrorMatch, len(matches))
	for i, m := range matches {
		subs := make([]string, len(m.Contains)) // lower case, as Contains wants
		for j, s := range m.Contains {
			subs[j] = strings.ToLower(s)
		}
		table[i] = ErrorMatch{Contains: subs, Err: m.Err}
	}
	return func(msg string) error {
		for _, m := range table {
			if Contains(msg, m.Contains...) {
				return m.Err
			}
		}
		return nil
	}
}

// Hint is one failure a CLI is known for (see HintOn): a stderr that
// contains Contains, compared case-sensitively, is explained by Say.
type Hint struct {
	Contains string
	Say      string
}

// HintOn returns a Spec.Hint that looks hints up in order and returns the
// Say of the first one whose Contains is in the exit's stderr, or "". A
// CLI whose hints depend on more than stderr (the exit code, ...) keeps a
// func of its own.
func HintOn(hints ...Hint) func(e Exit) string {
	table := append([]Hint(nil), hints...)
	return func(e Exit) string {
		for _, h := range table {
			if strings.Contains(e.Stderr, h.Contains) {
				return h.Say
			}
		}
		return ""
	}
}
