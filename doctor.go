package agentcli

import (
	"context"
	"runtime"

	"golang.org/x/sync/errgroup"
)

// DiagnosisStatus grades a Diagnosis.
type DiagnosisStatus string

const (
	// DiagnosisOK: the backend is ready to run.
	DiagnosisOK DiagnosisStatus = "ok"
	// DiagnosisWarning: it runs, but something may get in the way (a CLI
	// version this release was not tested with, no credential variable
	// set).
	DiagnosisWarning DiagnosisStatus = "warning"
	// DiagnosisFailure: it cannot run (no binary, the binary does not
	// start, or the CLI has no credential it could use: a run would fail
	// with a *CredentialsError).
	DiagnosisFailure DiagnosisStatus = "failure"
)

// Diagnosis is what Doctor found out about one backend.
type Diagnosis struct {
	// Backend is the registry name.
	Backend string `json:"backend"`
	// Path is the resolved CLI binary, or the configured one when it does
	// not resolve.
	Path string `json:"path,omitempty"`
	// Version is the version the CLI prints, "" when it could not be run.
	Version string `json:"version,omitempty"`
	// Tested is the CLI version this release of agentcli was tested with
	// (the pinned version).
	Tested string `json:"tested,omitempty"`
	// InRange reports that Version is one this release was tested with.
	InRange bool `json:"in_range"`
	// Credentials lists the names (never the values) of the backend's
	// credential variables that are set in the environment a run would
	// get.
	Credentials []string `json:"credentials"`
	// Status grades the backend.
	Status DiagnosisStatus `json:"status"`
	// Hint is a one-line explanation of a warning or failure, or "".
	Hint string `json:"hint,omitempty"`
}

// Doctor diagnoses every registered backend, created with opts (nil means
// defaults; a set Path applies to every backend), and returns the
// diagnoses in name order. It starts each CLI only to ask for its version:
// it makes no model call. Backends that cannot diagnose themselves
// are reported from Check alone. The backends are diagnosed concurrently,
// as many at a time as the machine has CPUs (two at least): a CLI's start
// takes seconds of CPU, and a diagnosis's time limit is meant for the CLI,
// not for a CPU shared with a dozen others. Doctor blocks until all are
// done or ctx ends.
func Doctor(ctx context.Context, opts *Options) []Diagnosis {
	names := Backends()
	out := make([]Diagnosis, len(names))
	var g errgroup.Group
	g.SetLimit(max(2, runtime.NumCPU()))
	for i, name := range names {
		g.Go(func() error {
			out[i] = diagnose(ctx, name, opts)
			return nil
		})
	}
	_ = g.Wait() // no diagnosis returns an error
	return out
}

func diagnose(ctx context.Context, name string, opts *Options) Diagnosis {
	b, err := Open(name, opts)
	if err != nil {
		return Diagnosis{Backend: name, Status: DiagnosisFailure, Hint: err.Error()}
	}
	if d, ok := find[interface {
		Diagnose(context.Context) Diagnosis
	}](b); ok {
		return d.Diagnose(ctx)
	}
	d := Diagnosis{Backend: name, Status: DiagnosisWarning, Hint: "this backend cannot report its version"}
	if err := b.Check(ctx); err != nil {
		d.Status, d.Hint = DiagnosisFailure, err.Error()
	}
	return d
}
