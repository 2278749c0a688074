package agentclitest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
)

// Limit scripts what the API tells the CLI of the account's rate limit
// with one Turn (Turn.Limit), in each API's own way:
//
//   - Anthropic (claude): the anthropic-ratelimit-unified-* headers
//     (status, reset, representative claim, and the 5h or 7d window's
//     utilization, reset, status and, for a warning, surpassed
//     threshold). Claude Code reports them (as rate_limit_event lines)
//     only when it runs with subscription credentials: wire it with
//     OAuth (see Wiring.UseOAuth).
//   - OpenAI Responses (codex): the x-codex-primary-used-percent,
//     -window-minutes and -reset-at headers; codex's app-server reports
//     them as account/rateLimits/updated.
//   - Gemini: a rejected limit's 429 carries a google.rpc.RetryInfo
//     with the delay until ResetsAt (or RetryAfter).
//   - Chat Completions (opencode): a rejected limit's 429 carries a
//     Retry-After header.
//
// A Limit with Status RateLimitRejected on a Turn with no Status makes
// the turn a 429 with the API's rate-limit error body: Anthropic
// rate_limit_error, Responses usage_limit_reached with resets_at (which
// codex reports as a usage limit), Gemini RESOURCE_EXHAUSTED, Chat
// Completions rate_limit_exceeded. Any other Status answers normally,
// with the headers.
type Limit struct {
	// Status is the limit's state; empty means RateLimitAllowed.
	Status agentcli.RateLimitStatus
	// ResetsAt is when it resets; zero means an hour from now (or
	// ResetIn from when the turn is answered).
	ResetsAt time.Time
	// ResetIn, if set, makes the limit reset this long after the server
	// answers the turn (for a test whose CLI takes long to start).
	ResetIn time.Duration
	// Utilization is how much of it is used, from 0 to 1 (rejected:
	// 1 when zero).
	Utilization float64
	// Window is the limit's window: 5 hours when zero; 7 days or more
	// is reported as Anthropic's seven_day window.
	Window time.Duration
	// RetryAfter, if set, is the delay a rejected turn suggests instead
	// of the time until ResetsAt (Gemini's RetryInfo, Retry-After).
	RetryAfter time.Duration
}

// resolved returns l with its defaults.
func (l Limit) resolved() Limit {
	if l.Status == "" {
		l.Status = agentcli.RateLimitAllowed
	}
	switch {
	case l.ResetIn > 0:
		l.ResetsAt = time.Now().Add(l.ResetIn)
	case l.ResetsAt.IsZero():
		l.ResetsAt = time.Now().Add(time.Hour)
	}
	if l.Utilization == 0 && l.Status == agentcli.RateLimitRejected {
		l.Utilization = 1
	}
	if l.Window <= 0 {
		l.Window = 5 * time.Hour
	}
	return l
}

// delay is the delay a rejected turn suggests, in whole seconds (at
// least 1).
func (l Limit) delay() int64 {
	d := l.RetryAfter
	if d <= 0 {
		d = time.Until(l.ResetsAt)
	}
	return max(1, int64(math.Ceil(d.Seconds())))
}

// takeTurn records rec and returns its turn (see take), with the turn's
// Limit applied to w for rec.API (see applyLimit).
func (s *Server) takeTurn(w http.ResponseWriter, rec ModelRequest) (Turn, int) {
	t, seq := s.take(rec)
	return applyLimit(w, rec.API, t), seq
}

