package driver

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
)

// versionRe finds a version number in what a CLI prints for --version
// ("2.1.330 (Claude Code)", "codex-cli 0.169.0").
var versionRe = regexp.MustCompile(`\b\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?\b`)

// Diagnose implements Diagnoser: it resolves the binary, runs it
// with --version (no model call), compares the version with the tested
// one, lists the credential variables that are set and, where the Spec
// says how (HasCredentials), fails a CLI that has no credential at all as
// a run would.
func (b *Backend) Diagnose(ctx context.Context) agentcli.Diagnosis {
	d := agentcli.Diagnosis{Backend: b.spec.Name, Path: b.path(), Tested: b.spec.Tested, Credentials: []string{}}
	path, err := b.resolve()
	if err != nil {
		d.Status, d.Hint = agentcli.DiagnosisFailure, err.Error()
		return d
	}
	d.Path = path
	req := &agentcli.Request{}
	env := b.env(req)
	dir, _ := absDir("")
	r := &Run{spec: b.spec, Req: req, Path: path, Dir: dir, Env: env, Options: &b.opts, Logger: b.opts.Logger}
	out, err := Output(ctx, r, 30*time.Second, "--version")
	if err != nil {
		d.Status, d.Hint = agentcli.DiagnosisFailure, b.spec.Name+": "+Redact(err.Error())
		return d
	}
	d.Version = versionRe.FindString(string(out))
	d.InRange = d.Version != "" && d.Version == b.spec.Tested
	for _, k := range b.spec.Credentials {
		if Lookup(env, k) != "" {
			d.Credentials = append(d.Credentials, k)
		}
	}
	d.Status = agentcli.DiagnosisOK
	switch {
	case !b.hasCredentials(r):
		d.Status, d.Hint = agentcli.DiagnosisFailure, b.credentialsError().Error()
	case d.Version == "":
		d.Status, d.Hint = agentcli.DiagnosisWarning, "could not read a version from `"+b.spec.Binary+" --version`: "+strings.TrimSpace(Tail(string(out), 80))
	case !d.InRange:
		d.Status, d.Hint = agentcli.DiagnosisWarning, "version "+d.Version+" was not tested with this release of agentcli (tested: "+b.spec.Tested+")"
	case b.spec.HasCredentials == nil && len(b.spec.Credentials) > 0 && len(d.Credentials) == 0:
		d.Status, d.Hint = agentcli.DiagnosisWarning, "no credential variable is set (fine if the CLI is logged in on its own)"
	}
	return d
}
