package backendtest

import (
	"context"
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

// RunRefusing runs req, working in dir, with the prompt "Touch NOPE." and
// permission mode m, rejecting every permission request. It fails the test
// if the run fails or the refused command created NOPE in dir, and returns
// the result and how many permission requests were made. The model server
// is the caller's (a Shell turn "touch NOPE", then text).
func RunRefusing(t *testing.T, b agentcli.Backend, req *agentcli.Request, dir string, m agentcli.PermissionMode) (*agentcli.Result, int) {
	t.Helper()
	req.Prompt, req.Dir, req.Permission = "Touch NOPE.", dir, m
	asked := 0
	req.OnPermission = func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
		asked++
		return agentcli.PermissionDecision{Kind: agentcli.RejectOnce}
	}
	res, err := b.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "NOPE")); err == nil {
		t.Error("NOPE exists: the refused command ran")
	}
	return res, asked
}
