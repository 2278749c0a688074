package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
)

// maxMCPName bounds an MCPServer.Name.
const maxMCPName = 64

// checkSettings validates the orchestration settings of req (MCP servers,
// output schema, effort, fallback model, budget) the same way for every
// backend: each problem is an *agentcli.RequestError naming the field.
// Whether the backend supports a setting is decided elsewhere
// (unsupported).
func checkSettings(backend string, req *agentcli.Request) error {
	bad := func(field, format string, args ...any) error {
		return &agentcli.RequestError{Backend: backend, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	seen := map[string]bool{}
	for i, s := range req.MCPServers {
		f := fmt.Sprintf("MCPServers[%d]", i)
		if !IsMCPName(s.Name) {
			return bad(f+".Name", "%q is not 1 to %d ASCII letters, digits, '_' and '-' starting with a letter or digit", s.Name, maxMCPName)
		}
		if k := strings.ToLower(s.Name); seen[k] {
			return bad(f+".Name", "%q is used by another server", s.Name)
		} else {
			seen[k] = true
		}
		if field, reason := checkMCPServer(s); reason != "" {
			return bad(f+field, "%s", reason)
		}
	}
	if len(req.OutputSchema) > 0 {
		var v any
		d := json.NewDecoder(bytes.NewReader(req.OutputSchema))
		if err := d.Decode(&v); err != nil {
			return bad("OutputSchema", "not JSON: %v", err)
		}
		if _, ok := v.(map[string]any); !ok || d.More() {
			return bad("OutputSchema", "not a JSON object")
		}
	}
	if e := req.Effort; e != "" && !slices.Contains(agentcli.Efforts(), e) {
		return bad("Effort", "unknown level %q (want one of %v)", e, agentcli.Efforts())
	}
	if m := req.FallbackModel; m != "" {
		switch {
		case strings.IndexByte(m, 0) >= 0:
			return bad("FallbackModel", "contains a NUL byte")
		case strings.ContainsAny(m, ", \t\r\n"):
			return bad("FallbackModel", "%q is not one model name", m)
		}
	}
	if b := req.MaxBudgetUSD; b < 0 || math.IsNaN(b) || math.IsInf(b, 0) {
		return bad("MaxBudgetUSD", "%v is not a non-negative amount", b)
	}
	return nil
}

// checkMCPServer checks the transport of MCP server s (its Name is
// checked already) and returns the field, as a suffix of MCPServers[i],
// and the reason of its first problem, or "", "".
func checkMCPServer(s agentcli.MCPServer) (field, reason string) {
	switch {
	case s.Command == "" && s.URL == "":
		return "", "neither Command nor URL is set"
	case s.Command != "" && s.URL != "":
		return "", "both Command and URL are set"
	}
	if s.Command != "" {
		if strings.IndexByte(s.Command, 0) >= 0 {
			return ".Command", "contains a NUL byte"
		}
		if len(s.Headers) > 0 {
			return ".Headers", "set for a stdio server (Command); headers belong to an HTTP server (URL)"
		}
	} else {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(s.URL, "\x00\r\n\t ") {
			return ".URL", "not an absolute http or https URL"
		}
		if len(s.Args) > 0 || len(s.Env) > 0 {
			return "", "Args or Env set for an HTTP server (URL); they belong to a stdio server (Command)"
		}
	}
	for j, a := range s.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Sprintf(".Args[%d]", j), "contains a NUL byte"
		}
	}
	for j, kv := range s.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !isEnvName(k) {
			return fmt.Sprintf(".Env[%d]", j), "not of the form KEY=value with KEY a letter or '_' followed by letters, digits and '_'"
		}
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Sprintf(".Env[%d]", j), "contains a NUL byte"
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		if !isToken(k) {
			return ".Headers", fmt.Sprintf("%q is not an HTTP header name", k)
		}
		if strings.ContainsAny(s.Headers[k], "\x00\r\n") {
			return ".Headers", fmt.Sprintf("the value of %s contains a NUL, CR or LF", k)
		}
	}
	return "", ""
}

// IsMCPName reports whether name is a valid MCPServer.Name.
func IsMCPName(name string) bool {
	if name == "" || len(name) > maxMCPName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// isEnvName reports whether k is a portable environment variable name.
func isEnvName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// isToken reports whether s is an HTTP token (RFC 9110), the syntax of a
// header name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// structured completes a successful result of a run with an output schema:
// when the CLI reported no structured value, the final answer must be one.
// It reports false for an answer that is not JSON.
func structured(res *agentcli.Result) bool {
	if res.StructuredOutput != nil {
		return true
	}
	text := strings.TrimSpace(res.Text)
	if text != "" && json.Valid([]byte(text)) {
		res.StructuredOutput = json.RawMessage(text)
		return true
	}
	return false
}

// DollarVar is the environment variable through which a backend spells a
// literal "$" in a configuration file whose CLI expands "${NAME}" (and
// similar) references in values: each "$" of the caller's text is written
// as "${DollarVar}", and DollarEnv is added to the CLI's environment, so
// that the expansion yields the "$" itself.
const DollarVar = "AGENTCLI_DOLLAR"

// DollarEnv is the environment entry that goes with DollarVar.
const DollarEnv = DollarVar + "=$"

// MCPEnv returns a stdio server's Env as a map (the last entry of a key
// wins, as with os/exec).
func MCPEnv(s agentcli.MCPServer) map[string]string {
	if len(s.Env) == 0 {
		return nil
	}
	m := make(map[string]string, len(s.Env))
	for _, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// MCPSecrets returns the values of req's MCP servers that may hold
// credentials (Env values and Headers values), for tests and redaction.
func MCPSecrets(req *agentcli.Request) []string {
	var out []string
	for _, s := range req.MCPServers {
		for _, v := range MCPEnv(s) {
			out = append(out, v)
		}
		for _, v := range s.Headers {
			out = append(out, v)
		}
	}
	return out
}

// MCPNames returns the names of req's MCP servers, in order.
func MCPNames(req *agentcli.Request) []string {
	var out []string
	for _, s := range req.MCPServers {
		out = append(out, s.Name)
	}
	return out
}

// redactEnv returns env followed by entries that make a Redactor treat
// req's MCP credentials as secrets: the servers' Env entries as they are,
// and each header as a variable named after it (Authorization and
// Proxy-Authorization count as tokens, with and without their scheme).
// None of it reaches the CLI's environment.
func redactEnv(env []string, req *agentcli.Request) []string {
	if len(req.MCPServers) == 0 {
		return env
	}
	out := slices.Clip(env)
	for _, s := range req.MCPServers {
		out = append(out, s.Env...)
		for k, v := range s.Headers {
			name := strings.ToUpper(strings.ReplaceAll(k, "-", "_"))
			if strings.HasSuffix(name, "AUTHORIZATION") {
				name += "_TOKEN"
				// "Bearer TOKEN", "Basic CREDENTIALS": the
				// credential alone is a secret too.
				if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
					out = append(out, name+"_CREDENTIAL="+strings.TrimSpace(cred))
				}
			}
			out = append(out, name+"="+v)
		}
	}
	return out
}
