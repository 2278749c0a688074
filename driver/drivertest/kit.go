package drivertest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// Kit adapts drivertest to one backend: how to make it, and how to script
// the output of its CLI for the fake CLI. Only Name, New, Success, Partial
// and Truncated are required.
type Kit struct {
	// Name is the backend's name (agentcli.Backend.Name); the fake CLI
	// is known by it too.
	Name string
	// New makes the backend with opts, as its package's New or the
	// factory it registers does.
	New func(opts *agentcli.Options) agentcli.Backend
	// Env holds "KEY=value" entries added to the environment of every run
	// of the fake CLI: typically a credential, so that the backend, which
	// refuses to start a CLI that has none, starts the fake.
	// CheckCredentials leaves them out.
	Env []string

	// Success returns the script lines (fake CLI commands, see the
	// package comment) of a run that answers text in session sess,
	// terminal event included, in the format the backend asks its CLI
	// for: the run must succeed with Result.Text == text and
	// Result.SessionID == sess.
	Success func(text, sess string) []string
	// Partial returns the script lines of a run that started (its
	// session id sess reported, some output) but has not reached its
	// terminal event. Its last line must be an "out" line that yields an
	// event: the fault matrix floods it.
	Partial func(sess string) []string
	// Truncated returns the script lines of a run that ends in its
	// terminal event cut off in the middle, without a newline (an
	// "outraw" line).
	Truncated func(sess string) []string
	// ResumeID is a session id the backend accepts in
	// Request.SessionID, for the benign twin of a hostile request (see
	// HostileRequests). Empty means "sess-fault-1".
	ResumeID string

	// Args parses a command line (without the program name) as the CLI's
	// own option parser does, and returns an error for one the CLI
	// refuses. The fake CLI refuses what it refuses (see
	// MaybeRunFakeCLI), and HostileRequests compares the options it finds
	// in the argv of a hostile request and of its benign twin. Nil means
	// HostileRequests applies a generic rule instead: the argv of the two
	// requests have the same words starting with "-" (up to the value
	// after "="), in the same places, up to a "--" word.
	Args func(args []string) (*Argv, error)
	// Hostile, if set, adjusts each hostile request of HostileRequests
	// before it runs (its benign twin is made from the result): it
	// clears or replaces what the fake CLI cannot serve, such as a model
	// name the backend would look up by running the CLI.
	Hostile func(req *agentcli.Request)
	// CheckArgs, if set, is how the fake CLI judges its command line
	// instead of Args: it runs in the fake's process, with the
	// arguments and whether the script plays a live session, and returns
	// what the CLI would print refusing them, or "".
	CheckArgs func(args []string, live bool) string
	// UsageExit is the exit status of the CLI refusing its command line;
	// zero means 2.
	UsageExit int

	// TempPrefix is the prefix of the temporary files the backend
	// creates in os.TempDir, checked to be gone after every fault case
	// ("" if none). A backend built on driver.Spec that keeps its files
	// in Run.TempDir uses "agentcli-run-".
	TempPrefix string
	// NoSystemPrompt leaves the system prompt out of the fault matrix's
	// requests, for a backend whose runs with one go through a live
	// session (driver.Spec.LiveRun).
	NoSystemPrompt bool
	// Live scripts the CLI's live protocol, for LiveFaults; nil for a
	// backend without live sessions.
	Live *LiveKit
}

// refuse is the fake's judgement of its command line (see MaybeRunFakeCLI).
func (k *Kit) refuse(args []string, live bool) string {
	switch {
	case k.CheckArgs != nil:
		return k.CheckArgs(args, live)
	case k.Args != nil:
		if _, err := k.Args(args); err != nil {
			return err.Error()
		}
	}
	return ""
}

// system returns the system prompt of the matrix's requests.
func (k Kit) system() string {
	if k.NoSystemPrompt {
		return ""
	}
	return "be brief"
}

// Self returns the path of the running test binary, which is the fake CLI
// when its TestMain calls MaybeRunFakeCLI.
func Self(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Setup makes a backend (with opts, which may be nil) that runs the fake
// CLI playing script: Options.Path is the test binary, Options.Env gets
// FakeEnv's entries and Kit.Env, and Options.KillGrace and
// InterruptGrace are 300 ms unless opts sets them. It returns the backend
// and the fake's record directory (see ReadRecord and Pids), which is
// removed when the test ends.
func (k Kit) Setup(t testing.TB, opts *agentcli.Options, script ...string) (agentcli.Backend, string) {
	t.Helper()
	dir := t.TempDir()
	o := agentcli.Options{}
	if opts != nil {
		o = *opts
	}
	o.Path = Self(t)
	if o.KillGrace == 0 {
		o.KillGrace = 300 * time.Millisecond
	}
	if o.InterruptGrace == 0 {
		o.InterruptGrace = 300 * time.Millisecond
	}
	env, err := FakeEnv(dir, k.Name, script...)
	if err != nil {
		t.Fatal(err)
	}
	o.Env = append(append(append([]string(nil), o.Env...), env...), k.Env...)
	return k.New(&o), dir
}

// Collect runs req as a stream and returns all events and the final error.
// It blocks until the run ends.
func Collect(ctx context.Context, b agentcli.Backend, req *agentcli.Request) ([]agentcli.Event, error) {
	return CollectSeq(b.Stream(ctx, req))
}

// AssertReaped fails the test if the fake CLI with record directory dir
// never ran, or if any process it started is alive (a killed one is
// given 2 s to die).
func AssertReaped(t testing.TB, dir string) {
	t.Helper()
	pids := Pids(dir)
	if len(pids) == 0 {
		t.Errorf("the fake CLI recorded no pids (did it run?)")
	}
	// A process killed as the run ended (a daemon that is not the run's
	// child) is waited for by the run for at most a second (the process
	// layer's bound, so that an unkillable one cannot hold the run); on a
	// busy machine its death may come later. One that nothing killed
	// outlives this by far (the fake's daemons run for a minute).
	deadline := time.Now().Add(reapWait)
	for _, pid := range pids {
		for Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if Alive(pid) {
			t.Errorf("process %d is still alive %v after the run", pid, reapWait)
		}
	}
}

// reapWait is how long AssertReaped gives a killed process to die.
const reapWait = 2 * time.Second

// AssertNoLeaks fails the test if goroutines of agentcli's driver or
// process layer are left (it waits up to 3 s for them to end), or files
// whose name starts with tempPrefix are left in os.TempDir ("": none
// checked).
func AssertNoLeaks(t testing.TB, tempPrefix string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		leaked := ""
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "agentcli/internal/proc.") || strings.Contains(g, "agentcli/driver.") {
				leaked = g
				break
			}
		}
		if leaked == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("goroutine leaked:\n%s", leaked)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if tempPrefix != "" {
		m, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
		if len(m) > 0 {
			t.Errorf("temp files left behind: %v", m)
		}
	}
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
