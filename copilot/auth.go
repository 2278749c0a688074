package copilot

import (
	"path/filepath"
	"runtime"

	"github.com/agentcli/agentcli/driver"
)

// credentialVars are the variables that carry copilot's credentials: a
// GitHub token (in copilot's order of precedence) or a model provider's
// key (bring your own key).
var credentialVars = []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN",
	"COPILOT_PROVIDER_API_KEY", "COPILOT_PROVIDER_BEARER_TOKEN", "COPILOT_PROVIDER_API_KEY_COMMAND"}

// hasCredentials reports whether copilot has a way to reach a model in r:
// one of credentialVars, a provider's base URL (COPILOT_PROVIDER_BASE_URL:
// a local server may need no key), the login `copilot login` records in
// COPILOT_HOME's config.json (~/.copilot by default; the token itself may
// be in the system keychain), or the GitHub CLI's login (hosts.yml under
// GH_CONFIG_DIR or ~/.config/gh), whose token copilot asks `gh auth token`
// for. On macOS the keychain cannot be checked without starting a process
// and is assumed.
func hasCredentials(r *driver.Run) bool {
	if r.AnySet(credentialVars...) || r.AnySet("COPILOT_PROVIDER_BASE_URL") || runtime.GOOS == "darwin" {
		return true
	}
	home := r.Lookup("COPILOT_HOME")
	if !filepath.IsAbs(home) {
		home = filepath.Join(r.Home(), ".copilot")
	}
	if driver.FileMentions(filepath.Join(home, "config.json"), "lastLoggedInUser", "loggedInUsers", "logged_in_users", `"providers"`) {
		return true
	}
	gh := r.Lookup("GH_CONFIG_DIR")
	if !filepath.IsAbs(gh) {
		gh = filepath.Join(r.XDG("XDG_CONFIG_HOME", ".config"), "gh")
	}
	return driver.FileMentions(filepath.Join(gh, "hosts.yml"), "oauth_token", "user:")
}
