package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
)

// redacted replaces every secret.
const redacted = "[REDACTED]"

// minSecretLen is the shortest variable value treated as a secret: shorter
// values ("1", "true", "dev") would be scrubbed from ordinary text
// everywhere.
const minSecretLen = 8

// minFragmentLen is the shortest end of a variable value recognised at the
// start of a text whose beginning was cut off (TruncatedTail).
const minFragmentLen = 3

// secretNameParts mark a variable name as a credential's: its value is
// redacted wherever it appears. Matched case-insensitively.
var secretNameParts = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE"}

// commonValues are values of secret-looking variables that are settings,
// not secrets.
var commonValues = map[string]bool{"disabled": true, "undefined": true, "required": true, "optional": true}

// secretPattern is a well-known credential format. The text matched by
// group (0 for the whole match) is redacted when keep, if set, accepts it.
// A word pattern's match is widened to the whole word around it (the run of
// letters, digits, "_" and "-"): a credential glued to other characters
// (error_ghp_…, two tokens in a row) goes as a whole. A boundary pattern
// matches only where no letter or digit precedes. A fold pattern is
// matched against the text with ASCII letters lowered (the pattern is
// written in lower case).
//
// Every pattern starts with a literal, which Go's regexp finds with a fast
// substring search, so each costs well under a nanosecond per byte of text
// without candidates; all run in time linear in the text (RE2).
type secretPattern struct {
	re       *regexp.Regexp
	group    int
	keep     func(string) bool
	word     bool
	boundary bool
	fold     bool
}

