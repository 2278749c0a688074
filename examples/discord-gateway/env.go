package main

import (
	"slices"
	"strings"
)

// The agent's CLI runs shell commands for anyone allowed in a channel and
// reads untrusted text, so its environment is an allow-list: what a CLI
// needs to run and reach its model, never the gateway's whole environment
// (DISCORD_TOKEN above all).

// baseEnv are the variables every CLI gets when the gateway has them: where
// to find programs and its home, the user and locale, temporary and XDG
// directories (where the CLIs keep their logins), and the network settings
// of the host (proxies, extra certificate authorities).
var baseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "NO_COLOR",
}

// basePrefixes are prefixes of variables every CLI gets (the locale).
var basePrefixes = []string{"LC_"}

// backendEnv are the prefixes of each backend's own variables: its
// credentials, base URLs and settings (and, for opencode, those of the
// model providers it can use).
var backendEnv = map[string][]string{
	"claude": {"ANTHROPIC_", "CLAUDE_", "DISABLE_", "AWS_", "VERTEX_", "CLOUD_ML_REGION", "IS_SANDBOX"},
	"codex":  {"OPENAI_", "CODEX_", "AZURE_OPENAI_"},
	"gemini": {"GEMINI_", "GOOGLE_"},
	"opencode": {"OPENCODE_", "ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "OPENROUTER_", "GROQ_",
		"MISTRAL_", "DEEPSEEK_", "XAI_", "TOGETHER_", "AZURE_", "AWS_"},
}

// childEnv returns the environment of the backend's CLI: from environ (the
// gateway's, as "K=V"), the variables of baseEnv and of the backend's
// prefixes, then the operator's additions (see addedEnv). A variable whose
// name starts with DISCORD_ or NATS_ is never passed, whatever the lists
// say.
func childEnv(environ []string, backend string, additions []string) []string {
	prefixes := slices.Concat(basePrefixes, backendEnv[backend])
	pass := func(name string) bool {
		if slices.Contains(baseEnv, name) {
			return true
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	var out, rest []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok || name == "" || secretOfTheBot(name):
		case pass(name):
			out = append(out, kv)
		default:
			rest = append(rest, kv)
		}
	}
	return append(out, addedEnv(rest, additions)...)
}

// addedEnv returns the operator's additions (AGENT_ENV) as "K=V": NAME
// passes NAME from environ when it is set there, NAME=value sets it. Names
// starting with DISCORD_ or NATS_ are dropped.
func addedEnv(environ, additions []string) []string {
	lookup := lookupIn(environ)
	var out []string
	for _, a := range additions {
		name, _, set := strings.Cut(a, "=")
		if secretOfTheBot(name) {
			continue
		}
		if set {
			out = append(out, a)
		} else if v, ok := lookup(name); ok {
			out = append(out, name+"="+v)
		}
	}
	return out
}

// secretOfTheBot reports a variable of the gateway's own (DISCORD_TOKEN
// and the other DISCORD_ settings, and NATS_URL and NATS_CREDS: whoever
// reaches the pool can submit runs and answer permission requests).
func secretOfTheBot(name string) bool {
	u := strings.ToUpper(name)
	return strings.HasPrefix(u, "DISCORD_") || strings.HasPrefix(u, "NATS_")
}

// lookupIn returns a lookup function over environ ("K=V"; the last entry
// of a name wins).
func lookupIn(environ []string) func(string) (string, bool) {
	m := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}
