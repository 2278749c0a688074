package toy

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/drivertest"
	"github.com/agentcli/agentcli/examples/outside-backend/toyagent"
)

// envToyagent makes the test binary toyagent itself (see TestMain), for
// the tests that run the real CLI.
const envToyagent = "TOY_TEST_RUN_TOYAGENT"

func TestMain(m *testing.M) {
	drivertest.MaybeRunFakeCLI(kit)
	if os.Getenv(envToyagent) != "" {
		os.Exit(toyagent.Main(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// kit scripts toyagent's output for drivertest, and parses its command
// line with toyagent's own flag definitions.
var kit = drivertest.Kit{
	Name: Name,
	New:  New,
	Env:  []string{"TOYAGENT_API_KEY=k"},
	Success: func(text, sess string) []string {
		return []string{
			`out {"type":"session","id":` + strconv.Quote(sess) + `,"model":"toy-1"}`,
			`out {"type":"message","text":` + strconv.Quote(text) + `}`,
			`out {"type":"usage","input_tokens":2,"output_tokens":5}`,
			`out {"type":"done","session":` + strconv.Quote(sess) + `,"text":` + strconv.Quote(text) + `,"turns":1}`,
		}
	},
	Partial: func(sess string) []string {
		return []string{
			`out {"type":"session","id":` + strconv.Quote(sess) + `,"model":"toy-1"}`,
			`out {"type":"thinking","text":"hmm"}`,
		}
	},
	Truncated: func(sess string) []string {
		return []string{
			`out {"type":"session","id":` + strconv.Quote(sess) + `,"model":"toy-1"}`,
			`outraw {"type":"done","session":` + strconv.Quote(sess) + `,"text":"hel`,
		}
	},
	ResumeID:   "toy-0123456789ab",
	Args:       toyagentArgs,
	TempPrefix: "agentcli-run-",
}

// toyagentArgs parses a command line as toyagent does: its flags
// (toyagent.Flags), each recorded as it is set, and no positional
// argument.
func toyagentArgs(args []string) (*drivertest.Argv, error) {
	fs := flag.NewFlagSet("toyagent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	toyagent.Flags(fs)
	a := &drivertest.Argv{}
	fs.VisitAll(func(f *flag.Flag) {
		r := recorder{Value: f.Value, name: "-" + f.Name, argv: a}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			f.Value = boolRecorder{r}
		} else {
			f.Value = r
		}
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	a.Positional = fs.Args()
	if len(a.Positional) > 0 {
		return a, fmt.Errorf("toyagent: unexpected argument %q", a.Positional[0])
	}
	return a, nil
}

// recorder is a flag.Value that records every value set in argv.
type recorder struct {
	flag.Value
	name string
	argv *drivertest.Argv
}

func (r recorder) Set(v string) error {
	r.argv.Options = append(r.argv.Options, drivertest.Option{Name: r.name, Value: v, Arg: len(r.argv.Options)})
	return r.Value.Set(v)
}

type boolRecorder struct{ recorder }

func (boolRecorder) IsBoolFlag() bool { return true }

func TestFaultMatrix(t *testing.T)     { drivertest.FaultMatrix(t, kit) }
func TestHostileRequests(t *testing.T) { drivertest.HostileRequests(t, kit) }

// Without credentials a run fails before toyagent starts; each way
// toyagent finds one lets it start.
func TestCredentials(t *testing.T) {
	drivertest.CheckCredentials(t, kit, []string{"TOYAGENT_API_KEY"}, []drivertest.CredentialWay{
		{Name: "key", Env: []string{"TOYAGENT_API_KEY=k"}},
		{Name: "login", Files: map[string]string{"~/.toyagent/credentials": "k"}},
		{Name: "login in TOYAGENT_HOME", Env: []string{"TOYAGENT_HOME=~/th"}, Files: map[string]string{"~/th/credentials": "k"}},
		{Name: "extra args", ExtraArgs: []string{"-model=toy-2"}},
	})
}

// The system prompt's file lives in the run's temporary directory.
func TestNoHomeWrites(t *testing.T) {
	drivertest.CheckNoHomeWrites(t, kit, &agentcli.Request{Prompt: "hi", SystemPrompt: "be brief"}, nil)
}
