package agentclitest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// Turn.Limit: each API's rate-limit headers on a success, and its 429
// on a rejected limit. (That the CLIs read them as scripted is proven on
// the real binaries by conformance TestLimitEvents and
// TestRateLimitError.)
func TestTurnLimit(t *testing.T) {
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	unix := strconv.FormatInt(reset.Unix(), 10)
	type check struct {
		path    string
		body    any
		headers map[string]string // on both answers
		okHdr   map[string]string // on the success only
		want429 []string          // in the 429's body
		hdr429  map[string]string
	}
	for _, c := range []check{
		{path: "/v1/messages", body: map[string]any{"stream": true},
			headers: map[string]string{"anthropic-ratelimit-unified-reset": unix, "anthropic-ratelimit-unified-representative-claim": "five_hour",
				"anthropic-ratelimit-unified-5h-reset": unix},
			okHdr:   map[string]string{"anthropic-ratelimit-unified-status": "allowed_warning", "anthropic-ratelimit-unified-5h-utilization": "0.91", "anthropic-ratelimit-unified-5h-surpassed-threshold": "0.9"},
			want429: []string{`"rate_limit_error"`},
			hdr429:  map[string]string{"anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-5h-utilization": "1"}},
		{path: "/v1/responses", body: map[string]any{"stream": true},
			headers: map[string]string{"x-codex-primary-reset-at": unix, "x-codex-primary-window-minutes": "300", "x-codex-active-limit": "codex"},
			okHdr:   map[string]string{"x-codex-primary-used-percent": "91"},
			want429: []string{`"usage_limit_reached"`, `"resets_at":` + unix},
			hdr429:  map[string]string{"x-codex-primary-used-percent": "100", "x-codex-rate-limit-reached-type": "primary"}},
		{path: "/v1beta/models/g:streamGenerateContent?alt=sse", body: map[string]any{},
			want429: []string{`"RESOURCE_EXHAUSTED"`, `"retryDelay":"7s"`}},
		{path: "/v1/chat/completions", body: map[string]any{"stream": true},
			want429: []string{`"rate_limit_exceeded"`}, hdr429: map[string]string{"Retry-After": "7"}},
	} {
		s := NewServer(
			Turn{Text: "fine", Limit: &Limit{Status: agentcli.RateLimitWarning, ResetsAt: reset, Utilization: 0.91}},
			Turn{Limit: &Limit{Status: agentcli.RateLimitRejected, ResetsAt: reset, RetryAfter: 7 * time.Second}},
		)
		resp := post(t, s.URL()+c.path, c.body)
		body := readAll(t, resp)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, body)
		}
		for k, v := range merge(c.headers, c.okHdr) {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s: header %s = %q, want %q", c.path, k, got, v)
			}
		}
		resp = post(t, s.URL()+c.path, c.body)
		body = readAll(t, resp)
		if resp.StatusCode != 429 {
			t.Errorf("%s: rejected: %d %s", c.path, resp.StatusCode, body)
		}
		for _, w := range c.want429 {
			if !strings.Contains(body, w) {
				t.Errorf("%s: 429 body %s lacks %s", c.path, body, w)
			}
		}
		for k, v := range merge(c.headers, c.hdr429) {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s: 429 header %s = %q, want %q", c.path, k, got, v)
			}
		}
		s.Close()
	}
}

func merge(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

func TestUseOAuth(t *testing.T) {
	s := NewServer()
	defer s.Close()
	w, err := s.Wire("claude", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w.UseOAuth()
	env := strings.Join(w.Env, "\n")
	if strings.Contains(env, "ANTHROPIC_API_KEY=") || !strings.Contains(env, "CLAUDE_CODE_OAUTH_TOKEN="+OAuthToken) {
		t.Fatalf("env:\n%s", env)
	}
	w, _ = s.Wire("codex", t.TempDir())
	before := strings.Join(w.Env, "\n")
	w.UseOAuth()
	if strings.Join(w.Env, "\n") != before {
		t.Fatal("UseOAuth changed a codex wiring")
	}
}

// The scripted rate-limited Call fails like a real one, under DropRaw
// too.
func TestRateLimitedCall(t *testing.T) {
	reset := time.Now().Add(time.Minute)
	call := RateLimited("fake", reset)
	call.Err.(*agentcli.RateLimitError).Err.(*agentcli.ResultError).Result = &agentcli.Result{Raw: []byte(`{"x":1}`)}
	b := NewBackend(call)
	_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", DropRaw: true})
	var rl *agentcli.RateLimitError
	var re *agentcli.ResultError
	if !errors.As(err, &rl) || !rl.ResetsAt.Equal(reset) || !errors.As(err, &re) || re.Result.Raw != nil {
		t.Fatalf("err %#v", err)
	}
	if call.Err.(*agentcli.RateLimitError).Err.(*agentcli.ResultError).Result.Raw == nil {
		t.Fatal("the script was changed")
	}
}
