package qwen

import (
	"path/filepath"

	"github.com/agentcli/agentcli/driver"
)

// credentialVars are the variables that carry qwen's credentials: an
// OpenAI-compatible key (qwen's default auth type, which DashScope,
// OpenRouter, ModelScope and local servers speak), and the keys of its
// Anthropic, Gemini and Vertex auth types.
var credentialVars = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT"}

// qwenDir returns qwen's configuration directory: QWEN_HOME, or ~/.qwen.
func qwenDir(r *driver.Run) string {
	if d := r.Lookup("QWEN_HOME"); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(r.Home(), ".qwen")
}

// hasCredentials reports whether qwen has a way to authenticate in r: a
// credential variable, a base URL of an OpenAI-compatible or Anthropic
// server, or a settings or .env file qwen reads (user, project, system)
// that holds a key, names the variable of one (envKey), declares model
// providers or picks an auth type. Qwen's own OAuth login ended in
// April 2026 and is not counted.
func hasCredentials(r *driver.Run) bool {
	if r.AnySet(credentialVars...) || r.AnySet("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI") {
		return true
	}
	dir := qwenDir(r)
	settings := []string{
		filepath.Join(dir, "settings.json"),
		filepath.Join(r.Dir, ".qwen", "settings.json"),
		"/etc/qwen-code/settings.json",
	}
	if p := r.Lookup("QWEN_CODE_SYSTEM_SETTINGS_PATH"); p != "" {
		settings = append(settings, p)
	}
	for _, f := range settings {
		if driver.FileMentions(f, `"apiKey"`, `"envKey"`, `"modelProviders"`, `"selectedType"`, "_API_KEY", "_BASE_URL") {
			return true
		}
	}
	// qwen loads the first .env it finds: .qwen/.env or .env from the
	// working directory up, then in the home directory.
	var envs []string
	for _, d := range append(driver.UpFrom(r.Dir), r.Home()) {
		envs = append(envs, filepath.Join(d, ".qwen", ".env"), filepath.Join(d, ".env"))
	}
	for _, f := range envs {
		if driver.FileMentions(f, "_API_KEY", "_BASE_URL") {
			return true
		}
	}
	return false
}
