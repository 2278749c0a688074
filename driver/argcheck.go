// Package argcheck holds the request checks every backend's validate
// shares: session id syntaxes and tool rules. The checks exist so that no
// caller-supplied string is ever read by a CLI as an option; each backend
// passes caller values in a form its CLI cannot misread (--flag=value, or
// after "--"), and these checks refuse what no CLI would accept anyway.
package driver

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
)

// IsUUID reports whether s is a UUID in its canonical textual form: 32
// hexadecimal digits (either case) in groups of 8-4-4-4-12. Any version is
// accepted: claude and gemini issue version 4, codex version 7.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// IsIndex reports whether s is a small positive decimal number without
// sign or leading zero (at most 9 digits), such as gemini's "--resume 3".
func IsIndex(s string) bool {
	if len(s) == 0 || len(s) > 9 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// IsPrefixedID reports whether s is prefix followed by 1 to max ASCII
// letters and digits, such as opencode's "ses_…".
func IsPrefixedID(s, prefix string, max int) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) == 0 || len(rest) > max {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// IsTitle reports whether s can be a session title typed by a person: valid
// UTF-8, at most maxLen bytes, no control characters, and not starting with
// "-" or white space (no title a CLI accepts needs either, and a leading "-"
// is what an option looks like).
func IsTitle(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return r != '-' && !unicode.IsSpace(r)
}

// SessionError is the error for a Request.SessionID that is not in the
// CLI's id syntax: an *agentcli.RequestError, which matches
// agentcli.ErrBadRequest.
func SessionError(backend, want string) error {
	return &agentcli.RequestError{
		Backend: backend,
		Field:   "SessionID",
		Reason:  "not a " + backend + " session id (" + want + ")",
	}
}

// CheckToolRules checks req.AllowedTools and req.DisallowedTools against the
// rule syntax (see ParseRule): a rule must not be empty, must
// not start with "-", which a CLI taking a list of rules would read as an
// option, and is a tool name with an optional pattern in parentheses. The
// error is an *agentcli.RequestError naming the field and index.
//
// Every backend applies the check, so that a request is valid or invalid
// whatever the backend.
func CheckToolRules(backend string, req *agentcli.Request) error {
	for _, f := range []struct {
		name  string
		rules []string
	}{{"AllowedTools", req.AllowedTools}, {"DisallowedTools", req.DisallowedTools}} {
		for i, r := range f.rules {
			if _, err := ParseRule(r); err != nil {
				return &agentcli.RequestError{Backend: backend, Field: f.name + "[" + strconv.Itoa(i) + "]", Reason: err.Error()}
			}
		}
	}
	return nil
}
