package backendtest

import (
	"testing"

	"slices"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/drivertest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// flavorOptions returns the option spellings of every fake flavor.
func flavorOptions() []string {
	var names []string
	for _, f := range fakecli.Flavors {
		names = slices.Concat(names, f.Bool, f.Value, f.Optional, f.Variadic)
	}
	return names
}

// HostileString generates strings that try to become options when they
// reach an argv (see drivertest.HostileString), with the option spellings
// of every built-in CLI.
func HostileString() *rapid.Generator[string] { return drivertest.HostileString(flavorOptions()...) }

// HostileRequest draws a request whose every field that could reach a
// CLI's argv holds a HostileString (see drivertest.HostileRequest).
func HostileRequest(t *rapid.T) *agentcli.Request {
	return drivertest.HostileRequest(t, flavorOptions()...)
}

// OptionNames returns the names of the options p holds, in the order the
// parser met them: one entry per option, however many values it took.
func OptionNames(p *fakecli.ParsedArgs) []string {
	var out []string
	last := -1
	for _, o := range p.Options {
		if o.Arg == last && len(out) > 0 && out[len(out)-1] == o.Name {
			continue
		}
		out = append(out, o.Name)
		last = o.Arg
	}
	return out
}

// Benign returns req with every caller string that can reach argv replaced
// by a harmless value (see drivertest.Benign).
func Benign(req *agentcli.Request, sessionID string) *agentcli.Request {
	return drivertest.Benign(req, sessionID)
}

// SecretPrefix starts every MCP credential HostileRequest draws.
const SecretPrefix = drivertest.SecretPrefix

// Fataler is the part of testing.TB and *rapid.T the checks need.
type Fataler = drivertest.Fataler

// CheckRequestError fails t unless err is an *agentcli.RequestError from
// backend that matches agentcli.ErrBadRequest and names a Request field
// (see drivertest.CheckRequestError), and returns it.
func CheckRequestError(t Fataler, err error, backend string) *agentcli.RequestError {
	t.Helper()
	return drivertest.CheckRequestError(t, err, backend)
}

// HostileRequests runs drivertest's end-to-end flag-injection property
// against k's backend, with the flavor's grammar as the CLI's option
// parser, resumeID as a session id the backend accepts and hostile, if
// not nil, adjusting each request (see drivertest.Kit).
func HostileRequests(t *testing.T, k Kit, resumeID string, hostile func(*agentcli.Request)) {
	t.Helper()
	pk := k.Public()
	pk.ResumeID, pk.Hostile = resumeID, hostile
	fl := fakecli.Flavors[k.Name]
	pk.Args = func(args []string) (*drivertest.Argv, error) {
		p, err := fl.Parse(args)
		if err != nil {
			return nil, err
		}
		a := &drivertest.Argv{Positional: p.Positional}
		for _, o := range p.Options {
			a.Options = append(a.Options, drivertest.Option{Name: o.Name, Value: o.Value, Arg: o.Arg})
		}
		return a, nil
	}
	drivertest.HostileRequests(t, pk)
}
