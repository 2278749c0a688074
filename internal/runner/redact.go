package runner

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// secretPatterns match credentials that CLIs tend to echo in error messages.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{8,}`),                 // Anthropic
	regexp.MustCompile(`sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{16,}`), // OpenAI
	regexp.MustCompile(`AIza[0-9A-Za-z_\-]{30,}`),                   // Google API keys
	regexp.MustCompile(`ya29\.[0-9A-Za-z_\-]{20,}`),                 // Google OAuth tokens
	regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{20,}`),                // GitHub tokens
	regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._\-~+/]{8,}=*`),   // Authorization headers
	regexp.MustCompile(`(?i)((?:api[_-]?key|x-api-key|x-goog-api-key|token|secret|password)["']?\s*[:=]\s*["']?)[^\s"',;]{6,}`),
}

var (
	envSecretsOnce sync.Once
	envSecrets     []string
)

// sensitiveEnvValues returns the values of this process's environment
// variables whose names look like credentials, so they can be scrubbed even
// when they match no known pattern.
func sensitiveEnvValues() []string {
	envSecretsOnce.Do(func() {
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			ku := strings.ToUpper(k)
			if len(v) >= 8 && (strings.Contains(ku, "KEY") || strings.Contains(ku, "TOKEN") ||
				strings.Contains(ku, "SECRET") || strings.Contains(ku, "PASSWORD")) {
				envSecrets = append(envSecrets, v)
			}
		}
	})
	return envSecrets
}

// Redact replaces credentials in s with "[REDACTED]".
func Redact(s string) string {
	for _, v := range sensitiveEnvValues() {
		s = strings.ReplaceAll(s, v, "[REDACTED]")
	}
	for i, re := range secretPatterns {
		if i >= 5 { // patterns with a kept prefix group
			s = re.ReplaceAllString(s, "${1}[REDACTED]")
		} else {
			s = re.ReplaceAllString(s, "[REDACTED]")
		}
	}
	return s
}
