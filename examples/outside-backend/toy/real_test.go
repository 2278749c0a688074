package toy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/drivertest"
	"github.com/agentcli/agentcli/examples/outside-backend/toyagent"
)

// The tests below run the real toyagent (the test binary, made toyagent
// by TestMain), with a home of their own.

// real returns a backend running toyagent, with a credential and a fresh
// toyagent home, and the home.
func real(t *testing.T) (agentcli.Backend, string) {
	t.Helper()
	home := t.TempDir()
	return New(&agentcli.Options{Path: drivertest.Self(t),
		Env: []string{envToyagent + "=1", "TOYAGENT_API_KEY=k", "TOYAGENT_HOME=" + home}}), home
}

var sessionRE = regexp.MustCompile(`^toy-[0-9a-f]{12}$`)

// kinds returns the kinds of evs, in order.
func kinds(evs []agentcli.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, string(ev.Kind))
	}
	return out
}

// A run streams the session, the text (a delta first: agentcli makes one
// of a whole text for a CLI that prints none), the usage and the result;
// the prompt arrives whole, whatever it looks like.
func TestRealRun(t *testing.T) {
	b, _ := real(t)
	prompt := "-model=evil -- --yolo"
	evs, err := drivertest.Collect(context.Background(), b, &agentcli.Request{Prompt: prompt})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(kinds(evs), " "), "init text_delta text usage result"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	res := evs[len(evs)-1].Result
	if res.Text != "You said: "+prompt || evs[1].Text != res.Text || !sessionRE.MatchString(res.SessionID) || evs[0].Model != "toy-1" ||
		res.Usage.OutputTokens != int64(len(res.Text)) || res.Turns != 1 {
		t.Fatalf("result %+v, init %+v", res, evs[0])
	}
}

// A session resumes: toyagent counts its turns.
func TestRealResume(t *testing.T) {
	b, home := real(t)
	first, err := b.Run(context.Background(), &agentcli.Request{Prompt: "one"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, "sessions", first.SessionID+".json")); err != nil {
		t.Fatalf("the session was not saved: %v", err)
	}
	second, err := b.Run(context.Background(), &agentcli.Request{Prompt: "two", SessionID: first.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if second.SessionID != first.SessionID || second.Text != "You said: two (turn 2)" {
		t.Fatalf("resumed: %+v", second)
	}
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "three", SessionID: "toy-000000000000"})
	var re *agentcli.ResultError
	if !errors.As(err, &re) || !errors.Is(err, agentcli.ErrSessionNotFound) || re.APIStatus != 404 {
		t.Fatalf("an unknown session: %v", err)
	}
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "three", SessionID: "-resume=x"})
	if rerr := drivertest.CheckRequestError(t, err, Name); rerr.Field != "SessionID" {
		t.Fatalf("a malformed session id: %v", err)
	}
}

// The system prompt reaches toyagent through its file, which is gone
// after the run.
func TestRealSystemPrompt(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	b, _ := real(t)
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", SystemPrompt: "Talk like a Pirate."})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Arr! You said: hi" {
		t.Fatalf("text %q", res.Text)
	}
	drivertest.AssertNoLeaks(t, "agentcli-run-")
}

