package agentcli

import (
	"errors"
	"time"
)

// What a CLI tells about its limits: how full the model's context window
// is, when it compacted the conversation, and how close the account is to
// its rate limits. Each arrives as an event of its own where the CLI
// reports it (Capabilities.ContextUsage, Compaction and RateLimits say
// which backend reports which); a consumer that does not know these kinds
// can ignore them like any other event it does not handle.
const (
	// EventContextUsage: how much of the model's context window the
	// conversation fills; ContextUsage is set. The run goes on.
	EventContextUsage EventKind = "context_usage"
	// EventCompaction: the CLI compacted the conversation (replaced
	// earlier turns by a summary); Compaction is set. The run goes on.
	EventCompaction EventKind = "compaction"
	// EventRateLimit: the state of the account's rate limit as the API
	// reported it; RateLimit is set. A rejected status is followed by the
	// run's failure (a *RateLimitError), unless the CLI retries on its
	// own.
	EventRateLimit EventKind = "rate_limit"
)

// ContextUsage is how much of the model's context window a conversation
// fills, as the CLI reports it.
type ContextUsage struct {
	// UsedTokens is the number of tokens of the conversation in the
	// context window: the input of the latest model call, cached input
	// included, and its output, as the CLI counts them.
	UsedTokens int64 `json:"used_tokens"`
	// WindowTokens is the size of the model's context window in tokens;
	// zero when the CLI does not say.
	WindowTokens int64 `json:"window_tokens,omitempty"`
	// Model is the model whose window it is, when the CLI says.
	Model string `json:"model,omitempty"`
}

// Fraction returns UsedTokens / WindowTokens (0 when the window is not
// known).
func (c ContextUsage) Fraction() float64 {
	if c.WindowTokens <= 0 {
		return 0
	}
	return float64(c.UsedTokens) / float64(c.WindowTokens)
}

// Compaction describes a compaction of the conversation.
type Compaction struct {
	// Trigger is "manual" (asked for, e.g. claude's /compact) or "auto"
	// (the CLI compacted because the context was full); empty when the
	// CLI does not say.
	Trigger string `json:"trigger,omitempty"`
	// PreTokens is the context's size before, when the CLI reports it.
	PreTokens int64 `json:"pre_tokens,omitempty"`
	// PostTokens is the context's size after, when the CLI reports it.
	PostTokens int64 `json:"post_tokens,omitempty"`
}

// RateLimitStatus is the state of a rate limit.
type RateLimitStatus string

const (
	// RateLimitAllowed: requests are allowed.
	RateLimitAllowed RateLimitStatus = "allowed"
	// RateLimitWarning: requests are allowed, but the limit is close
	// (Utilization passed a threshold the API set).
	RateLimitWarning RateLimitStatus = "allowed_warning"
	// RateLimitRejected: the limit is reached; requests fail until
	// ResetsAt.
	RateLimitRejected RateLimitStatus = "rejected"
)

// RateLimit is the state of the account's rate limits as the API reported
// it to the CLI: the limit that matters most now (the one reached, or the
// most used) in the top-level fields, every window the API reported in
// Windows.
type RateLimit struct {
	// Status is the limit's state; empty when the CLI does not say.
	Status RateLimitStatus `json:"status,omitempty"`
	// ResetsAt is when the limit resets; zero when not reported.
	ResetsAt time.Time `json:"resets_at,omitzero"`
	// Type names the limit in the CLI's own words, e.g. claude's
	// "five_hour" or "seven_day", codex's "primary" or "secondary".
	Type string `json:"type,omitempty"`
	// Utilization is how much of the limit is used, from 0 to 1 (and 1
	// or more once reached); zero when not reported.
	Utilization float64 `json:"utilization,omitempty"`
	// Window is the length of the limit's window, when reported.
	Window time.Duration `json:"window_ns,omitempty"`
	// Windows lists every limit window the API reported, the one above
	// included; empty when it reported only one.
	Windows []RateLimitWindow `json:"windows,omitempty"`
}

// RateLimitWindow is one window of an account's rate limits.
type RateLimitWindow struct {
	// Type names the window (see RateLimit.Type).
	Type string `json:"type"`
	// Status is the window's state, when reported.
	Status RateLimitStatus `json:"status,omitempty"`
	// Utilization is how much of it is used, from 0 to 1.
	Utilization float64 `json:"utilization,omitempty"`
	// ResetsAt is when it resets; zero when not reported.
	ResetsAt time.Time `json:"resets_at,omitzero"`
	// Window is its length, when reported.
	Window time.Duration `json:"window_ns,omitempty"`
}

// RateLimitError reports a run (or a live session's turn) that failed
// because the API rate-limited it. It matches ErrRateLimited and the
// error it wraps (an *ResultError, *ProtocolError or *ExitError, which
// keeps the CLI's own report), so errors.As finds either. IsTransient
// reports it as transient; WithRetry waits until ResetsAt when it is
// known (see RetryOptions.MaxWait).
type RateLimitError struct {
	// Backend names the backend.
	Backend string
	// ResetsAt is when the limit resets, as the CLI reported it (an
	// absolute time, or RetryAfter counted from when the error was
	// made); zero when the CLI did not say.
	ResetsAt time.Time
	// RetryAfter is the delay the CLI suggested instead of a reset time
	// (gemini's "Suggested retry after 3s"), or zero.
	RetryAfter time.Duration
	// Limit is the limit's state as the CLI last reported it in the run,
	// or nil.
	Limit *RateLimit
	// Err is the error the run failed with.
	Err error
}

// Error implements the error interface: Err's message, and the reset
// time when known.
func (e *RateLimitError) Error() string {
	s := e.Backend + ": rate limited"
	if e.Err != nil {
		s = e.Err.Error()
	}
	switch {
	case e.RetryAfter > 0:
		s += " (retry after " + e.RetryAfter.String() + ")"
	case !e.ResetsAt.IsZero():
		s += " (resets at " + e.ResetsAt.UTC().Format(time.RFC3339) + ")"
	}
	return s
}

// Unwrap returns the sentinel errors e matches, for errors.Is and errors.As.
func (e *RateLimitError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrRateLimited, e.Err}
	}
	return []error{ErrRateLimited}
}

// ResetTime returns when the rate limit that err reports resets: the
// ResetsAt of the *RateLimitError in err's chain, or false when there is
// none or it has no reset time.
func ResetTime(err error) (time.Time, bool) {
	var rl *RateLimitError
	if errors.As(err, &rl) && !rl.ResetsAt.IsZero() {
		return rl.ResetsAt, true
	}
	return time.Time{}, false
}
