package backendtest

import (
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
