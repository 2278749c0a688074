package driver

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
)

// Fake credentials in the shape of each format (none is real).
var (
	ghClassic   = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"
	ghFine      = "github_pat_" + "11ABCDEFG0abcdefghijkl_" + "MNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLM"
	anthropic   = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed-AbCdEfGh_IjKlMn"
	openai      = "sk-proj-" + "Abc123Def456Ghi789Jkl012Mno345Pqr678"
	googleKey   = "AIza" + "SyA1234567890abcdefghijklmnopqrstu"
	googleOAuth = "ya29." + "a0AfB_byC1d2E3f4G5h6I7j8K9l0M"
	slackBot    = "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUv"
	awsKeyID    = "AKIA" + "IOSFODNN7EXAMPLE"
	jwt         = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

func TestRedactFormats(t *testing.T) {
	r := NewRedactor(nil)
	for in, want := range map[string]string{
		"token " + ghClassic + " rejected":                             "token [REDACTED] rejected",
		"GITHUB_TOKEN=" + ghFine:                                       "GITHUB_TOKEN=[REDACTED]",
		"bad key " + anthropic + ".":                                   "bad key [REDACTED].",
		"OPENAI key " + openai:                                         "OPENAI key [REDACTED]",
		"?key=" + googleKey + "&alt=sse":                               "?key=[REDACTED]&alt=sse",
		"oauth " + googleOAuth:                                         "oauth [REDACTED]",
		`{"token":"` + slackBot + `"}`:                                 `{"token":"[REDACTED]"}`,
		"aws " + awsKeyID + " denied":                                  "aws [REDACTED] denied",
		"jwt " + jwt + " expired":                                      "jwt [REDACTED] expired",
		"Authorization: Bearer abc.DEF-123_xyz":                        "Authorization: Bearer [REDACTED]",
		"authorization: Basic dXNlcjpwYXNzd29yZA==":                    "authorization: Basic [REDACTED]",
		"GET https://user:s3cretPass@example.com/x failed":             "GET https://user:[REDACTED]@example.com/x failed",
		`{"api_key": "hunter2hunter2"}`:                                `{"api_key": "[REDACTED]"}`,
		"password=Tr0ub4dor&3 ok":                                      "password=[REDACTED]&3 ok",
		"hook https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX": "hook https://hooks.slack.com/services/[REDACTED]",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nnext": "[REDACTED]\nnext",
		"cut -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg":                                        "cut [REDACTED]",
		// Adjacent and overlapping secrets become one marker.
		ghClassic + ghClassic: "[REDACTED]",
		// Not secrets.
		"nothing secret here: exit status 1":            "nothing secret here: exit status 1",
		"risk-assessment-procedure-document":            "risk-assessment-procedure-document",
		"usage input_tokens=123456789 max_tokens: 4096": "usage input_tokens=123456789 max_tokens: 4096",
		"Bearer authentication failed":                  "Bearer authentication failed",
		"password: incorrect":                           "password: incorrect",
		"/home/user/.config/opencode/opencode.json":     "/home/user/.config/opencode/opencode.json",
		"": "",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// The values of credential-looking variables are redacted, from whatever
// source: inherited, Options.Env or Request.Env, all part of env. Short and
// common values, and variables with other names, are not.
func TestRedactEnvValues(t *testing.T) {
	env := []string{
		"PATH=/usr/local/bin:/usr/bin",
		"HOME=/home/someone",
		"MOCK_KEY=plainvalue123",         // Options.Env, any *KEY*
		"my_service_password=p@ss w0rd!", // lower case name, spaces
		"DB_TOKEN=a\"b\\c<d>e&fghij",     // escapes
		"OPENAI_API_KEY=short",           // too short
		"FEATURE_KEY=disabled",           // a setting
		"KEYTIMEOUT=1",
		"BACKEND_MODEL=mock-model-name",
		"API_KEY=first-value-1",
		"API_KEY=second-value-2", // both values, not just the last
	}
	r := NewRedactor(env)
	for in, want := range map[string]string{
		"auth with plainvalue123 failed":                 "auth with [REDACTED] failed",
		"login p@ss w0rd! refused":                       "login [REDACTED] refused",
		`{"t":"a\"b\\c<d>e&fghij"}`:                      `{"t":"[REDACTED]"}`,
		`{"t":"a\"b\\c\u003cd\u003ee\u0026fghij"}`:       `{"t":"[REDACTED]"}`,
		"url ?p=p%40ss+w0rd%21":                          "url ?p=[REDACTED]",
		"first-value-1 second-value-2":                   "[REDACTED] [REDACTED]",
		"short disabled 1 mock-model-name /home/someone": "short disabled 1 mock-model-name /home/someone",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// Issue 7: the process environment was read once (sync.Once), so a
// variable set after the first redaction was never redacted.
func TestRedactLateEnv(t *testing.T) {
	const v = "late-secret-value-42"
	if got := Redact("x " + v); got != "x "+v {
		t.Fatalf("redacted before it was set: %q", got)
	}
	t.Setenv("AGENTCLI_TEST_LATE_TOKEN", v)
	if got := Redact("x " + v); got != "x [REDACTED]" {
		t.Fatalf("Redact after Setenv = %q", got)
	}
}

// TestNewRedactorShared: runs whose environments hold the same credentials
// share one Redactor, whatever else differs; other credentials get a
// Redactor of their own, and the cache stays within its bound.
func TestNewRedactorShared(t *testing.T) {
	a := NewRedactor([]string{"PATH=/bin", "A_TOKEN=first-secret-value", "HOME=/home/a"})
	b := NewRedactor([]string{"A_TOKEN=first-secret-value", "PATH=/usr/bin", "OPENCODE_CONFIG=/tmp/run-2/config.json"})
	if a != b {
		t.Error("the same credentials, two Redactors")
	}
	c := NewRedactor([]string{"PATH=/bin", "A_TOKEN=second-secret-value"})
	if c == a {
		t.Fatal("other credentials, the same Redactor")
	}
	if got := c.Redact("first-secret-value second-secret-value"); got != "first-secret-value "+redacted {
		t.Errorf("the second Redactor redacts %q", got)
	}
	if got := a.Redact("first-secret-value second-secret-value"); got != redacted+" second-secret-value" {
		t.Errorf("the first Redactor redacts %q", got)
	}
	for i := range 3 * maxRedactors {
		v := fmt.Sprintf("rotated-secret-%03d", i)
		r := NewRedactor([]string{"A_TOKEN=" + v})
		if got := r.Redact("x " + v + " y"); got != "x "+redacted+" y" {
			t.Fatalf("run %d: %q", i, got)
		}
		redactors.Lock()
		n := len(redactors.m)
		redactors.Unlock()
		if n > maxRedactors {
			t.Fatalf("run %d: %d Redactors cached, want at most %d", i, n, maxRedactors)
		}
	}
}

// BenchmarkNewRedactor: what a run pays for its Redactor when it inherits
// API keys, with the Redactor cached (as every run after the first) and
// built anew.
//
//	go test -run '^$' -bench NewRedactor ./driver/
func BenchmarkNewRedactor(b *testing.B) {
	env := append(os.Environ(),
		"ANTHROPIC_API_KEY=sk-ant-api03-"+strings.Repeat("abcdefghij", 9),
		"OPENAI_API_KEY=sk-proj-"+strings.Repeat("0123456789", 6),
		"GITHUB_TOKEN=ghp_"+strings.Repeat("Ab1", 12))
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			NewRedactor(env)
		}
	})
	b.Run("built", func(b *testing.B) {
		for b.Loop() {
			redactors.Lock()
			redactors.m = nil
			redactors.Unlock()
			NewRedactor(env)
		}
	})
}

// Issue 7: ResultError's Subtype and TerminalReason, and every other
// string of CLI output an error carries, are redacted; an unknown error
// type whose message holds a secret is wrapped with a redacted message and
// still matches what it wrapped.
func TestRedactError(t *testing.T) {
	const sec = "env-secret-value-77"
	r := NewRedactor([]string{"X_TOKEN=" + sec})
	res := &agentcli.Result{Stderr: "stderr " + sec, Subtype: "sub " + ghClassic, TerminalReason: "why " + sec,
		Raw: []byte(`{"type":"result","error":"` + sec + `"}`), Text: "model text " + sec}
	re := &agentcli.ResultError{Backend: "x", Subtype: "error_" + ghFine, TerminalReason: "api " + sec, Message: "msg " + anthropic, Result: res}
	err := r.Error(fmt.Errorf("wrapped: %w", re))
	if s := err.Error(); strings.Contains(s, sec) || strings.Contains(s, "ghp_") || strings.Contains(s, "github_pat_") || strings.Contains(s, "sk-ant") {
		t.Fatalf("secret in %q", s)
	}
	if re.Subtype != "[REDACTED]" || re.TerminalReason != "api [REDACTED]" || re.Message != "msg [REDACTED]" {
		t.Fatalf("ResultError %+v", re)
	}
	if res.Stderr != "stderr [REDACTED]" || res.Subtype != "sub [REDACTED]" || res.TerminalReason != "why [REDACTED]" ||
		string(res.Raw) != `{"type":"result","error":"[REDACTED]"}` {
		t.Fatalf("Result %+v", res)
	}
	if res.Text != "model text "+sec {
		t.Fatalf("the model's answer was changed: %q", res.Text)
	}
	if !errors.Is(err, agentcli.ErrResult) {
		t.Fatal("lost ErrResult")
	}

	for _, e := range []error{
		&agentcli.ExitError{Stderr: sec, Hint: sec},
		&agentcli.NoResultError{Stderr: sec},
		&agentcli.TimeoutError{Stderr: sec},
		&agentcli.ParseError{Line: []byte(sec), Err: errors.New("bad")},
		&agentcli.BinaryError{Path: "/x/" + sec, Err: agentcli.ErrNotFound, Hint: sec},
	} {
		red := r.Error(e)
		if strings.Contains(red.Error(), sec) || strings.Contains(fmt.Sprintf("%+v", e), sec) {
			t.Errorf("%T keeps the secret: %q / %+v", e, red.Error(), e)
		}
	}

	base := errors.New("base")
	w := r.Error(fmt.Errorf("codex said %s: %w", sec, base))
	if strings.Contains(w.Error(), sec) || !errors.Is(w, base) {
		t.Fatalf("wrapped unknown error: %q (is base: %v)", w, errors.Is(w, base))
	}
	if r.Error(nil) != nil {
		t.Fatal("Error(nil) != nil")
	}
	plain := errors.New("no secret")
	if r.Error(plain) != plain {
		t.Fatal("an error without secrets was replaced")
	}
}

func TestRedactLogger(t *testing.T) {
	const sec = "log-secret-value-99"
	r := NewRedactor([]string{"SOME_SECRET=" + sec})
	var buf bytes.Buffer
	l := r.Logger(slog.New(slog.NewTextHandler(&buf, nil)))
	l = l.With("pre", sec).WithGroup("g")
	l.Warn("message "+sec, "s", sec, "err", errors.New("e "+sec), "any", []string{sec}, slog.Group("grp", "in", sec), "n", 3)
	out := buf.String()
	if strings.Contains(out, sec) || strings.Count(out, redacted) != 6 || !strings.Contains(out, "n=3") {
		t.Fatalf("log: %s", out)
	}
}

func TestTailCutsBetweenWords(t *testing.T) {
	r := NewRedactor(nil)
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello world", 5, "world"},
		{"hello world", 3, ""}, // inside a word: the piece goes
		{"  padded  ", 10, "padded"},
		{"key " + ghClassic, 7, ""}, // inside the marker
		{"a " + ghClassic + " b", 12, "[REDACTED] b"},
		{"exit status 1: error: bad request", 20, ": error: bad request"},
		{"exit status 1: error: bad request", 19, "error: bad request"},
		{"x", 0, ""},
	} {
		if got := r.Tail(c.s, c.n); got != c.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// Issue 7: a secret whose beginning was cut off by a bounded stderr buffer
// lost the prefix that identifies it.
func TestTruncatedTail(t *testing.T) {
	const sec = "p@ss w0rd!!xyz"
	r := NewRedactor([]string{"DB_PASSWORD=" + sec})
	for _, in := range []string{
		ghFine[20:] + " was rejected", // a format whose prefix is gone
		anthropic[9:] + "\nnext line", // idem
		sec[3:] + " then more",        // a variable's value, cut
		"rd!!xyz: then more",
	} {
		got := r.TruncatedTail(in, 500)
		for i := 0; i+6 <= len(ghFine); i++ {
			if strings.Contains(got, ghFine[i:i+6]) || i+6 <= len(anthropic) && strings.Contains(got, anthropic[i:i+6]) {
				t.Fatalf("TruncatedTail(%q) = %q keeps part of a secret", in, got)
			}
		}
		if strings.Contains(got, "rd!!") || strings.Contains(got, "w0rd") {
			t.Fatalf("TruncatedTail(%q) = %q keeps part of the password", in, got)
		}
	}
	if got := r.TruncatedTail("\nclean line", 500); got != "clean line" {
		t.Fatalf("a cut at a line boundary lost text: %q", got)
	}
}

// filler generates text from characters that no secret below uses, so that
// any piece of a secret in the output is a leak, not chance.
func filler() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom([]rune(" ,;:?()\n\téü")), 0, 40, -1)
}

// secret generates a credential: a variable's value (with or without token
// characters) or one of the well-known formats with a random body.
func secret() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.StringMatching(`[a-z0-9_-]{8,40}`),
		rapid.StringMatching(`[a-z0-9@#$%^&*]{8,24}`),
		rapid.StringMatching(`ghp_[A-Za-z0-9]{36}`),
		rapid.StringMatching(`github_pat_[A-Za-z0-9_]{40,82}`),
		rapid.StringMatching(`sk-ant-api03-[A-Za-z0-9_-]{20,60}`),
		rapid.StringMatching(`sk-proj-[A-Za-z0-9_-]{20,60}`),
		rapid.StringMatching(`AIza[0-9A-Za-z_-]{35}`),
		rapid.StringMatching(`ya29\.[0-9A-Za-z_-]{30,60}`),
		rapid.StringMatching(`xox[bp]-[0-9]{10}-[A-Za-z0-9]{20}`),
		rapid.StringMatching(`AKIA[A-Z0-9]{16}`),
		rapid.StringMatching(`eyJ[A-Za-z0-9_-]{10,30}\.eyJ[A-Za-z0-9_-]{10,30}\.[A-Za-z0-9_-]{10,40}`),
	)
}