// The shell tool runs under PermissionBypass only; its call and result
// are events, with agentcli's tool name.
func TestRealToolCall(t *testing.T) {
	b, _ := real(t)
	dir := t.TempDir()
	run := func(m agentcli.PermissionMode) ([]agentcli.Event, *agentcli.Result) {
		t.Helper()
		evs, err := drivertest.Collect(context.Background(), b, &agentcli.Request{Prompt: "run: touch made && echo hi", Dir: dir, Permission: m})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(kinds(evs), " "), "init tool_use tool_result text_delta text usage result"; got != want {
			t.Fatalf("events %s, want %s", got, want)
		}
		if u := evs[1].Tool; u.Name != agentcli.ToolNameBash || u.RawName != "shell" || u.Kind != agentcli.ToolExecute ||
			string(u.Input) != `{"command":"touch made \u0026\u0026 echo hi"}` || u.ID != evs[2].ToolResult.ID {
			t.Fatalf("tool use %+v", u)
		}
		return evs, evs[len(evs)-1].Result
	}
	evs, res := run("")
	if r := evs[2].ToolResult; !r.IsError || !strings.Contains(r.Output, "permission denied") || !strings.HasPrefix(res.Text, "I was not allowed") {
		t.Fatalf("deny: %+v, %q", r, res.Text)
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
		t.Fatal("the refused command ran")
	}
	evs, res = run(agentcli.PermissionBypass)
	if r := evs[2].ToolResult; r.IsError || r.Output != "hi\n" || r.ExitCode == nil || *r.ExitCode != 0 || res.Turns != 2 {
		t.Fatalf("bypass: %+v, %+v", r, res)
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err != nil {
		t.Fatal("the allowed command did not run")
	}
	_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "run: true", MaxTurns: 1, Permission: agentcli.PermissionBypass})
	var re *agentcli.ResultError
	if !errors.As(err, &re) || re.Subtype != "max_turns" {
		t.Fatalf("max turns: %v", err)
	}
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "run: true", Permission: agentcli.PermissionPlan})
	if !errors.Is(err, agentcli.ErrUnsupported) {
		t.Fatalf("plan mode: %v", err)
	}
}

// toyagent's failures are typed errors.
func TestRealErrors(t *testing.T) {
	b, _ := real(t)
	_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "you look overloaded"})
	var re *agentcli.ResultError
	if !errors.As(err, &re) || !errors.Is(err, agentcli.ErrRateLimited) || re.APIStatus != 429 || re.Backend != Name ||
		!sessionRE.MatchString(re.Result.SessionID) {
		t.Fatalf("rate limit: %v", err)
	}
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "hi", Model: "gpt-9"})
	if !errors.As(err, &re) || re.APIStatus != 400 || !strings.Contains(re.Message, "unknown model") {
		t.Fatalf("unknown model: %v", err)
	}
	// toyagent refuses the command line: an exit error with its usage.
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "hi", ExtraArgs: []string{"-bogus"}})
	var ee *agentcli.ExitError
	if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(ee.Stderr, "flag provided but not defined: -bogus") {
		t.Fatalf("bad flag: %v", err)
	}
	// Without a credential, nothing starts.
	nokey := New(&agentcli.Options{Path: drivertest.Self(t), Env: []string{envToyagent + "=1"}})
	_, err = nokey.Run(context.Background(), &agentcli.Request{Prompt: "hi", ReplaceEnv: true, Env: []string{"HOME=" + t.TempDir()}})
	var ce *agentcli.CredentialsError
	if !errors.As(err, &ce) || !errors.Is(err, agentcli.ErrAuth) {
		t.Fatalf("no credential: %v", err)
	}
	// toyagent's own refusal, when agentcli is told to leave it to the
	// CLI (ExtraArgs): classified from its stderr.
	_, err = nokey.Run(context.Background(), &agentcli.Request{Prompt: "hi", ReplaceEnv: true, ExtraArgs: []string{"-model=toy-2"},
		Env: []string{"HOME=" + t.TempDir()}})
	if !errors.As(err, &ee) || !errors.Is(err, agentcli.ErrAuth) || !strings.Contains(ee.Hint, "TOYAGENT_API_KEY") {
		t.Fatalf("toyagent without a credential: %v", err)
	}
}

// A run's wire log replays as the run went.
func TestRealReplay(t *testing.T) {
	b, _ := real(t)
	evs, err := drivertest.ReplayRoundTrip(t, b, &agentcli.Request{Prompt: "think about it"}, true)
	if err != nil || len(evs) != 7 || evs[2].Kind != agentcli.EventThinking || !strings.Contains(evs[2].Text, "think about it") {
		t.Fatalf("%v: %s", err, kinds(evs))
	}
}

// Doctor finds toyagent's version (toyagent -version) and credential.
func TestRealDiagnose(t *testing.T) {
	b, _ := real(t)
	d := b.(driver.Diagnoser).Diagnose(context.Background())
	if d.Status != agentcli.DiagnosisOK || d.Version != toyagent.Version || !d.InRange || strings.Join(d.Credentials, ",") != "TOYAGENT_API_KEY" {
		t.Fatalf("%+v", d)
	}
}
