package driver

import (
	"errors"
	"math"
	"time"

	"github.com/agentcli/agentcli"
)

// RateLimited returns err as the error of a rate-limited run: when err
// matches agentcli.ErrRateLimited and is not a *agentcli.RateLimitError
// already, a *agentcli.RateLimitError wrapping it with the reset time
// and the limit's last reported state (either may be zero); any other
// err unchanged. A reset time of the limit when resetsAt is zero is
// taken from limit when the limit was reached.
func RateLimited(backend string, err error, resetsAt time.Time, limit *agentcli.RateLimit) error {
	if err == nil || !errors.Is(err, agentcli.ErrRateLimited) {
		return err
	}
	var rl *agentcli.RateLimitError
	if errors.As(err, &rl) {
		return err
	}
	if resetsAt.IsZero() && limit != nil && limit.Status == agentcli.RateLimitRejected {
		resetsAt = limit.ResetsAt
	}
	return &agentcli.RateLimitError{Backend: backend, ResetsAt: resetsAt, Limit: limit, Err: err}
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
