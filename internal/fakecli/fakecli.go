// Package fakecli holds the argv grammars of the built-in backends' CLIs
// (Flavors) for the fake CLI of package drivertest, which is where the
// fake itself lives. A built-in backend's test binary becomes the fake
// when its TestMain calls MaybeRun first:
//
//	func TestMain(m *testing.M) {
//		fakecli.MaybeRun()
//		os.Exit(m.Run())
//	}
//
// The fake then refuses a command line the way the named real CLI does
// (its flavor's grammar and checks, exiting with that CLI's usage status);
// ReadRecord adds to drivertest's record what the flavor knows: the files
// named by its file options, the positional prompt and the prompt as the
// CLI reads it from stdin.
package fakecli

import (
	"os"
	"strings"

	"github.com/agentcli/agentcli/driver/drivertest"
)

// Environment variables understood by the fake (see drivertest).
const (
	EnvFlavor = drivertest.EnvFlavor // which CLI's argv rules apply; enables the fake
	EnvScript = drivertest.EnvScript // path of the script file
	EnvRecord = drivertest.EnvRecord // path to write the Record JSON to
	EnvPids   = drivertest.EnvPids   // path to append started pids to, one a line
)

// Record is what the fake saw, with what its flavor makes of it.
type Record struct {
	Args  []string          `json:"args"`
	Stdin string            `json:"stdin"`
	Files map[string]string `json:"files,omitempty"` // flag → content of the file it names
	// FileModes holds the permission bits of those files.
	FileModes map[string]uint32 `json:"file_modes,omitempty"`
	Env       []string          `json:"env"`
	Dir       string            `json:"dir"`
	Prompt    string            `json:"prompt"` // positional prompt text, if any
	// StdinPrompt is the prompt as the CLI reads it from stdin (decoded
	// from structured input where the flavor knows how; "" when that
	// input is not what the CLI takes).
	StdinPrompt string `json:"stdin_prompt"`
}

// Env returns the environment entries that make a test binary behave as the
// fake CLI of the given flavor, running script (written to dir), with a
// credential of that CLI set (Credential).
func Env(dir, flavor string, script ...string) []string {
	env, err := drivertest.FakeEnv(dir, flavor, script...)
	if err != nil {
		panic(err)
	}
	return append(env, CredentialEnv(flavor)...)
}

// Credential is the value of the credential variable Env sets, so that
// the backend, which fails a run without credentials before it starts,
// runs the fake.
const Credential = "fakecli-credential"

// CredentialEnv returns the credential variable of the flavor's CLI set
// to Credential (none for an unknown flavor).
func CredentialEnv(flavor string) []string {
	if v, ok := credential[flavor]; ok {
		return []string{v + "=" + Credential}
	}
	return nil
}

// Credentials returns a credential variable of each CLI set to
// Credential, for a backend that runs something else than the fake (a
// cat of a stream) and must not fail for lack of credentials.
func Credentials() []string {
	var env []string
	for _, f := range []string{"claude", "codex", "gemini", "opencode"} {
		env = append(env, credential[f]+"="+Credential)
	}
	return env
}

// credential maps flavors to one of their CLI's credential variables.
var credential = map[string]string{
	"claude": "ANTHROPIC_API_KEY", "codex": "CODEX_API_KEY", "gemini": "GEMINI_API_KEY", "opencode": "OPENCODE_API_KEY",
}

// ReadRecord reads what the fake recorded in dir, and adds what its
// flavor (named in its environment) makes of it.
func ReadRecord(dir string) (*Record, error) {
	r, err := drivertest.ReadRecord(dir)
	if err != nil {
		return nil, err
	}
	rec := &Record{Args: r.Args, Stdin: r.Stdin, Env: r.Env, Dir: r.Dir, StdinPrompt: r.Stdin,
		Files: map[string]string{}, FileModes: map[string]uint32{}}
	var fl *Flavor
	for _, kv := range r.Env {
		if name, ok := strings.CutPrefix(kv, EnvFlavor+"="); ok {
			fl = Flavors[name]
		}
	}
	if fl == nil {
		return rec, nil
	}
	p, err := fl.Parse(r.Args)
	if err != nil {
		return rec, nil // refused, or a live session's command line
	}
	rec.Prompt = strings.Join(p.Positional, " ")
	for _, f := range fl.FileFlags {
		for _, v := range p.Values[f] {
			if c, ok := r.Files[v]; ok {
				rec.Files[f], rec.FileModes[f] = c, r.FileModes[v]
			}
		}
	}
	if fl.StdinPrompt != nil {
		if sp, msg := fl.StdinPrompt(p.Values, []byte(r.Stdin)); msg == "" {
			rec.StdinPrompt = sp
		} else {
			rec.StdinPrompt = ""
		}
	}
	return rec, nil
}

// ReadPids returns the pids the fake and its children recorded in dir.
func ReadPids(dir string) []int { return drivertest.Pids(dir) }

// Alive reports whether a process with that pid exists and is not a zombie.
func Alive(pid int) bool { return drivertest.Alive(pid) }

// MaybeRun turns the process into the fake CLI when the environment says
// so; it then never returns. Otherwise it returns at once.
func MaybeRun() { drivertest.MaybeRunFakeCLI(Kits()...) }

// Kits returns, for each flavor, the part of a drivertest.Kit that the
// fake CLI reads: its name, how it judges a command line (CheckArgs) and
// its usage exit status.
func Kits() []drivertest.Kit {
	var kits []drivertest.Kit
	for name, f := range Flavors {
		kits = append(kits, drivertest.Kit{Name: name, CheckArgs: f.check, UsageExit: f.UsageExit})
	}
	return kits
}

// check judges a command line as the flavor's CLI does: the message it
// would print refusing it, or "".
func (f *Flavor) check(args []string, live bool) string {
	if live && f.Live != nil {
		return f.Live(args)
	}
	p, err := f.Parse(args)
	if err != nil {
		return err.Error()
	}
	for _, ff := range f.FileFlags {
		for _, v := range p.Values[ff] {
			if _, err := os.Stat(v); err != nil {
				return "fakecli: " + ff + " " + v + ": " + err.Error()
			}
		}
	}
	if f.Validate != nil {
		return f.Validate(p.Values, p.Positional)
	}
	return ""
}
