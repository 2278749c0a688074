package driver

import (
	"strings"

	"github.com/agentcli/agentcli"
)

// ClassifyStatus maps an HTTP status to agentcli.ErrAuth (401, 403) or
// agentcli.ErrRateLimited (429); anything else gives nil.
func ClassifyStatus(status int) error {
	switch status {
	case 401, 403:
		return agentcli.ErrAuth
	case 429:
		return agentcli.ErrRateLimited
	}
	return nil
}

// classifyGeneric looks for wording any CLI or API uses for the error kinds
// agentcli reports. CLI-specific wording is each Spec's Classify.
func classifyGeneric(msg string) error {
	m := strings.ToLower(msg)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(m, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("session not found", "no session found", "could not find session"):
		return agentcli.ErrSessionNotFound
	case has("rate limit", "rate_limit", "too many requests", "status 429", "error: 429", "quota exceeded"):
		return agentcli.ErrRateLimited
	case has("authentication", "invalid api key", "unauthorized", "status 401", "not logged in"):
		return agentcli.ErrAuth
	}
	return nil
}

// classify returns the kind of an error message: the Spec's own wording
// first, then generic wording.
func (s *Spec) classify(msg string) error {
	if s.Classify != nil {
		if k := s.Classify(msg); k != nil {
			return k
		}
	}
	return classifyGeneric(msg)
}

// Contains reports whether the lower-cased msg contains any of subs (which
// must be lower case). Specs use it to write their Classify.
func Contains(msg string, subs ...string) bool {
	m := strings.ToLower(msg)
	for _, s := range subs {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// Classify returns the kind of an error message by generic wording (see
// Spec.Classify for a backend's own).
//
// Deprecated: a backend's errors are classified by its Errors (Run.Errors,
// live.Host.Errors), which know its Spec; Classify ignores backend.
func Classify(backend, msg string) error {
	return classifyGeneric(msg)
}

// ExitError returns the error of a CLI of the named backend that exited
// with no outcome of its own (a live session's CLI that died): an
// *agentcli.ExitError with its kind (by generic wording) and the redacted
// tail of stderr.
//
// Deprecated: use Errors.Exited (Run.Errors, live.Host.Errors), which
// classifies and hints as the backend's Spec says.
func ExitError(backend string, e Exit) *agentcli.ExitError {
	x := NewErrors(&Spec{Name: backend}, nil, nil)
	return &agentcli.ExitError{Backend: backend, Code: e.Code, Stderr: x.stderr(e), Kind: classifyGeneric(e.Stderr)}
}
