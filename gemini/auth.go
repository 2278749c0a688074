package gemini

import (
	"path/filepath"

	"github.com/agentcli/agentcli/driver"
)

// credentialVars are the variables that carry gemini's credentials.
var credentialVars = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_GENAI_USE_VERTEXAI"}

// hasCredentials reports whether gemini has a way to authenticate in r: a
// key or auth-switch variable, a base URL (a local server), Cloud Shell,
// the OAuth credentials a login leaves (oauth_creds.json), an auth method
// chosen in a settings file (user, workspace or system;
// security.auth.selectedType, or the older selectedAuthType), or a .env
// file gemini reads that sets a key (the first .gemini/.env or .env from
// the working directory up, then the home directory's).
func hasCredentials(r *driver.Run) bool {
	if r.AnySet(credentialVars...) || r.AnySet("GOOGLE_GENAI_USE_GCA", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT") || r.Lookup("CLOUD_SHELL") == "true" {
		return true
	}
	home := r.Lookup("GEMINI_CLI_HOME")
	if home == "" {
		home = r.Home()
	}
	dir := filepath.Join(home, ".gemini")
	if driver.FileExists(filepath.Join(dir, "oauth_creds.json")) {
		return true
	}
	settings := []string{filepath.Join(dir, "settings.json"), filepath.Join(r.Dir, ".gemini", "settings.json"), "/etc/gemini-cli/settings.json"}
	if p := r.Lookup("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
		settings = append(settings, p)
	}
	for _, f := range settings {
		if driver.FileMentions(f, "selectedType", "selectedAuthType") {
			return true
		}
	}
	var envs []string
	for _, d := range driver.UpFrom(r.Dir) {
		envs = append(envs, filepath.Join(d, ".gemini", ".env"), filepath.Join(d, ".env"))
	}
	envs = append(envs, filepath.Join(dir, ".env"), filepath.Join(r.Home(), ".env"))
	for _, f := range envs {
		if driver.FileMentions(f, "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT") {
			return true
		}
	}
	return false
}