// leak returns a piece of sec (minLen bytes or more) that appears in out
// once the redaction markers are taken out, or "".
func leak(out, sec string, minLen int) string {
	out = strings.ReplaceAll(out, redacted, "\x00")
	for i := 0; i+minLen <= len(sec); i++ {
		if strings.Contains(out, sec[i:i+minLen]) {
			return sec[i : i+minLen]
		}
	}
	return ""
}

// Property: a secret embedded anywhere in a text never survives Redact,
// Tail with any length (the cut may fall inside it), or TruncatedTail of
// the text cut anywhere (as a bounded stderr buffer cuts it).
func TestRedactProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sec := secret().Draw(t, "secret")
		r := NewRedactor([]string{"ANY_TOKEN=" + sec})
		parts := rapid.SliceOfN(filler(), 1, 4).Draw(t, "filler")
		text := strings.Join(parts, sec)
		if p := leak(r.Redact(text), sec, 3); p != "" {
			t.Fatalf("Redact(%q) leaks %q", text, p)
		}
		n := rapid.IntRange(1, len(text)+5).Draw(t, "n")
		if p := leak(r.Tail(text, n), sec, 3); p != "" {
			t.Fatalf("Tail(%q, %d) = %q leaks %q", text, n, r.Tail(text, n), p)
		}
		cut := rapid.IntRange(0, len(text)).Draw(t, "cut")
		if got := r.TruncatedTail(text[cut:], n); leak(got, sec, 3) != "" {
			t.Fatalf("TruncatedTail(%q, %d) = %q leaks %q", text[cut:], n, got, leak(got, sec, 3))
		}
	})
}

