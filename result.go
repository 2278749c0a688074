package agentcli

import (
	"encoding/json"
	"math"
	"time"
)

// Result is the outcome of a run.
type Result struct {
	// Text is the final assistant answer.
	Text string `json:"text"`
	// SessionID identifies the CLI session; pass it as Request.SessionID to
	// resume.
	SessionID string `json:"session_id"`
	// IsError reports that the CLI's terminal event says the run failed.
	IsError bool `json:"is_error"`
	// Usage is the token usage of the run (see Usage.Cumulative).
	Usage Usage `json:"usage"`
	// CostUSD is the cost the CLI reported; nil means the CLI reported none,
	// which is different from a reported cost of 0.
	CostUSD *float64 `json:"cost_usd"`
	// Turns is the number of agentic turns, when reported.
	Turns int `json:"turns,omitempty"`
	// Duration is the wall-clock duration of the run as measured by agentcli.
	Duration time.Duration `json:"duration_ns"`
	// Model is the model that answered, when reported.
	Model string `json:"model,omitempty"`
	// StopReason is the model's stop reason (e.g. "end_turn"), when reported.
	StopReason string `json:"stop_reason,omitempty"`
	// Subtype is the CLI's result subtype (e.g. Claude's "error_max_turns").
	Subtype string `json:"subtype,omitempty"`
	// TerminalReason is why the CLI ended the run (e.g. "completed",
	// "max_turns", "api_error"), when reported.
	TerminalReason string `json:"terminal_reason,omitempty"`
	// ExitCode is the CLI's exit status (-1 if it was killed by a signal).
	ExitCode int `json:"exit_code"`
	// Stderr is the tail of the CLI's stderr; kept only when the run failed.
	Stderr string `json:"stderr,omitempty"`
	// StructuredOutput is the JSON value of the final answer of a run
	// with a Request.OutputSchema; nil otherwise.
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	// Raw is the CLI's terminal event, when it printed one (and it is no
	// longer than Request.MaxRawBytes; see also Request.DropRaw).
	Raw json.RawMessage `json:"raw,omitempty"`
}

// Usage counts tokens, in one convention for every backend (each converts
// its CLI's own): InputTokens, CacheReadTokens and CacheWriteTokens are
// disjoint, so their sum is all the input the model processed; OutputTokens
// is everything the model generated, reasoning included, and
// ReasoningTokens is the part of OutputTokens spent on reasoning, when the
// CLI reports it.
type Usage struct {
	// InputTokens is the input not read from or written to the cache.
	InputTokens int64 `json:"input_tokens"`
	// OutputTokens is everything the model generated, reasoning included.
	OutputTokens int64 `json:"output_tokens"`
	// CacheReadTokens is the input read from the prompt cache.
	CacheReadTokens int64 `json:"cache_read_tokens"`
	// CacheWriteTokens is the input written to the prompt cache.
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	// ReasoningTokens is the part of OutputTokens spent on reasoning.
	ReasoningTokens int64 `json:"reasoning_tokens"`
	// Cumulative reports that the counts cover the whole session (every
	// resumed turn included) because the CLI reports nothing finer.
	Cumulative bool `json:"cumulative,omitempty"`
}

// Add returns the element-wise sum of u and v, saturating at the int64
// range rather than wrapping around. Cumulative is kept if either is
// cumulative.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      addTokens(u.InputTokens, v.InputTokens),
		OutputTokens:     addTokens(u.OutputTokens, v.OutputTokens),
		CacheReadTokens:  addTokens(u.CacheReadTokens, v.CacheReadTokens),
		CacheWriteTokens: addTokens(u.CacheWriteTokens, v.CacheWriteTokens),
		ReasoningTokens:  addTokens(u.ReasoningTokens, v.ReasoningTokens),
		Cumulative:       u.Cumulative || v.Cumulative,
	}
}

// addTokens returns a + b, saturated at math.MaxInt64 and math.MinInt64.
func addTokens(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// IsZero reports whether no tokens are counted.
func (u Usage) IsZero() bool {
	return u.InputTokens == 0 && u.OutputTokens == 0 && u.CacheReadTokens == 0 &&
		u.CacheWriteTokens == 0 && u.ReasoningTokens == 0
}
