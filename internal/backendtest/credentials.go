package backendtest

import (
	"runtime"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/drivertest"
)

// CredentialWay is one way a CLI finds a credential, for
// CheckCredentials (see drivertest.CredentialWay).
type CredentialWay = drivertest.CredentialWay

// CheckCredentials runs drivertest.CheckCredentials for k's backend
// (skipped for claude on macOS, whose login is in the keychain).
func CheckCredentials(t *testing.T, k Kit, vars []string, ways []CredentialWay) {
	t.Helper()
	if runtime.GOOS == "darwin" && k.Name == "claude" {
		t.Skip("on macOS claude's login is in the keychain, which is not looked into")
	}
	drivertest.CheckCredentials(t, k.Public(), vars, ways)
}

// CheckNoHomeWrites runs drivertest.CheckNoHomeWrites for k's backend.
func CheckNoHomeWrites(t *testing.T, k Kit, req *agentcli.Request, env []string, allowed ...string) {
	t.Helper()
	drivertest.CheckNoHomeWrites(t, k.Public(), req, env, allowed...)
}
