package driver

import (
	"math"

	"github.com/agentcli/agentcli"
)

// Token counts and costs come from the CLI's output, which is not to be
// trusted: a count may be negative, beyond int64 or fractional, a cost
// beyond float64. The helpers below turn them into values a caller can
// add up and encode: counts clamped to [0, MaxInt64], costs to
// [0, MaxFloat64], never Inf or NaN.

// Count clamps a token count the CLI printed as an integer.
func Count(n int64) int64 { return max(n, 0) }

// CountFloat converts a token count the CLI printed as a JSON number
// (opencode's are floats): truncated, clamped to [0, MaxInt64]; NaN is 0.
func CountFloat(f float64) int64 {
	switch {
	case !(f > 0): // negative, zero or NaN
		return 0
	case f >= math.MaxInt64: // 2^63 and beyond
		return math.MaxInt64
	}
	return int64(f)
}

// AddCount adds two clamped counts, saturating at MaxInt64.
func AddCount(a, b int64) int64 {
	if s := a + b; s >= a || b < 0 {
		return s
	}
	return math.MaxInt64
}

// SubCount returns a − b, at least 0 (both clamped counts).
func SubCount(a, b int64) int64 { return max(a-b, 0) }

// Cost clamps a cost in USD to [0, MaxFloat64]; NaN is 0.
func Cost(f float64) float64 {
	switch {
	case !(f > 0):
		return 0
	case f > math.MaxFloat64:
		return math.MaxFloat64
	}
	return f
}

// AddCost adds two clamped costs, saturating at MaxFloat64.
func AddCost(a, b float64) float64 { return Cost(a + b) }

// ClampUsage clamps every count of u to [0, MaxInt64].
func ClampUsage(u agentcli.Usage) agentcli.Usage {
	u.InputTokens = Count(u.InputTokens)
	u.OutputTokens = Count(u.OutputTokens)
	u.CacheReadTokens = Count(u.CacheReadTokens)
	u.CacheWriteTokens = Count(u.CacheWriteTokens)
	u.ReasoningTokens = Count(u.ReasoningTokens)
	return u
}
