package codex

import (
	"os"
	"path/filepath"

	"github.com/agentcli/agentcli/driver"
)

// credentialVars are the variables that carry codex's credentials.
var credentialVars = []string{"OPENAI_API_KEY", "CODEX_API_KEY"}

// hasCredentials reports whether codex has a way to authenticate in r: an
// API key variable, a base URL (a proxy or local server), the auth.json
// that `codex login` writes in CODEX_HOME, or a config.toml (the user's,
// a profile's or the system's) that picks another model provider (a local
// one, or a custom provider with its own key) or keeps the login in the
// keyring. A CODEX_HOME that does not exist is left to codex, which
// refuses it at once. Without any of these codex exec retries its
// connection until the timeout.
func hasCredentials(r *driver.Run) bool {
	if r.AnySet(credentialVars...) || r.AnySet("CODEX_ACCESS_TOKEN", "OPENAI_BASE_URL") {
		return true
	}
	home, err := codexHome(r.Env, r.Dir)
	if err != nil {
		return true
	}
	if r.Lookup("CODEX_HOME") != "" {
		if _, err := os.Stat(home); err != nil {
			return true // codex reports it itself, at once
		}
	}
	if driver.FileExists(filepath.Join(home, "auth.json")) {
		return true
	}
	configs, _ := filepath.Glob(filepath.Join(home, "*config.toml"))
	configs = append(configs, "/etc/codex/config.toml", "/etc/codex/managed_config.toml")
	for _, f := range configs {
		if driver.FileMentions(f, "model_provider", "cli_auth_credentials_store", "oss_provider") {
			return true
		}
	}
	return false
}
