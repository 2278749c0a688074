package claude

import (
	"path/filepath"
	"runtime"

	"github.com/agentcli/agentcli/driver"
)

// credentialVars are the variables that carry claude's credentials.
var credentialVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"}

// hasCredentials reports whether claude has a way to authenticate in r:
// a credential variable (API key, auth token, OAuth token, a cloud
// provider switch), a gateway's base URL, the credentials file /login
// writes (.credentials.json in CLAUDE_CONFIG_DIR or ~/.claude), an API key
// recorded in .claude.json, or a settings file (user, project, managed)
// that sets any of these or an apiKeyHelper. On macOS /login keeps its
// token in the keychain, which is not looked into: there claude is
// assumed to have one.
func hasCredentials(r *driver.Run) bool {
	if runtime.GOOS == "darwin" {
		return true
	}
	if r.AnySet(credentialVars...) || r.AnySet("CLAUDE_CODE_USE_FOUNDRY", "ANTHROPIC_BASE_URL", "AWS_BEARER_TOKEN_BEDROCK") {
		return true
	}
	dir := r.Lookup("CLAUDE_CONFIG_DIR")
	if dir == "" {
		dir = filepath.Join(r.Home(), ".claude")
	}
	if driver.FileExists(filepath.Join(dir, ".credentials.json")) {
		return true
	}
	for _, f := range []string{filepath.Join(dir, ".claude.json"), filepath.Join(r.Home(), ".claude.json")} {
		if driver.FileMentions(f, `"primaryApiKey"`) {
			return true
		}
	}
	settings := []string{
		filepath.Join(dir, "settings.json"), filepath.Join(dir, "settings.local.json"),
		filepath.Join(r.Dir, ".claude", "settings.json"), filepath.Join(r.Dir, ".claude", "settings.local.json"),
		"/etc/claude-code/managed-settings.json",
	}
	for _, f := range settings {
		if driver.FileMentions(f, "apiKeyHelper", "ANTHROPIC_", "CLAUDE_CODE_USE_", "awsAuthRefresh", "awsCredentialExport") {
			return true
		}
	}
	return false
}
