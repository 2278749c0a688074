package opencode

import (
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli/driver"
)

// credentialVars are the variables that carry opencode's credentials.
var credentialVars = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY", "OPENROUTER_API_KEY", "OPENCODE_API_KEY"}

// hasCredentials reports whether opencode has a way to reach a model in
// r: a provider's key in the environment (any *_API_KEY, or a cloud
// provider's credentials), the auth.json `opencode auth login` writes
// (XDG_DATA_HOME/opencode), a configuration that declares providers or a
// model (OPENCODE_CONFIG_CONTENT, OPENCODE_CONFIG, the user's config, a
// project's opencode.json or .opencode/ from the working directory up), a
// .env file in the working directory (opencode reads it) that sets a key,
// or a model of OpenCode Zen named in Request.Model ("opencode/..."), whose
// free models answer without a key. Without any of these opencode would
// pick a free Zen model the caller never chose and, offline, retry until
// the timeout.
func hasCredentials(r *driver.Run) bool {
	if strings.HasPrefix(r.Req.Model, "opencode/") {
		return true
	}
	if r.AnySetMatching("_API_KEY", "_API_TOKEN", "_AUTH_TOKEN", "_ACCESS_KEY_ID") ||
		r.AnySet("OPENCODE_CONFIG_CONTENT", "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT") {
		return true
	}
	if driver.FileMentions(filepath.Join(r.XDG("XDG_DATA_HOME", filepath.Join(".local", "share")), "opencode", "auth.json"), `"type"`) {
		return true
	}
	cfg := filepath.Join(r.XDG("XDG_CONFIG_HOME", ".config"), "opencode")
	files := []string{filepath.Join(cfg, "opencode.json"), filepath.Join(cfg, "opencode.jsonc"), filepath.Join(cfg, "config.json")}
	for _, d := range driver.UpFrom(r.Dir) {
		files = append(files, filepath.Join(d, "opencode.json"), filepath.Join(d, "opencode.jsonc"),
			filepath.Join(d, ".opencode", "opencode.json"), filepath.Join(d, ".opencode", "opencode.jsonc"))
	}
	for _, f := range files {
		if driver.FileMentions(f, `"provider"`, `"model"`) {
			return true
		}
	}
	for _, f := range []string{".env", ".env.local", ".env.production", ".env.development"} {
		if driver.FileMentions(filepath.Join(r.Dir, f), "_API_KEY", "_API_TOKEN", "_AUTH_TOKEN", "AWS_") {
			return true
		}
	}
	return false
}
