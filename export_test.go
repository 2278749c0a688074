package agentcli

import "time"

// WithRetryClock is WithRetry on a clock of the test's: now reads it,
// after starts a timer on it.
func WithRetryClock(b Backend, opts *RetryOptions, now func() time.Time,
	after func(time.Duration) (<-chan time.Time, func() bool)) Backend {
	r := WithRetry(b, opts)
	switch r := r.(type) {
	case *retryBackend:
		r.now, r.after = now, after
	case *retrySessionBackend:
		r.now, r.after = now, after
	}
	return r
}
