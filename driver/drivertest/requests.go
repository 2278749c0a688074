package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// HostileRequests is the flag-injection property, checked end to end on
// the fake CLI: for requests whose every field that can reach argv holds
// a hostile string (HostileRequest, drawn by rapid, with the option names
// the backend itself uses), a run of k's backend either
//
//   - fails before the CLI starts with an *agentcli.RequestError from the
//     backend that matches agentcli.ErrBadRequest, names a Request field
//     and gives a reason (or an *agentcli.UnsupportedError), or
//   - starts the CLI with an argv that the CLI accepts (Kit.Args) and
//     that has the same options and as many positional words as the argv
//     of the request's benign twin (Benign), and on which no MCP
//     server's credential appears (argv is visible to every user of the
//     machine); without Kit.Args, the two argv have the same words
//     starting with "-" (up to an "="), in the same places, up to a "--"
//     word: no caller string may be an argv word of its own that starts
//     with "-".
//
// The benign twin must succeed. Request.Dir is left empty (the backend
// would get an absolute path, which is no option), and SystemPrompt too
// under Kit.NoSystemPrompt; Kit.Hostile adjusts the rest. So that many
// requests get past the backend's checks to a command line, a request
// sets each field with a probability of one half (the prompt always),
// and only fields the backend takes with a benign value (a field it
// refuses whatever it holds cannot reach argv); the test fails when no
// request starts the CLI. Every run starts the fake CLI (one or two per
// case; rapid's -rapid.checks sets the number of cases, 100 by default).
func HostileRequests(t *testing.T, k Kit) {
	t.Helper()
	names, fields := probe(t, k)
	if t.Failed() {
		t.FailNow()
	}
	var cases, started int
	defer func() {
		t.Logf("%d of %d hostile requests started the CLI", started, cases)
		if started == 0 && cases >= 20 && !t.Failed() {
			t.Errorf("none of %d hostile requests started the CLI: the backend refuses them all (or the kit's script does not succeed), so no argv was checked", cases)
		}
	}()
	rapid.Check(t, func(rt *rapid.T) {
		cases++
		full := HostileRequest(rt, names...)
		hostileManage(rt, full, names...)
		req := sparse(rt, full, fields)
		req.Dir = ""
		if k.NoSystemPrompt {
			req.SystemPrompt = ""
		}
		if k.Hostile != nil {
			k.Hostile(req)
		}
		hostile, err := k.argvOf(req)
		if err != nil {
			var ue *agentcli.UnsupportedError
			if !errors.As(err, &ue) {
				CheckRequestError(rt, err, k.Name)
			}
			if hostile != nil {
				rt.Fatalf("the CLI started (argv %q) for a request the backend refused: %v", hostile.Args, err)
			}
			return
		}
		if hostile == nil {
			rt.Fatalf("the run succeeded without starting the CLI")
		}
		started++
		for _, sec := range driver.MCPSecrets(req) {
			for _, a := range hostile.Args {
				if strings.Contains(a, sec) {
					rt.Fatalf("an MCP credential is on the command line: %q in %q", sec, hostile.Args)
				}
			}
		}
		twin, err := k.argvOf(Benign(req, k.resumeID()))
		if err != nil || twin == nil {
			rt.Fatalf("the benign twin of an accepted request fails: %v", err)
		}
		if err := k.sameOptions(hostile.Args, twin.Args); err != nil {
			rt.Fatalf("%v\nargv:        %q\nbenign twin: %q", err, hostile.Args, twin.Args)
		}
	})
}

// sameOptions reports how argv h, of a hostile request, differs from argv
// b, of its benign twin, in its options (see HostileRequests).
func (k Kit) sameOptions(h, b []string) error {
	if k.Args != nil {
		ha, err := k.Args(h)
		if err != nil {
			return fmt.Errorf("the CLI would refuse the argv: %v", err)
		}
		ba, err := k.Args(b)
		if err != nil {
			return fmt.Errorf("the CLI would refuse the benign twin's argv: %v", err)
		}
		if hn, bn := ha.Names(), ba.Names(); !slices.Equal(hn, bn) {
			return fmt.Errorf("options %q; the benign twin's are %q", hn, bn)
		}
		if len(ha.Positional) != len(ba.Positional) {
			return fmt.Errorf("positional words %q; the benign twin has %q", ha.Positional, ba.Positional)
		}
		return nil
	}
	if len(h) != len(b) {
		return fmt.Errorf("%d words; the benign twin's argv has %d", len(h), len(b))
	}
	for i := range b {
		if b[i] == "--" || h[i] == "--" {
			if h[i] != b[i] {
				return fmt.Errorf("word %d is %q; the benign twin's is %q", i, h[i], b[i])
			}
			return nil
		}
		if hn, bn := optionWord(h[i]), optionWord(b[i]); hn != bn {
			return fmt.Errorf("word %d is %q; the benign twin's is %q", i, h[i], b[i])
		}
	}
	return nil
}