// Property: Tail never exceeds n runes, is valid UTF-8, and is the end of
// the redacted text.
func TestRedactorTailProperty(t *testing.T) {
	r := NewRedactor([]string{"X_TOKEN=0123456789abcdef"})
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		n := rapid.IntRange(1, 600).Draw(t, "n")
		got := r.Tail(s, n)
		if len([]rune(got)) > n || !utf8Valid(got) {
			t.Fatalf("Tail(%q, %d) = %q", s, n, got)
		}
		full := strings.TrimSpace(strings.ToValidUTF8(r.Redact(s), "\uFFFD"))
		if !strings.HasSuffix(full, got) {
			t.Fatalf("Tail(%q, %d) = %q is not the end of %q", s, n, got, full)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// Overlapping and nested variable values are redacted as one span.
func TestMatcher(t *testing.T) {
	m := newMatcher([]string{"abcdef", "cdefgh", "xyzxyzxy", "zxy"})
	for in, want := range map[string][]span{
		"..abcdefgh..": {{2, 10}},
		"xyzxyzxyzxy":  {{0, 11}},
		"abcde cdefg":  nil,
		"zxyq":         {{0, 3}},
	} {
		got := m.find(in)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("find(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestOverlap(t *testing.T) {
	for _, c := range []struct {
		v, s string
		want int
	}{
		{"secretvalue", "valueXX", 5},
		{"secretvalue", "secretvalue", 11},
		{"aaaa", "aaab", 3},
		{"abcabd", "abdzz", 3},
		{"abc", "zzz", 0},
		{"abc", "", 0},
	} {
		if got := overlap(c.v, c.s); got != c.want {
			t.Errorf("overlap(%q, %q) = %d, want %d", c.v, c.s, got, c.want)
		}
	}
}

// BenchmarkRedact shows that redaction is linear in the text: ns/byte stays
// flat from S to 2S, on ordinary text and on text made of near-misses of
// every format (many candidate starts, no complete credential).
//
//	go test -run '^$' -bench Redact -benchtime 20x ./driver/
func BenchmarkRedact(b *testing.B) {
	env := []string{"A_TOKEN=value-number-one-1", "B_KEY=another-secret-2", "C_PASSWORD=aaaaaaaaab"}
	r := NewRedactor(env)
	for _, in := range []struct {
		name, unit string
	}{
		{"prose", "error: request failed with status 500; retrying in 2s. "},
		{"nearmiss", "sk-ant- ghp_ AIza ya29. Bearer x eyJa.b password= https://u:p aaaaaaaaa -----BEGIN PRIVATE KEY----- "},
	} {
		for _, size := range []int{1 << 20, 2 << 20} {
			text := strings.Repeat(in.unit, size/len(in.unit)+1)[:size]
			b.Run(fmt.Sprintf("%s/%dMiB", in.name, size>>20), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for i := 0; i < b.N; i++ {
					r.Redact(text)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(text)), "ns/byte")
			})
		}
	}
}

func TestOccurrences(t *testing.T) {
	for _, c := range []struct {
		v, s string
		want []span
	}{
		{"abab", "xababab", []span{{1, 7}}},
		{"aa", "aaaa", []span{{0, 4}}},
		{"abc", "abcxabc", []span{{0, 3}, {4, 7}}},
		{"abc", "ab", nil},
	} {
		if got := occurrences(c.v, c.s); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("occurrences(%q, %q) = %v, want %v", c.v, c.s, got, c.want)
		}
	}
}

// Values longer than the automaton takes are found too.
func TestRedactLongValue(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 100) // 1600 bytes
	r := NewRedactor([]string{"SERVICE_ACCOUNT_KEY=" + long, "SHORT_TOKEN=shortsecret1"})
	if len(r.long) == 0 {
		t.Fatal("the long value went into the automaton")
	}
	if got := r.Redact("a " + long + " b shortsecret1 c"); got != "a [REDACTED] b [REDACTED] c" {
		t.Fatalf("Redact = %q", got)
	}
}

func TestRedactEvent(t *testing.T) {
	const sec = "event-secret-value-5"
	r := NewRedactor([]string{"EV_TOKEN=" + sec})
	notice := agentcli.Event{Kind: agentcli.EventNotice, Text: "warn " + sec, Err: errors.New("e " + sec), Raw: []byte(`{"m":"` + sec + `"}`)}
	r.Event(&notice)
	retry := agentcli.Event{Kind: agentcli.EventRetry, Retry: &agentcli.Retry{Message: "retry " + sec}}
	r.Event(&retry)
	result := agentcli.Event{Kind: agentcli.EventResult, Result: &agentcli.Result{Stderr: sec, Text: sec}}
	r.Event(&result)
	text := agentcli.Event{Kind: agentcli.EventText, Text: "model says " + sec}
	r.Event(&text)
	if strings.Contains(notice.Text+notice.Err.Error()+string(notice.Raw)+retry.Retry.Message+result.Result.Stderr, sec) {
		t.Fatalf("secret left: %+v %+v %+v", notice, retry.Retry, result.Result)
	}
	if result.Result.Text != sec || text.Text != "model says "+sec {
		t.Fatal("the model's text was changed")
	}
}
