package backendtest

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// CheckSecretsOffArgv is the property that an MCP credential never reaches
// a command line: for hostile requests (HostileRequest, adjusted by fix
// when not nil, e.g. to a model the backend needs no lookup for), prepare
// either fails with a typed error or builds a job in whose argv and added
// environment no MCP server's Env or Headers value appears. env is the
// run's environment; HOME and TMPDIR point at a fresh directory per
// case. state, if set, makes Run.State.
func CheckSecretsOffArgv(t *testing.T, prepare func(context.Context, *driver.Run) (*driver.Job, error),
	state func() any, fix func(*agentcli.Request)) {
	t.Helper()
	rapid.Check(t, func(rt *rapid.T) {
		req := HostileRequest(rt)
		req.Dir = ""
		if fix != nil {
			fix(req)
		}
		home, err := os.MkdirTemp("", "agentcli-secrets-*")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(home)
		r := &driver.Run{Req: req, Deltas: true, Path: "cli", Dir: home,
			Env:     []string{"HOME=" + home, "CODEX_HOME=" + home + "/.codex", "TMPDIR=" + home},
			Options: &agentcli.Options{}, Logger: slog.New(slog.DiscardHandler)}
		if state != nil {
			r.State = state()
		}
		defer r.Cleanup()
		job, err := prepare(context.Background(), r)
		if err != nil {
			var re *agentcli.RequestError
			var ue *agentcli.UnsupportedError
			if !errors.As(err, &re) && !errors.As(err, &ue) {
				rt.Fatalf("prepare: %v (%T)", err, err)
			}
			return
		}
		for _, sec := range driver.MCPSecrets(req) {
			for _, a := range append(job.Args, job.Env...) {
				if strings.Contains(a, sec) {
					rt.Fatalf("credential %q on the command line or in the environment: %q", sec, a)
				}
			}
		}
	})
}
