package backendtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// RealBackend returns a backend of cli (made by newBackend) running the
// pinned binary, and a request and working directory wired to srv (see
// agentclitest.Wiring.Apply). It skips when the CLI is not installed, or
// fails under CI=true. The calling test must have called RunIsolated.
func RealBackend(t *testing.T, cli string, srv *agentclitest.Server, newBackend func(*agentcli.Options) agentcli.Backend) (agentcli.Backend, *agentcli.Request, string) {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "tools", "clis", "node_modules", ".bin", cli))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		SkipUnlessCI(t, "pinned %s not installed (scripts/install-clis.sh)", cli)
	}
	w, err := srv.Wire(cli, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	req := &agentcli.Request{}
	w.Apply(req)
	return newBackend(&agentcli.Options{Path: bin}), req, w.Dir
}
