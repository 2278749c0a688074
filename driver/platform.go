package driver

import (
	"runtime"

	"github.com/agentcli/agentcli"
)

// platformErr turns the process layer's verdict on this platform
// (proc.ErrUnsupportedPlatform, nil on unix systems) into the typed error a
// run returns before anything starts.
func platformErr(backend string, unsupported error) error {
	if unsupported == nil {
		return nil
	}
	return &agentcli.UnsupportedError{Backend: backend, Feature: "running CLIs on " + runtime.GOOS,
		Reason: unsupported.Error() + " (agentcli needs process groups to stop and reap a CLI's whole process tree)"}
}