// secretPatterns match credentials that CLIs tend to echo in error
// messages; credentialAssignments (below) handles key=value pairs.
var secretPatterns = []secretPattern{
	{re: regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{8,}`), word: true},                                              // Anthropic
	{re: regexp.MustCompile(`sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{16,}`), word: true, boundary: true}, // OpenAI
	{re: regexp.MustCompile(`AIza[0-9A-Za-z_\-]{30,}`), word: true},                                                // Google API key
	{re: regexp.MustCompile(`ya29\.[0-9A-Za-z_\-]{20,}`), word: true},                                              // Google OAuth access token
	{re: regexp.MustCompile(`1//0[0-9A-Za-z_\-]{20,}`), word: true, boundary: true},                                // Google OAuth refresh token
	{re: regexp.MustCompile(`GOCSPX-[0-9A-Za-z_\-]{20,}`), word: true},                                             // Google OAuth client secret
	{re: regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{20,}`), word: true},                                             // GitHub classic tokens
	{re: regexp.MustCompile(`github_pat_[A-Za-z0-9_]{20,}`), word: true},                                           // GitHub fine-grained tokens
	{re: regexp.MustCompile(`xox[abposre]-[A-Za-z0-9\-]{10,}`), word: true},                                        // Slack tokens
	{re: regexp.MustCompile(`xapp-[0-9]+-[A-Za-z0-9\-]{10,}`), word: true},                                         // Slack app tokens
	{re: regexp.MustCompile(`(https://hooks\.slack\.com/services/)([A-Za-z0-9/_\-]{8,})`), group: 2},               // Slack webhooks
	{re: regexp.MustCompile(`A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|NPA|NVA|IPA)[A-Z0-9]{16}`), word: true},               // AWS access key ids
	{re: regexp.MustCompile(`npm_[A-Za-z0-9]{36}`), word: true},                                                    // npm
	{re: regexp.MustCompile(`hf_[A-Za-z0-9]{30,}`), word: true},                                                    // Hugging Face
	{re: regexp.MustCompile(`sk_(?:live|test)_[A-Za-z0-9]{16,}`), word: true},                                      // Stripe secret keys
	{re: regexp.MustCompile(`rk_(?:live|test)_[A-Za-z0-9]{16,}`), word: true},                                      // Stripe restricted keys
	{re: regexp.MustCompile(`eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*`), word: true},             // JWT
	// Credentials in URLs: scheme://user:PASSWORD@host.
	{re: regexp.MustCompile(`://[^/\s:@]+:([^@\s/]+)@`), group: 1},
	// Authorization headers: the credential after the scheme.
	{re: regexp.MustCompile(`(authorization["']?\s*[:=]\s*["']?(?:basic|bearer|token)?\s*)([^\s"',;]{8,})`), group: 2, fold: true, boundary: true},
	{re: regexp.MustCompile(`(bearer\s+)([a-z0-9._\-~+/]{8,}=*)`), group: 2, keep: tokenLike, fold: true, boundary: true},
}

// privateKeys returns the spans of PEM private key blocks in s, from
// "-----BEGIN … PRIVATE KEY-----" to the matching END line, or to the end
// of s when the block is cut off. Linear in s: each byte is searched once.
func privateKeys(s string) []span {
	const begin, end, tail = "-----BEGIN", "-----END", "PRIVATE KEY-----"
	var out []span
	for at := 0; ; {
		i := strings.Index(s[at:], begin)
		if i < 0 {
			return out
		}
		i += at
		// The header: "-----BEGIN", capitals and spaces, "PRIVATE KEY-----".
		h := i + len(begin)
		for h < len(s) && (s[h] == ' ' || 'A' <= s[h] && s[h] <= 'Z') && !strings.HasPrefix(s[h:], tail) {
			h++
		}
		if !strings.HasPrefix(s[h:], tail) {
			at = i + len(begin)
			continue
		}
		e := len(s)
		for from := h + len(tail); from < len(s); {
			j := strings.Index(s[from:], end)
			if j < 0 {
				break
			}
			j += from
			k := j + len(end)
			for k < len(s) && (s[k] == ' ' || 'A' <= s[k] && s[k] <= 'Z') && !strings.HasPrefix(s[k:], tail) {
				k++
			}
			if strings.HasPrefix(s[k:], tail) {
				e = k + len(tail)
				break
			}
			from = j + len(end)
		}
		out = append(out, span{i, e})
		at = e
	}
}

// credentialKeys are the keys whose value credentialAssignments redacts
// (lower case; "-" and "_" as written).
var credentialKeys = []string{
	"api_key", "api-key", "apikey", "x-api-key", "x-goog-api-key", "access_key", "access-key", "accesskey",
	"access_key_id", "secret_key", "secret-key", "secretkey", "secret_access_key", "client_secret", "client-secret",
	"auth_token", "auth-token", "authtoken", "access_token", "access-token", "accesstoken", "refresh_token",
	"refresh-token", "refreshtoken", "id_token", "session_token", "token", "secret", "password", "passwd", "pwd",
	"passphrase", "credential", "credentials",
}

// valueEnd are the bytes that end a value in credentialAssignments.
const valueEnd = " \t\r\n\f\v\"',;}&"

// credentialAssignments returns the spans of the values in key=value,
// key: value and "key": "value" pairs whose key ends with one of
// credentialKeys (in any case), when the value looks like a credential
// (tokenLike, 8 characters or more). low is s with ASCII letters lowered.
// Each separator is looked at once, with a bounded look back, and a value
// is scanned at most once, so the time is linear in the text.
func credentialAssignments(s, low string) []span {
	var out []span
	reach := 0
	for i := 0; i < len(low); i++ {
		if c := low[i]; c != ':' && c != '=' || i < reach {
			continue
		}
		// Back over spaces and a quote to the key.
		j := i
		for k := 0; k < 8 && j > 0 && (low[j-1] == ' ' || low[j-1] == '\t'); k++ {
			j--
		}
		if j > 0 && (low[j-1] == '"' || low[j-1] == '\'') {
			j--
		}
		found := false
		for _, key := range credentialKeys {
			if strings.HasSuffix(low[:j], key) {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		// Forward over spaces and a quote to the value.
		a := i + 1
		for k := 0; k < 8 && a < len(low) && (low[a] == ' ' || low[a] == '\t'); k++ {
			a++
		}
		if a < len(low) && (low[a] == '"' || low[a] == '\'') {
			a++
		}
		b := a
		for b < len(low) && strings.IndexByte(valueEnd, low[b]) < 0 {
			b++
		}
		reach = b
		if v := s[a:b]; utf8.RuneCountInString(v) >= 8 && tokenLike(v) {
			out = append(out, span{a, b})
		}
	}
	return out
}

// asciiLower returns s with the ASCII letters lowered and every other byte
// kept, so that offsets into it are offsets into s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isWordByte reports the characters a word pattern's match is widened
// over.
func isWordByte(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-'
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// tokenLike reports whether s looks like a credential rather than a word
// or a number: not only digits, and a digit, mixed case or 20 characters.
func tokenLike(s string) bool {
	var digit, upper, lower, other bool
	for _, r := range s {
		switch {
		case '0' <= r && r <= '9':
			digit = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		default:
			other = true
		}
	}
	if digit && !upper && !lower && !other {
		return false
	}
	return digit || upper && lower || utf8.RuneCountInString(s) >= 20
}

// Redactor removes credentials from text that agentcli passes on: error
// messages, log records, Result.Stderr. It redacts the well-known token
// formats (Anthropic, OpenAI, Google API keys and OAuth tokens, GitHub
// classic and fine-grained, Slack, AWS access key ids, npm, Hugging Face,
// Stripe, JWTs, private keys, bearer and basic credentials, passwords in
// URLs, and key=value or "key": "value" pairs whose key names a credential)
// and the value of every variable of the run's environment whose name looks
// like a credential's (contains KEY, TOKEN, SECRET, PASSWORD, PASSWD,
// PASSPHRASE, CREDENTIAL or COOKIE, in any case), as it is, JSON-escaped
// and URL-escaped. Values shorter than 8 bytes are left alone: redacting
// "1" or "true" would scrub ordinary text.
//
// Redaction runs in time linear in the text (one Aho-Corasick pass for the
// variable values, one RE2 pass per format). Overlapping secrets are
// redacted as one. A Redactor is immutable and safe for concurrent use.
type Redactor struct {
	// lits finds the values up to maxMatcherLen bytes; long ones are
	// searched one by one (Knuth-Morris-Pratt).
	lits *matcher
	long []string
	// secrets are all the literal values, for TruncatedTail.
	secrets []string
}

// maxMatcherLen is the longest value put in the Aho-Corasick automaton,
// whose table grows with the total length of its values.
const maxMatcherLen = 512

// NewRedactor returns the Redactor for one run. env is the run's complete
// child environment as "KEY=value" entries (inherited variables,
// Options.Env, the backend's own, Request.Env; every entry counts, not only
// the last of a name), read when the run starts, so a variable set after an
// earlier run is known.
//
// Runs with the same credentials share one Redactor (see redactors): the
// variables' values are read from env on every call, the automaton over
// them is built once.
func NewRedactor(env []string) *Redactor {
	var vals []string
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !secretName(k) {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) < minSecretLen || strings.IndexByte(v, 0) >= 0 || commonValues[strings.ToLower(v)] {
			continue
		}
		vals = append(vals, v)
	}
	// The values hold no NUL byte (above), so joined with it they are a
	// key that tells every list apart.
	key := strings.Join(vals, "\x00")
	redactors.Lock()
	defer redactors.Unlock()
	if r, ok := redactors.m[key]; ok {
		return r
	}
	if len(redactors.m) >= maxRedactors || redactors.m == nil {
		redactors.m = map[string]*Redactor{}
	}
	r := newRedactor(vals)
	redactors.m[key] = r
	return r
}

// redactors caches the Redactors NewRedactor built, by the credential
// values they find. Every run of a program usually inherits the same API
// keys, and building the automaton over their escaped forms costs tens of
// microseconds (and a table of about 100 KB) per run, before the CLI can
// start. The cache holds at most maxRedactors entries; it is emptied when
// full, so a program that varies its credentials from run to run pays the
// build, as before, and no more memory.
var redactors struct {
	sync.Mutex
	m map[string]*Redactor
}

const maxRedactors = 16

// newRedactor builds the Redactor of the credential values vals.
func newRedactor(vals []string) *Redactor {
	var secrets []string
	seen := map[string]bool{}
	add := func(v string) {
		if len(v) >= minSecretLen && !seen[v] {
			seen[v] = true
			secrets = append(secrets, v)
		}
	}
	for _, v := range vals {
		add(v)
		// As it appears inside a JSON string (JavaScript does not
		// escape <, > and &; Go does) and in a URL.
		add(jsonEscaped(v, false))
		add(jsonEscaped(v, true))
		add(url.QueryEscape(v))
		add(url.PathEscape(v))
	}
	r := &Redactor{secrets: secrets}
	var short []string
	for _, v := range secrets {
		if len(v) <= maxMatcherLen {
			short = append(short, v)
		} else {
			r.long = append(r.long, v)
		}
	}
	r.lits = newMatcher(short)
	return r
}

// jsonEscaped returns v as it appears between the quotes of a JSON string,
// with <, > and & escaped or not.
func jsonEscaped(v string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if enc.Encode(v) != nil {
		return ""
	}
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}

// secretName reports whether an environment variable's name looks like a
// credential holder's.
func secretName(k string) bool {
	k = strings.ToUpper(k)
	for _, p := range secretNameParts {
		if strings.Contains(k, p) {
			return true
		}
	}
	return false
}

// span is a byte range [start, end) of a text.
type span struct{ start, end int }

// Redact replaces every credential in s with "[REDACTED]".
func (r *Redactor) Redact(s string) string {
	if s == "" {
		return s
	}
	lists := make([][]span, 0, len(secretPatterns)+4)
	if r != nil {
		if l := r.lits.find(s); len(l) > 0 {
			lists = append(lists, l)
		}
		for _, v := range r.long {
			if l := occurrences(v, s); len(l) > 0 {
				lists = append(lists, l)
			}
		}
	}
	low := asciiLower(s)
	for _, p := range secretPatterns {
		text := s
		if p.fold {
			text = low
		}
		var l []span
		reach := 0 // end of the last span: text before it is covered
		for _, m := range p.re.FindAllStringSubmatchIndex(text, -1) {
			a, b := m[2*p.group], m[2*p.group+1]
			if a < 0 || b <= a || b <= reach || p.keep != nil && !p.keep(s[a:b]) ||
				p.boundary && m[0] > 0 && isAlnum(s[m[0]-1]) {
				continue
			}
			if p.word {
				// Each byte is looked at once: backwards never past
				// reach, forwards into text no later match can cover.
				for a > reach && isWordByte(s[a-1]) {
					a--
				}
				for b < len(s) && isWordByte(s[b]) {
					b++
				}
			}
			a = max(a, reach)
			l = append(l, span{a, b})
			reach = b
		}
		if len(l) > 0 {
			lists = append(lists, l)
		}
	}
	if l := credentialAssignments(s, low); len(l) > 0 {
		lists = append(lists, l)
	}
	if l := privateKeys(s); len(l) > 0 {
		lists = append(lists, l)
	}
	spans := union(lists)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp.start])
		b.WriteString(redacted)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// union merges lists of spans, each sorted and disjoint, into one sorted
// list of disjoint spans; overlapping or touching spans become one. It
// takes time linear in the number of spans (for a fixed number of lists).
func union(lists [][]span) []span {
	var out []span
	for {
		best := -1
		for i, l := range lists {
			if len(l) > 0 && (best < 0 || l[0].start < lists[best][0].start) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		sp := lists[best][0]
		lists[best] = lists[best][1:]
		if n := len(out); n > 0 && sp.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, sp.end)
			continue
		}
		out = append(out, sp)
	}
}

// Tail returns at most n characters (runes) from the end of s, with
// secrets redacted and surrounding white space trimmed. s is redacted as a
// whole before it is cut, so no secret is cut in two; when the cut falls
// inside a word (a run of token characters, which a redaction marker or a
// credential is), the rest of that word is dropped too.
func (r *Redactor) Tail(s string, n int) string {
	return r.tail(s, n, false)
}

// TruncatedTail is Tail for a text whose beginning is already gone, such as
// a bounded stderr buffer that dropped all but its last bytes: a secret the
// earlier cut went through has lost its recognisable start. So once the
// text is redacted, its leading run of token characters is dropped, and so
// is a leading piece of at least 3 bytes that ends one of the environment's
// secret values; then it is cut as Tail does.
func (r *Redactor) TruncatedTail(s string, n int) string {
	return r.tail(s, n, true)
}

// tailMargin is how much text before the last n characters Tail looks at:
// enough for any credential to be recognised whole.
const tailMargin = 16 << 10

func (r *Redactor) tail(s string, n int, truncated bool) string {
	if n <= 0 {
		return ""
	}
	// Only the end of s can show: redact a window that holds the last n
	// runes (at most 4n bytes) plus a margin longer than any credential,
	// so that the work does not grow with s.
	if keep := 4*n + tailMargin + r.longestSecret(); len(s) > keep {
		s, truncated = s[len(s)-keep:], true
	}
	s = r.Redact(s)
	if truncated {
		s = dropLeadingFragment(s, r.secretsOrNil())
	}
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := len(s)
	for i := 0; i < n; i++ {
		_, size := utf8.DecodeLastRuneInString(s[:cut])
		cut -= size
	}
	out := s[cut:]
	if cut > 0 && isTokenByte(s[cut-1]) {
		out = strings.TrimLeftFunc(out, isTokenRune)
	}
	return strings.TrimLeftFunc(out, unicode.IsSpace)
}

func (r *Redactor) longestSecret() int {
	if r == nil {
		return 0
	}
	m := 0
	for _, v := range r.secrets {
		m = max(m, len(v))
	}
	return m
}

func (r *Redactor) secretsOrNil() []string {
	if r == nil {
		return nil
	}
	return r.secrets
}

// isTokenRune reports characters that credentials are made of (base64,
// base64url, hex, JWT dots), and that the redaction marker ends with.
func isTokenRune(c rune) bool {
	return c < utf8.RuneSelf && isTokenByte(byte(c))
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '+' || c == '/' || c == '=' || c == '~' || c == ']'
}

// dropLeadingFragment removes from the start of s what may be the end of a
// secret whose beginning was cut off: the longest piece (at least
// minFragmentLen bytes) that ends one of secrets, and the leading run of
// token characters.
func dropLeadingFragment(s string, secrets []string) string {
	drop := 0
	for _, v := range secrets {
		if k := overlap(v, s); k >= minFragmentLen {
			drop = max(drop, k)
		}
	}
	s = s[drop:]
	return strings.TrimLeftFunc(s, isTokenRune)
}

// overlap returns the length of the longest prefix of s that is a suffix of
// v, in time linear in len(v) (Knuth-Morris-Pratt).
func overlap(v, s string) int {
	p := s[:min(len(s), len(v))]
	if p == "" {
		return 0
	}
	fail := prefixFunction(p)
	k := 0
	for i := 0; i < len(v); i++ {
		for k > 0 && (k == len(p) || v[i] != p[k]) {
			k = fail[k-1]
		}
		if k < len(p) && v[i] == p[k] {
			k++
		}
	}
	return k
}

// prefixFunction returns the Knuth-Morris-Pratt failure function of p.
func prefixFunction(p string) []int {
	fail := make([]int, len(p))
	for i, k := 1, 0; i < len(p); i++ {
		for k > 0 && p[i] != p[k] {
			k = fail[k-1]
		}
		if p[i] == p[k] {
			k++
		}
		fail[i] = k
	}
	return fail
}

// occurrences returns the spans of s covered by occurrences of v
// (overlapping ones included), sorted and disjoint, in time linear in
// len(s)+len(v).
func occurrences(v, s string) []span {
	if v == "" || len(v) > len(s) {
		return nil
	}
	fail := prefixFunction(v)
	var out []span
	for i, k := 0, 0; i < len(s); i++ {
		for k > 0 && (k == len(v) || s[i] != v[k]) {
			k = fail[k-1]
		}
		if s[i] == v[k] {
			k++
		}
		if k == len(v) {
			sp := span{i + 1 - len(v), i + 1}
			if n := len(out); n > 0 && out[n-1].end >= sp.start {
				out[n-1].end = sp.end
			} else {
				out = append(out, sp)
			}
		}
	}
	return out
}

// Error redacts, in place, every string field that can carry CLI output in
// the agentcli errors found in err's tree (ExitError, ResultError and its
// Result, NoResultError, TimeoutError, ParseError, BinaryError,
// ProtocolError), and returns
// err; when err's message still holds a secret (an error type it does not
// know, wrapping CLI output), it returns an error with the redacted message
// that wraps err, so errors.Is and errors.As still see everything. nil
// gives nil.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	// A field is written only when it holds a secret: an error a live
	// session keeps (Session.Err) may be read by other goroutines, and is
	// redacted before it is kept.
	set := r.setter()
	var ee *agentcli.ExitError
	if errors.As(err, &ee) {
		set(&ee.Stderr, &ee.Hint)
	}
	var re *agentcli.ResultError
	if errors.As(err, &re) {
		set(&re.Subtype, &re.TerminalReason, &re.Message)
		r.Result(re.Result)
	}
	var ne *agentcli.NoResultError
	if errors.As(err, &ne) {
		set(&ne.Stderr)
	}
	var te *agentcli.TimeoutError
	if errors.As(err, &te) {
		set(&te.Stderr)
	}
	var pe *agentcli.ParseError
	if errors.As(err, &pe) {
		if red := r.Redact(string(pe.Line)); red != string(pe.Line) {
			pe.Line = []byte(red)
		}
	}
	var be *agentcli.BinaryError
	if errors.As(err, &be) {
		set(&be.Path, &be.Hint)
	}
	var pre *agentcli.ProtocolError
	if errors.As(err, &pre) {
		set(&pre.Method, &pre.Message)
	}
	msg := err.Error()
	if red := r.Redact(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

// setter returns a function that redacts strings in place, writing only
// those that change.
func (r *Redactor) setter() func(ps ...*string) {
	return func(ps ...*string) {
		for _, p := range ps {
			if red := r.Redact(*p); red != *p {
				*p = red
			}
		}
	}
}

// redactedError is an error whose message had secrets redacted.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Exit returns e with its stderr tail redacted, as the wire log records
// it.
func (r *Redactor) Exit(e Exit) Exit {
	e.Stderr = r.Redact(e.Stderr)
	return e
}

// Result redacts, in place, the fields of res that carry CLI output rather
// than the model's answer: Stderr, Subtype, TerminalReason, StopReason and
// Raw (the terminal event). res may be nil.
func (r *Redactor) Result(res *agentcli.Result) {
	if res == nil {
		return
	}
	r.setter()(&res.Stderr, &res.Subtype, &res.TerminalReason, &res.StopReason)
	if len(res.Raw) > 0 {
		if red := r.Redact(string(res.Raw)); red != string(res.Raw) {
			res.Raw = json.RawMessage(red)
		}
	}
}

// Event redacts, in place, what an event carries of the CLI's own output
// rather than the model's: a notice's Text, Err and Raw, a retry's Message
// and Raw, and a result event's Result (see Result) and Raw. Text, thinking
// and tool events are the model's and its tools' and are left alone.
func (r *Redactor) Event(ev *agentcli.Event) {
	switch ev.Kind {
	case agentcli.EventNotice:
		ev.Text = r.Redact(ev.Text)
		ev.Err = r.Error(ev.Err)
	case agentcli.EventRetry:
		if ev.Retry != nil {
			ev.Retry.Message = r.Redact(ev.Retry.Message)
		}
	case agentcli.EventResult:
		r.Result(ev.Result)
	default:
		return
	}
	if len(ev.Raw) > 0 {
		if red := r.Redact(string(ev.Raw)); red != string(ev.Raw) {
			ev.Raw = json.RawMessage(red)
		}
	}
}

// Logger returns a logger that writes to l's handler with every secret
// redacted from the message and from every attribute (strings, errors, and
// the printed form of any other value). l nil means a logger that writes
// nothing.
func (r *Redactor) Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(&redactHandler{h: l.Handler(), r: r})
}

type redactHandler struct {
	h slog.Handler
	r *Redactor
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.r.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.r.attr(a)
	}
	return &redactHandler{h: h.h.WithAttrs(red), r: h.r}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{h: h.h.WithGroup(name), r: h.r}
}

func (r *Redactor) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, x := range g {
			red[i] = r.attr(x)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		var s string
		if err, ok := v.Any().(error); ok {
			s = err.Error()
		} else {
			s = fmt.Sprint(v.Any())
		}
		if red := r.Redact(s); red != s {
			return slog.String(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// envRedactor caches the Redactor of this process's environment for the
// package-level Redact.
var envRedactor struct {
	sync.Mutex
	env []string
	r   *Redactor
}

// ProcessRedactor returns the Redactor for this process's environment as it
// is now (os.Environ, read on every call; the Redactor is rebuilt only when
// the environment changed).
func ProcessRedactor() *Redactor {
	env := os.Environ()
	envRedactor.Lock()
	defer envRedactor.Unlock()
	if envRedactor.r == nil || !slices.Equal(env, envRedactor.env) {
		envRedactor.env, envRedactor.r = env, NewRedactor(env)
	}
	return envRedactor.r
}

// Redact replaces credentials in s with "[REDACTED]": the well-known
// formats and the values of this process's credential-looking environment
// variables (see Redactor). Prefer a run's own Redactor, which also knows
// Options.Env and Request.Env.
func Redact(s string) string { return ProcessRedactor().Redact(s) }

// matcher finds occurrences of a set of strings (Aho-Corasick), as a
// deterministic automaton over byte classes: one table lookup per byte of
// text.
type matcher struct {
	class  [256]uint8 // byte → class; 0 for bytes in no pattern
	nclass int
	delta  []int32 // state*nclass + class → next state
	// out is the length of the longest pattern that ends at the state
	// (its own, or one reached through failure links); 0 for none.
	out []int32
}

func newMatcher(pats []string) *matcher {
	if len(pats) == 0 {
		return nil
	}
	m := &matcher{nclass: 1}
	for _, p := range pats {
		for i := 0; i < len(p); i++ {
			if m.class[p[i]] == 0 {
				m.class[p[i]] = uint8(m.nclass)
				m.nclass++
			}
		}
	}
	// The trie; -1 is "no edge".
	row := func() []int32 {
		r := make([]int32, m.nclass)
		for i := range r {
			r[i] = -1
		}
		return r
	}
	trie := [][]int32{row()}
	m.out = []int32{0}
	for _, p := range pats {
		st := int32(0)
		for i := 0; i < len(p); i++ {
			c := m.class[p[i]]
			if trie[st][c] < 0 {
				trie[st][c] = int32(len(trie))
				trie = append(trie, row())
				m.out = append(m.out, 0)
			}
			st = trie[st][c]
		}
		m.out[st] = max(m.out[st], int32(len(p)))
	}
	// Breadth first: each missing edge goes where the failure link's
	// does, so the table is complete; out is inherited along failure links.
	m.delta = make([]int32, len(trie)*m.nclass)
	fail := make([]int32, len(trie))
	queue := make([]int32, 0, len(trie))
	for c := 0; c < m.nclass; c++ {
		if nx := trie[0][c]; nx >= 0 {
			m.delta[c] = nx
			queue = append(queue, nx)
		}
	}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		m.out[st] = max(m.out[st], m.out[fail[st]])
		for c := 0; c < m.nclass; c++ {
			if nx := trie[st][c]; nx >= 0 {
				fail[nx] = m.delta[int(fail[st])*m.nclass+c]
				m.delta[int(st)*m.nclass+c] = nx
				queue = append(queue, nx)
			} else {
				m.delta[int(st)*m.nclass+c] = m.delta[int(fail[st])*m.nclass+c]
			}
		}
	}
	return m
}

// find returns the spans of s covered by occurrences of the patterns,
// sorted and disjoint.
func (m *matcher) find(s string) []span {
	if m == nil {
		return nil
	}
	var out []span
	st := int32(0)
	for i := 0; i < len(s); i++ {
		st = m.delta[int(st)*m.nclass+int(m.class[s[i]])]
		if l := int(m.out[st]); l > 0 {
			sp := span{i + 1 - l, i + 1}
			// Spans arrive by end; merge those the new one reaches.
			for len(out) > 0 && out[len(out)-1].end >= sp.start {
				sp.start = min(sp.start, out[len(out)-1].start)
				out = out[:len(out)-1]
			}
			out = append(out, sp)
		}
	}
	return out
}