// optionWord returns the part of an argv word that names an option: up
// to its first "=", for a word starting with "-"; "" for any other word.
func optionWord(w string) string {
	if !strings.HasPrefix(w, "-") {
		return ""
	}
	name, _, _ := strings.Cut(w, "=")
	return name
}

// argvOf runs req on the fake CLI (playing a successful run) and returns
// what it recorded, nil when it did not start, and the run's error. A
// failure other than a refused request is reported with the fake's
// record.
func (k Kit) argvOf(req *agentcli.Request) (*Record, error) {
	dir, err := os.MkdirTemp("", "drivertest-argv-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// The answer is JSON, for a request with an output schema (an object).
	env, err := FakeEnv(dir, k.Name, k.Success("{}", k.resumeID())...)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b := k.New(&agentcli.Options{Path: self, KillGrace: 300 * time.Millisecond, Env: append(env, k.Env...)})
	r := *req
	r.Timeout = time.Minute
	_, runErr := b.Run(context.Background(), &r)
	defer func() { // the fault matrix is where leaks are looked for
		for _, pid := range Pids(dir) {
			if Alive(pid) {
				killPid(pid)
			}
		}
	}()
	rec, err := ReadRecord(dir)
	if err != nil {
		if len(Pids(dir)) > 0 {
			return nil, fmt.Errorf("the fake CLI started but recorded nothing (%v); the run: %v", err, runErr)
		}
		return nil, runErr
	}
	if runErr != nil {
		var re *agentcli.RequestError
		var ue *agentcli.UnsupportedError
		if !errors.As(runErr, &re) && !errors.As(runErr, &ue) {
			return rec, fmt.Errorf("the run failed: %w (argv %q)", runErr, rec.Args)
		}
	}
	return rec, runErr
}

// field is one Request field HostileRequests may set: set copies it from
// a hostile request, and probe is a benign value of it.
type field struct {
	name  string
	set   func(to, from *agentcli.Request)
	probe func(r *agentcli.Request, k Kit)
}

// fields are the Request fields that can reach argv, but Prompt.
var fields = []field{
	{"SystemPrompt", func(to, from *agentcli.Request) { to.SystemPrompt = from.SystemPrompt },
		func(r *agentcli.Request, k Kit) { r.SystemPrompt = k.system() }},
	{"SessionID", func(to, from *agentcli.Request) { to.SessionID = from.SessionID },
		func(r *agentcli.Request, k Kit) { r.SessionID = k.resumeID() }},
	{"Model", func(to, from *agentcli.Request) { to.Model = from.Model },
		func(r *agentcli.Request, _ Kit) { r.Model = "m" }},
	{"MaxTurns", func(to, from *agentcli.Request) { to.MaxTurns = from.MaxTurns },
		func(r *agentcli.Request, _ Kit) { r.MaxTurns = 3 }},
	{"AllowedTools", func(to, from *agentcli.Request) { to.AllowedTools = from.AllowedTools },
		func(r *agentcli.Request, _ Kit) { r.AllowedTools = []string{"Read"} }},
	{"DisallowedTools", func(to, from *agentcli.Request) { to.DisallowedTools = from.DisallowedTools },
		func(r *agentcli.Request, _ Kit) { r.DisallowedTools = []string{"Bash"} }},
	{"Env", func(to, from *agentcli.Request) { to.Env = from.Env },
		func(r *agentcli.Request, _ Kit) { r.Env = []string{"DRIVERTEST_PROBE=1"} }},
	{"FallbackModel", func(to, from *agentcli.Request) { to.FallbackModel = from.FallbackModel },
		func(r *agentcli.Request, _ Kit) { r.FallbackModel = "m2" }},
	{"Effort", func(to, from *agentcli.Request) { to.Effort = from.Effort },
		func(r *agentcli.Request, _ Kit) { r.Effort = agentcli.EffortHigh }},
	{"MaxBudgetUSD", func(to, from *agentcli.Request) { to.MaxBudgetUSD = from.MaxBudgetUSD },
		func(r *agentcli.Request, _ Kit) { r.MaxBudgetUSD = 1 }},
	{"OutputSchema", func(to, from *agentcli.Request) { to.OutputSchema = from.OutputSchema },
		func(r *agentcli.Request, _ Kit) { r.OutputSchema = json.RawMessage(`{"type":"object"}`) }},
	{"NewSessionID", func(to, from *agentcli.Request) { to.NewSessionID = from.NewSessionID },
		func(r *agentcli.Request, _ Kit) { r.NewSessionID = BenignNewSessionID }},
	{"ForkSession", func(to, from *agentcli.Request) { to.ForkSession, to.SessionID = from.ForkSession, from.SessionID },
		func(r *agentcli.Request, k Kit) { r.ForkSession, r.SessionID = true, k.resumeID() }},
	{"MCPServers", func(to, from *agentcli.Request) { to.MCPServers = from.MCPServers },
		func(r *agentcli.Request, _ Kit) {
			r.MCPServers = []agentcli.MCPServer{{Name: "s0", Command: "cmd", Env: []string{"E0=v"}}}
		}},
}

// sparse returns a request with the prompt of req and, of the fields
// named in use, each with a probability of one half.
func sparse(t *rapid.T, req *agentcli.Request, use []field) *agentcli.Request {
	r := &agentcli.Request{Prompt: req.Prompt}
	for _, f := range use {
		if rapid.Bool().Draw(t, "set "+f.name) {
			f.set(r, req)
		}
	}
	return r
}

// probe runs the plain request {Prompt: "p"} and one request per field
// with a benign value of it (see fields), each of which must succeed or be
// refused before the CLI starts (a field the backend does not take), and
// returns the option names the backend's argv held (words starting with
// "-", up to an "="), with HostileString's defaults, and the fields whose
// request succeeded.
func probe(t *testing.T, k Kit) ([]string, []field) {
	t.Helper()
	names := slices.Clone(commonOptions)
	collect := func(rec *Record) {
		for _, a := range rec.Args {
			if w := optionWord(a); w != "" {
				names = append(names, w)
			}
		}
	}
	rec, err := k.argvOf(&agentcli.Request{Prompt: "p"})
	if err != nil || rec == nil {
		t.Fatalf("a run of the plain request {Prompt: \"p\"} on the fake CLI fails: %v", err)
	}
	collect(rec)
	var use []field
	for _, f := range fields {
		r := &agentcli.Request{Prompt: "p"}
		f.probe(r, k)
		if f.name == "SystemPrompt" && r.SystemPrompt == "" {
			continue // Kit.NoSystemPrompt
		}
		if k.Hostile != nil {
			if k.Hostile(r); reflect.DeepEqual(r, &agentcli.Request{Prompt: "p"}) {
				continue // Kit.Hostile clears the field
			}
		}
		rec, err := k.argvOf(r)
		var re *agentcli.RequestError
		var ue *agentcli.UnsupportedError
		switch {
		case err == nil && rec != nil:
			collect(rec)
			use = append(use, f)
		case rec == nil && (errors.As(err, &re) || errors.As(err, &ue) || errors.Is(err, agentcli.ErrSessionNotFound)):
			// Refused whatever it holds (or, a fork, of a session the
			// fake CLI has no files of): no value of it reaches argv.
		default:
			t.Errorf("a run of the benign request {Prompt: \"p\", %s: ...} on the fake CLI fails: %v", f.name, err)
		}
	}
	var ns []string
	for _, f := range use {
		ns = append(ns, f.name)
	}
	t.Logf("fields drawn hostile: Prompt %s", strings.Join(ns, " "))
	slices.Sort(names)
	return slices.Compact(names), use
}

// resumeID is the session id of the benign twins.
func (k Kit) resumeID() string {
	if k.ResumeID == "" {
		return "sess-fault-1"
	}
	return k.ResumeID
}
