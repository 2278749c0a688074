package driver

import (
	"errors"
	"math"
	"regexp"
	"time"

	"github.com/agentcli/agentcli"
)

// RateLimited returns err as the error of a rate-limited run: when err
// matches agentcli.ErrRateLimited and is not a *agentcli.RateLimitError
// already, a *agentcli.RateLimitError wrapping it with the reset time,
// or else the delay the CLI suggested (counted from now), and the
// limit's last reported state (any may be zero); any other err
// unchanged. When resetsAt and retryAfter are zero, the reset time of
// limit is taken when the limit was reached.
func RateLimited(backend string, err error, resetsAt time.Time, retryAfter time.Duration, limit *agentcli.RateLimit) error {
	if err == nil || !errors.Is(err, agentcli.ErrRateLimited) {
		return err
	}
	var rl *agentcli.RateLimitError
	if errors.As(err, &rl) {
		return err
	}
	switch {
	case !resetsAt.IsZero():
		retryAfter = 0
	case retryAfter > 0:
		resetsAt = time.Now().Add(retryAfter)
	case limit != nil && limit.Status == agentcli.RateLimitRejected:
		resetsAt = limit.ResetsAt
	}
	return &agentcli.RateLimitError{Backend: backend, ResetsAt: resetsAt, RetryAfter: retryAfter, Limit: limit, Err: err}
}

// retryAfterRE matches the delay an API error suggests: gemini's
// "Suggested retry after 3s." (also "3.5s", "200ms", "2m").
var retryAfterRE = regexp.MustCompile(`(?i)\bretry after (\d{1,9}(?:\.\d{1,9})?)(ms|s|m|h)\b`)

// RetryAfter returns the delay an error message suggests waiting
// ("retry after 3s"), or 0 when it names none (or one over a day, which
// is not a delay to wait for).
func RetryAfter(msg string) time.Duration {
	if len(msg) > 64<<10 {
		msg = msg[:64<<10]
	}
	m := retryAfterRE.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	d, err := time.ParseDuration(m[1] + m[2])
	if err != nil || d <= 0 || d > 24*time.Hour {
		return 0
	}
	return d
}

// UnixTime returns the time of a Unix timestamp in seconds, or the zero
// time for one that is not positive or beyond year 9999 (what a hostile
// or broken CLI may print).
func UnixTime(sec float64) time.Time {
	if !(sec > 0) || sec > 253402300799 || math.IsNaN(sec) {
		return time.Time{}
	}
	s, f := math.Modf(sec)
	return time.Unix(int64(s), int64(f*1e9))
}

// Minutes returns a duration of n minutes, or 0 for one that is not
// positive or would overflow.
func Minutes(n float64) time.Duration {
	if !(n > 0) || n > float64(math.MaxInt64/int64(time.Minute)) {
		return 0
	}
	return time.Duration(n * float64(time.Minute))
}