// applyLimit sets the headers of t's Limit on w for api and returns t,
// turned into the API's 429 when the limit is rejected.
func applyLimit(w http.ResponseWriter, api string, t Turn) Turn {
	if t.Limit == nil {
		return t
	}
	l := t.Limit.resolved()
	h := w.Header()
	reset := strconv.FormatInt(l.ResetsAt.Unix(), 10)
	rejected := l.Status == agentcli.RateLimitRejected && t.Status == 0
	switch api {
	case "anthropic":
		win, claim := "5h", "five_hour"
		if l.Window >= 7*24*time.Hour {
			win, claim = "7d", "seven_day"
		}
		h.Set("anthropic-ratelimit-unified-status", string(l.Status))
		h.Set("anthropic-ratelimit-unified-reset", reset)
		h.Set("anthropic-ratelimit-unified-representative-claim", claim)
		h.Set("anthropic-ratelimit-unified-"+win+"-utilization", strconv.FormatFloat(l.Utilization, 'f', -1, 64))
		h.Set("anthropic-ratelimit-unified-"+win+"-reset", reset)
		h.Set("anthropic-ratelimit-unified-"+win+"-status", string(l.Status))
		if l.Status == agentcli.RateLimitWarning {
			h.Set("anthropic-ratelimit-unified-"+win+"-surpassed-threshold", "0.9")
		}
		if rejected {
			t.Status, t.Body = http.StatusTooManyRequests, mustJSON(anthropicError(429, "agentclitest: usage limit reached"))
		}
	case "responses":
		h.Set("x-codex-primary-used-percent", strconv.FormatFloat(l.Utilization*100, 'f', -1, 64))
		h.Set("x-codex-primary-window-minutes", strconv.FormatInt(int64(l.Window/time.Minute), 10))
		h.Set("x-codex-primary-reset-at", reset)
		h.Set("x-codex-active-limit", "codex")
		if rejected {
			h.Set("x-codex-rate-limit-reached-type", "primary")
			t.Status, t.Body = http.StatusTooManyRequests, fmt.Sprintf(
				`{"error":{"type":"usage_limit_reached","message":"agentclitest: usage limit reached","resets_at":%d,"resets_in_seconds":%d}}`,
				l.ResetsAt.Unix(), l.delay())
		}
	case "gemini":
		if rejected {
			t.Status, t.Body = http.StatusTooManyRequests, fmt.Sprintf(
				`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"%ds"}]}}`,
				l.delay())
		}
	case "chat":
		if rejected {
			h.Set("Retry-After", strconv.FormatInt(l.delay(), 10))
			t.Status, t.Body = http.StatusTooManyRequests, `{"error":{"message":"agentclitest: rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
		}
	}
	return t
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// RateLimited returns a Call that fails the way a real backend's
// rate-limited run does: with a *agentcli.RateLimitError matching
// agentcli.ErrRateLimited, resetting at resetsAt (zero: not reported),
// after an EventRateLimit with the rejected limit.
func RateLimited(backend string, resetsAt time.Time) Call {
	l := &agentcli.RateLimit{Status: agentcli.RateLimitRejected, ResetsAt: resetsAt, Utilization: 1}
	return Call{
		Events: []agentcli.Event{{Kind: agentcli.EventRateLimit, RateLimit: l}},
		Err: &agentcli.RateLimitError{Backend: backend, ResetsAt: resetsAt, Limit: l,
			Err: &agentcli.ResultError{Backend: backend, APIStatus: 429, Message: "rate limited", Kind: agentcli.ErrRateLimited}},
	}
}

// OAuthToken is the subscription token Wiring.UseOAuth gives claude.
const OAuthToken = "sk-ant-oat01-agentclitest"

// UseOAuth switches a claude wiring from an API key to subscription
// (OAuth) credentials, CLAUDE_CODE_OAUTH_TOKEN=OAuthToken, sent to the
// Server as a bearer token. Claude Code reports the account's rate limit
// (rate_limit_event, which agentcli turns into EventRateLimit) only then.
// It changes nothing for the other CLIs.
func (w *Wiring) UseOAuth() {
	env := w.Env[:0:0]
	oauth := false
	for _, kv := range w.Env {
		if strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
			oauth = true
			continue
		}
		env = append(env, kv)
	}
	if oauth {
		env = append(env, "CLAUDE_CODE_OAUTH_TOKEN="+OAuthToken)
	}
	w.Env = env
}
