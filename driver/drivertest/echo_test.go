package drivertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/drivertest"
)

// echo is a backend for "echoagent", a CLI that does not exist: the fake
// CLI stands in for it. Its command line is
//
//	echoagent -json [-model=M] [-resume=ID] [-system-file=PATH] [-- ]
//
// with the prompt on stdin (Go's flag package parses it), and it prints
// one JSON object a line:
//
//	{"type":"session","id":ID}
//	{"type":"text","text":T}
//	{"type":"result","ok":true,"session":ID,"text":T} (or "ok":false,"error":E)
//
// flaws makes it wrong on purpose, to show that the tests catch it.
type flaws struct {
	// positionalPrompt passes the prompt as the last argument, with no
	// "--" before it.
	positionalPrompt bool
	// splitModel passes the model as a word of its own after -model.
	splitModel bool
	// trustExit0 reports success after exit 0 without a result line.
	trustExit0 bool
}

func echoSpec(f flaws) *driver.Spec {
	return &driver.Spec{
		Name:        "echo",
		Binary:      "echoagent",
		Credentials: []string{"ECHO_API_KEY"},
		HasCredentials: func(r *driver.Run) bool {
			return r.Lookup("ECHO_API_KEY") != ""
		},
		Caps: agentcli.Capabilities{Resume: true, SystemPrompt: agentcli.SystemPromptAppend,
			PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionDeny}},
		Validate: func(req *agentcli.Request) error {
			if id := req.SessionID; id != "" && !driver.IsPrefixedID(id, "sess-", 64) {
				return driver.SessionError("echo", `"sess-" and letters or digits`)
			}
			return nil
		},
		Prepare: func(ctx context.Context, r *driver.Run) (*driver.Job, error) {
			args := []string{"-json"}
			if m := r.Req.Model; m != "" && f.splitModel {
				args = append(args, "-model", m)
			} else if m != "" {
				args = append(args, "-model="+m)
			}
			if id := r.Req.SessionID; id != "" {
				args = append(args, "-resume="+id)
			}
			if s := r.Req.SystemPrompt; s != "" {
				dir, err := r.TempDir()
				if err != nil {
					return nil, err
				}
				p := dir + "/system.md"
				if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
					return nil, err
				}
				args = append(args, "-system-file="+p)
			}
			if f.positionalPrompt {
				return &driver.Job{Args: append(args, r.Req.Prompt)}, nil
			}
			return &driver.Job{Args: append(args, "--"), Stdin: []byte(r.Req.Prompt)}, nil
		},
		NewParser: func(*driver.Run) driver.Parser { return &echoParser{flaws: f} },
	}
}

// echoParser parses echoagent's output.
type echoParser struct {
	flaws  flaws
	result *struct {
		OK      bool   `json:"ok"`
		Session string `json:"session"`
		Text    string `json:"text"`
		Error   string `json:"error"`
	}
	raw  []byte
	text string
}

func (p *echoParser) Line(line []byte) []agentcli.Event {
	var m struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return []agentcli.Event{driver.Notice("echo", line, err)}
	}
	raw := json.RawMessage(line)
	switch m.Type {
	case "session":
		return []agentcli.Event{{Kind: agentcli.EventInit, SessionID: m.ID, Raw: raw}}
	case "text":
		p.text = m.Text
		return []agentcli.Event{{Kind: agentcli.EventText, Text: m.Text, Raw: raw}}
	case "result":
		if err := json.Unmarshal(line, &p.result); err != nil {
			return []agentcli.Event{driver.Notice("echo", line, err)}
		}
		p.raw = line
		return nil
	}
	return []agentcli.Event{{Kind: agentcli.EventUnknown, Raw: raw}}
}

func (p *echoParser) End(e driver.Exit) driver.Outcome {
	switch {
	case p.result == nil && p.flaws.trustExit0 && e.Code == 0:
		return driver.Outcome{Result: &agentcli.Result{Text: p.text}}
	case p.result == nil:
		return driver.Outcome{}
	}
	res := &agentcli.Result{Text: p.result.Text, SessionID: p.result.Session, Raw: p.raw}
	switch {
	case !p.result.OK:
		return driver.Outcome{Result: res, Failed: true, Message: p.result.Error}
	case e.Code != 0:
		return driver.Outcome{Result: res, Failed: true, Message: "exited with a non-zero status after a successful result"}
	}
	return driver.Outcome{Result: res}
}

// echoArgs parses echoagent's command line as its flag package does.
func echoArgs(args []string) (*drivertest.Argv, error) {
	fs := flag.NewFlagSet("echoagent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a := &drivertest.Argv{}
	for _, name := range []string{"model", "resume", "system-file"} {
		fs.Func(name, "", func(v string) error {
			a.Options = append(a.Options, drivertest.Option{Name: "-" + name, Value: v, Arg: len(a.Options)})
			return nil
		})
	}
	fs.BoolFunc("json", "", func(string) error {
		a.Options = append(a.Options, drivertest.Option{Name: "-json", Arg: len(a.Options)})
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	a.Positional = fs.Args()
	return a, nil
}

// echoLines are the lines of echoagent answering text in session sess.
func echoLines(text, sess string) []string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return []string{
		`out {"type":"session","id":` + q(sess) + `}`,
		`out {"type":"text","text":` + q(text) + `}`,
		`out {"type":"result","ok":true,"session":` + q(sess) + `,"text":` + q(text) + `}`,
	}
}

// echoKit is the drivertest kit of the echo backend with flaws f.
func echoKit(f flaws, withArgs bool) drivertest.Kit {
	spec := echoSpec(f)
	k := drivertest.Kit{
		Name:    "echo",
		New:     func(o *agentcli.Options) agentcli.Backend { return driver.New(spec, o) },
		Env:     []string{"ECHO_API_KEY=k"},
		Success: echoLines,
		Partial: func(sess string) []string {
			return []string{`out {"type":"session","id":"` + sess + `"}`, `out {"type":"text","text":"par"}`}
		},
		Truncated: func(sess string) []string {
			return []string{`out {"type":"session","id":"` + sess + `"}`, `outraw {"type":"result","ok":true,"text":"hel`}
		},
		ResumeID:   "sess-0a1b2c",
		TempPrefix: "agentcli-run-",
	}
	if withArgs {
		k.Args = echoArgs
	}
	return k
}

var kit = echoKit(flaws{}, true)

// envFlaws selects the flawed backend a child test binary runs (see
// TestTheChecksCanFail).
const envFlaws = "DRIVERTEST_FLAWS"

func TestMain(m *testing.M) {
	drivertest.MaybeRunFakeCLI(kit)
	os.Exit(m.Run())
}

func TestFaultMatrix(t *testing.T)     { drivertest.FaultMatrix(t, kit) }
func TestHostileRequests(t *testing.T) { drivertest.HostileRequests(t, kit) }

// Without Args, the generic rule holds for the echo backend too.
func TestHostileRequestsGeneric(t *testing.T) {
	drivertest.HostileRequests(t, echoKit(flaws{}, false))
}

func TestCredentials(t *testing.T) {
	drivertest.CheckCredentials(t, kit, []string{"ECHO_API_KEY"}, []drivertest.CredentialWay{
		{Name: "key", Env: []string{"ECHO_API_KEY=k"}},
	})
}

func TestNoHomeWrites(t *testing.T) {
	drivertest.CheckNoHomeWrites(t, kit, &agentcli.Request{Prompt: "hi", SystemPrompt: "be brief"}, nil)
}

// The fake refuses a command line that Args refuses, with the usage exit
// status, and records the file the system prompt went through.
func TestFakeJudgesArgv(t *testing.T) {
	b, dir := kit.Setup(t, nil, echoLines("hi", "sess-1")...)
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p", SystemPrompt: "be brief"}); err != nil {
		t.Fatal(err)
	}
	rec, err := drivertest.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range rec.Args {
		if p, ok := strings.CutPrefix(a, "-system-file="); ok {
			found = rec.Files[p] == "be brief" && rec.FileModes[p] == 0o600
		}
	}
	if !found || rec.Stdin != "p" {
		t.Errorf("record %+v", rec)
	}
	bad := echoKit(flaws{positionalPrompt: true}, true)
	b, _ = bad.Setup(t, nil, echoLines("hi", "sess-1")...)
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "-x"})
	var ee *agentcli.ExitError
	if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(ee.Stderr, "flag provided but not defined: -x") {
		t.Errorf("a prompt read as a flag: %v; want the CLI's usage error", err)
	}
}

// flawed is the kit a child test binary checks (see TestTheChecksCanFail).
func flawed(name string) drivertest.Kit {
	switch name {
	case "positional prompt":
		return echoKit(flaws{positionalPrompt: true}, true)
	case "split model, generic rule":
		return echoKit(flaws{splitModel: true}, false)
	case "trust exit 0":
		return echoKit(flaws{trustExit0: true}, true)
	}
	panic("no flawed kit " + name)
}

// TestFlawed runs the checks on a flawed backend; TestTheChecksCanFail
// runs it in a child test binary and expects it to fail.
func TestFlawed(t *testing.T) {
	name := os.Getenv(envFlaws)
	if name == "" {
		t.Skip("run by TestTheChecksCanFail, in a child test binary, with " + envFlaws + " set")
	}
	k := flawed(name)
	if name == "trust exit 0" {
		drivertest.FaultMatrix(t, k)
		return
	}
	drivertest.HostileRequests(t, k)
}

// Each flaw is caught: the check fails, saying what is wrong.
func TestTheChecksCanFail(t *testing.T) {
	for _, c := range []struct {
		flaw, run string
		want      []string // the failure says one of these
	}{
		// A prompt drawn as a flag the CLI lacks, as one of its flags
		// without the argument it needs, as bad flag syntax or as -h (the
		// CLI's usage error), as "--" (the CLI reads no prompt: the
		// positional words differ from the benign twin's), or as one of
		// its flags with a value, "-system-file=" (the options differ
		// from the benign twin's).
		{"positional prompt", "^TestFlawed$", []string{"flag provided but not defined", "flag needs an argument", "bad flag syntax", "help requested", "positional words", "the benign twin's are"}},
		{"split model, generic rule", "^TestFlawed$", []string{"the benign twin's is"}},
		{"trust exit 0", "^TestFlawed$/^exit_0_without_result$", []string{"want ErrNoResult only"}},
	} {
		t.Run(c.flaw, func(t *testing.T) {
			out, err := childTest(t, c.run, envFlaws+"="+c.flaw)
			said := slices.ContainsFunc(c.want, func(w string) bool { return strings.Contains(out, w) })
			if err == nil || !said || !strings.Contains(out, "--- FAIL: TestFlawed") {
				t.Errorf("err %v; want a failure saying one of %q:\n%s", err, c.want, out)
			}
		})
	}
}

// childTest runs the tests matching pattern in a child test binary with
// env added, and returns its output.
func childTest(t *testing.T, pattern string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(drivertest.Self(t), "-test.run="+pattern, "-test.count=1", "-test.v=true", "-rapid.checks=100", "-rapid.nofailfile", "-rapid.shrinktime=3s")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
