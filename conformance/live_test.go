//go:build unix

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/driver/live"
)

// liveCase is what the live-session suite knows about one CLI: what is
// documented to differ between them.
type liveCase struct {
	name string
	// modes are the permission modes a live session supports; any other
	// fails StartSession with an *agentcli.UnsupportedError.
	modes []agentcli.PermissionMode
	// editInput: an allow decision may replace the tool call's input.
	editInput bool
	// denyEndsTurn: the CLI ends the turn at once when a tool call is
	// refused, instead of telling the model and going on (opencode).
	denyEndsTurn bool
	// denial is a piece of the tool result the model receives for a
	// refused call, when the CLI passes the host's message on ("" when it
	// sends its own wording only).
	denial string
	// rewrites maps a prompt to what the model receives instead, where
	// the backend documents the change (the CLI would run the prompt as a
	// command otherwise).
	rewrites map[string]string
}

var allModes = []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan}

// liveCases lists the CLIs under test, slowest first.
var liveCases = []liveCase{
	{
		// copilot ends the turn when a call is refused (ACP), and its
		// live session guards a leading "/" (its slash commands).
		name:         "copilot",
		modes:        allModes,
		denyEndsTurn: true,
		rewrites:     map[string]string{"/help": "\u200b/help"},
	},
	{
		// droid (ACP) ends the turn when a call is refused, and tells
		// the model about it in the next turn's history; it would run
		// "/..." as a command and attach a file "@" tags.
		name:         "droid",
		modes:        allModes,
		denyEndsTurn: true,
		rewrites:     map[string]string{"/help": "\u200b/help", "@README.md": "@\u2060README.md"},
	},
	{
		// qwen runs the command it asked about whatever input the host
		// sends back, and gives the model the host's message
		// ("[Operation Cancelled] Reason: ...").
		name:     "qwen",
		modes:    allModes,
		denial:   "not MARKER please",
		rewrites: map[string]string{"/help": " /help", "@README.md": `\@README.md`},
	},
	{
		// opencode ends the turn when a call is refused, and tells the
		// model about it (in its own words) in the next turn's history.
		name:         "opencode",
		modes:        allModes,
		denyEndsTurn: true,
		rewrites:     map[string]string{"/help": "\u200b/help"},
	},
	{
		// gemini cannot swap the command it asked about, and tells the
		// model "was canceled by the user" in its own words.
		name:     "gemini",
		modes:    allModes,
		rewrites: map[string]string{"/help": "\u200b/help"},
	},
	{
		name:  "claude",
		modes: allModes,
		// claude takes the host's updatedInput and message.
		editInput: true,
		denial:    "not MARKER please",
	},
	{
		// codex cannot swap the command it asked about, and tells the
		// model "rejected by user" in its own words.
		name:  "codex",
		modes: allModes,
	},
}

// TestLive drives each CLI as a live session, through agentcli.Open and
// agentcli.StartSession only.
func TestLive(t *testing.T) {
	for _, c := range liveCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := openBackend(t, c.name, nil)
			checkLiveCaps(t, c, b)
			t.Run("multiturn", func(t *testing.T) { testLiveMultiTurn(t, c, b) })
			t.Run("prompts", func(t *testing.T) { testLivePrompts(t, c, b) })
			t.Run("deny", func(t *testing.T) { testLiveDeny(t, c, b) })
			t.Run("allow-always", func(t *testing.T) { testLiveAllowAlways(t, c, b) })
			t.Run("edit-input", func(t *testing.T) { testLiveEditInput(t, c, b) })
			t.Run("interrupt", func(t *testing.T) { testLiveInterrupt(t, c, b) })
			t.Run("permission-timeout", func(t *testing.T) { testLivePermissionTimeout(t, c, b) })
			t.Run("close", func(t *testing.T) { testLiveClose(t, c, b) })
			t.Run("crash-resume", func(t *testing.T) { testLiveCrashResume(t, c, b) })
			t.Run("unsupported-mode", func(t *testing.T) { testLiveUnsupported(t, c, b) })
			t.Run("oneshot", func(t *testing.T) { testOneShotPermissions(t, c, b) })
			t.Run("wire-log", func(t *testing.T) { testLiveWireLog(t, c, b) })
		})
	}
}

// checkLiveCaps compares the backend's declared capabilities with the
// suite's table, once the backend declares live sessions at all.
func checkLiveCaps(t *testing.T, c liveCase, b agentcli.Backend) {
	caps := b.Capabilities()
	if !caps.Sessions {
		t.Logf("%s does not declare Capabilities().Sessions yet; the table below is what the suite expects", c.name)
		return
	}
	if !caps.Interrupt {
		t.Errorf("Capabilities().Interrupt = false; the suite interrupts %s turns", c.name)
	}
	if caps.EditInput != c.editInput {
		t.Errorf("Capabilities().EditInput = %v, want %v", caps.EditInput, c.editInput)
	}
	got := slices.Clone(caps.PermissionModes)
	want := slices.Clone(c.modes)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Capabilities().PermissionModes = %v, want %v", got, want)
	}
}

// liveSession starts a session for req and closes it (and checks that no
// process is left) when the test ends.
func liveSession(t *testing.T, b agentcli.Backend, req *agentcli.Request, tag string) agentcli.Session {
	t.Helper()
	// Two minutes: a gemini session resumed in the minute it was created
	// waits up to a minute for the next one (see gemini's live.go), then
	// starts its CLI.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := agentcli.StartSession(ctx, b, req)
	if err != nil {
		t.Fatalf("StartSession: %s", errSummary(err))
	}
	t.Logf("session started in %v", time.Since(start))
	t.Cleanup(func() {
		s.Close()
		assertNoProcs(t, tag)
	})
	return s
}

// liveRequest returns a session request wired to the env's server.
func (e *env) liveRequest() (*agentcli.Request, string) {
	req, tag := e.request("")
	req.Timeout = runTimeout
	return req, tag
}

// cliProcs returns the pids of the processes tagged tag that this test
// process started itself (the CLI, not its helpers).
func cliProcs(tag string) []int {
	var out []int
	for _, p := range procsWithTag(tag) {
		pidStr, _, _ := strings.Cut(p, " ")
		pid, err := strconv.Atoi(pidStr)
		if err != nil {
			continue
		}
		if ppidOf(pid) == os.Getpid() {
			out = append(out, pid)
		}
	}
	return out
}

// permissions records permission requests and answers them with decide.
type permissions struct {
	mu     sync.Mutex
	reqs   []agentcli.PermissionRequest
	decide func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision
}

func (p *permissions) callback(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
	p.mu.Lock()
	p.reqs = append(p.reqs, *r)
	p.mu.Unlock()
	return p.decide(ctx, r)
}

func (p *permissions) requests() []agentcli.PermissionRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs)
}

// fileExists reports whether dir/name exists.
func fileExists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// checkShellRequest checks a permission request for a shell command that
// mentions word.
func checkShellRequest(t *testing.T, r agentcli.PermissionRequest, word string) {
	t.Helper()
	if r.Tool.Name != agentcli.ToolNameBash || r.Tool.Kind != agentcli.ToolExecute {
		t.Errorf("permission request for tool %q (kind %q, raw %q), want %q (%q)", r.Tool.Name, r.Tool.Kind, r.Tool.RawName, agentcli.ToolNameBash, agentcli.ToolExecute)
	}
	if !strings.Contains(string(r.Tool.Input), word) && !strings.Contains(r.Title, word) {
		t.Errorf("permission request input %s / title %q does not mention %q", r.Tool.Input, r.Title, word)
	}
	kinds := map[agentcli.PermissionOptionKind]bool{}
	for _, o := range r.Options {
		kinds[o.Kind] = true
		if o.ID == "" {
			t.Errorf("option %+v has no id", o)
		}
	}
	if !kinds[agentcli.AllowOnce] || !kinds[agentcli.RejectOnce] {
		t.Errorf("options %+v lack allow_once or reject_once", r.Options)
	}
}

// testLiveMultiTurn: three prompts in one session; each model call sees the
// history; one CLI process serves all three.
func testLiveMultiTurn(t *testing.T, c liveCase, b agentcli.Backend) {
	prompts := []string{"First: remember apple.", "Second: remember pear.", "Third: which fruits?"}
	answers := []string{"Apple noted.", "Pear noted.", "Apple and pear."}
	e := newEnv(t, c.name,
		agentclitest.Turn{Text: answers[0]}, agentclitest.Turn{Text: answers[1]}, agentclitest.Turn{Text: answers[2]})
	req, tag := e.liveRequest()
	var texts strings.Builder
	req.OnText = func(s string) { texts.WriteString(s) }
	s := liveSession(t, b, req, tag)
	var pids []int
	for i, p := range prompts {
		res, err := s.Run(context.Background(), p)
		if err != nil {
			t.Fatalf("turn %d: %s", i+1, errSummary(err))
		}
		if res.Text != answers[i] {
			t.Errorf("turn %d: Result.Text = %q, want %q", i+1, res.Text, answers[i])
		}
		if res.SessionID == "" || res.SessionID != s.ID() {
			t.Errorf("turn %d: Result.SessionID = %q, Session.ID() = %q", i+1, res.SessionID, s.ID())
		}
		procs := cliProcs(tag)
		if len(procs) != 1 {
			t.Fatalf("turn %d: %d CLI processes (%v), want 1", i+1, len(procs), procsWithTag(tag))
		}
		pids = append(pids, procs[0])
	}
	if pids[0] != pids[1] || pids[1] != pids[2] {
		t.Errorf("the turns were served by processes %v, want one", pids)
	}
	if got, want := texts.String(), strings.Join(answers, ""); got != want {
		t.Errorf("OnText got %q, want %q", got, want)
	}
	last := e.lastMain()
	for i := range 2 {
		if !hasMessage(last.Messages, "user", prompts[i]) || !hasMessage(last.Messages, "assistant", answers[i]) {
			t.Errorf("the third model call lacks turn %d's history (%q → %q): %+v", i+1, prompts[i], answers[i], last.Messages)
		}
	}
	if got := last.LastUserText(); got != prompts[2] {
		t.Errorf("the third model call's last user text = %q, want %q", got, prompts[2])
	}
	if n := len(e.main()); n != 3 {
		t.Errorf("%d main model calls, want 3: %s", n, describe(e.srv.Requests()))
	}
}

// testLivePrompts: prompts that look like flags, commands or file
// includes reach the model as they are, in one session.
func testLivePrompts(t *testing.T, c liveCase, b agentcli.Backend) {
	prompts := []string{"--help", "/help", "@README.md"}
	e := newEnv(t, c.name, agentclitest.Turn{Text: "ok"}, agentclitest.Turn{Text: "ok"}, agentclitest.Turn{Text: "ok"})
	req, tag := e.liveRequest()
	s := liveSession(t, b, req, tag)
	for i, p := range prompts {
		res, err := s.Run(context.Background(), p)
		if err != nil {
			t.Fatalf("Run(%q): %s", p, errSummary(err))
		}
		if res.Text != "ok" {
			t.Errorf("Run(%q): Result.Text = %q", p, res.Text)
		}
		m := e.main()
		if len(m) != i+1 {
			t.Fatalf("after prompt %q: %d main model calls, want %d (was it run as a command?)", p, len(m), i+1)
		}
		want, rewritten := c.rewrites[p]
		if rewritten {
			t.Logf("documented fallback: %s changes %q to %q", c.name, p, want)
		} else {
			want = p
		}
		if got := m[i].LastUserText(); got != want {
			t.Errorf("the model saw %q, want %q", got, want)
		}
		if strings.Contains(string(m[i].Body), readmeMarker) {
			t.Errorf("the request carries README.md's content: %q was expanded", p)
		}
	}
}

// testLiveDeny: the callback refuses `touch MARKER`; the file is never
// made; the model hears of the refusal (or, where the CLI ends the turn
// on a refusal, the next turn's history holds it).
func testLiveDeny(t *testing.T, c liveCase, b agentcli.Backend) {
	e := newEnv(t, c.name, agentclitest.Turn{Shell: "touch MARKER"}, agentclitest.Turn{Text: "understood"})
	req, tag := e.liveRequest()
	perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "not MARKER please"}
	}}
	req.Permission = agentcli.PermissionAsk
	req.OnPermission = perms.callback
	s := liveSession(t, b, req, tag)
	evs, res, err := collectTurn(s, context.Background(), "Make the marker file.")
	if err != nil {
		t.Fatalf("turn: %s", errSummary(err))
	}
	rs := perms.requests()
	if len(rs) != 1 {
		t.Fatalf("%d permission requests, want 1: %+v", len(rs), rs)
	}
	checkShellRequest(t, rs[0], "MARKER")
	if rs[0].SessionID == "" {
		t.Error("PermissionRequest.SessionID is empty")
	}
	if fileExists(e.w.Dir, "MARKER") {
		t.Fatal("MARKER exists: the refused command ran")
	}
	if !hasKind(evs, agentcli.EventToolUse) {
		t.Errorf("no EventToolUse for the refused call among %d events", len(evs))
	}
	if c.denyEndsTurn {
		// opencode: the turn ends with no further model call; the next
		// turn's history carries the refusal as the tool's result.
		if n := len(e.main()); n != 1 {
			t.Errorf("%d main model calls in the refused turn, want 1 (the turn ends): %s", n, describe(e.srv.Requests()))
		}
		t.Logf("the refused turn ended with %q (stop %q)", res.Text, res.StopReason)
		res, err = s.Run(context.Background(), "Fine, never mind.")
		if err != nil {
			t.Fatalf("next turn: %s", errSummary(err))
		}
	}
	if res.Text != "understood" {
		t.Errorf("Result.Text = %q, want %q", res.Text, "understood")
	}
	last := e.lastMain()
	if len(last.ToolResults) == 0 {
		t.Fatalf("the model call after the refusal carries no tool result: %s", describe(e.srv.Requests()))
	}
	out := last.ToolResults[len(last.ToolResults)-1].Output
	t.Logf("the model received the refusal as %q", out)
	if c.denial != "" && !strings.Contains(out, c.denial) {
		t.Errorf("the tool result %q lacks the host's message %q", out, c.denial)
	}
}

// collectTurn streams one turn and returns its events and outcome.
func collectTurn(s agentcli.Session, ctx context.Context, prompt string) ([]agentcli.Event, *agentcli.Result, error) {
	var evs []agentcli.Event
	var res *agentcli.Result
	for ev, err := range s.Stream(ctx, prompt) {
		if err != nil {
			return evs, nil, err
		}
		evs = append(evs, ev)
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
	}
	if res == nil {
		return evs, nil, errors.New("no result event")
	}
	return evs, res, nil
}

func hasKind(evs []agentcli.Event, k agentcli.EventKind) bool {
	for _, ev := range evs {
		if ev.Kind == k {
			return true
		}
	}
	return false
}

// testLiveAllowAlways: allow_always for a command; the same command again
// runs without asking.
func testLiveAllowAlways(t *testing.T, c liveCase, b agentcli.Backend) {
	e := newEnv(t, c.name, agentclitest.Turn{Shell: "touch ALWAYS"}, agentclitest.Turn{Shell: "touch ALWAYS"}, agentclitest.Turn{Text: "both done"})
	req, tag := e.liveRequest()
	perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{Kind: agentcli.AllowAlways}
	}}
	req.Permission = agentcli.PermissionAsk
	req.OnPermission = perms.callback
	s := liveSession(t, b, req, tag)
	evs, res, err := collectTurn(s, context.Background(), "Touch it twice.")
	if err != nil {
		t.Fatalf("turn: %s", errSummary(err))
	}
	if res.Text != "both done" {
		t.Errorf("Result.Text = %q, want %q", res.Text, "both done")
	}
	rs := perms.requests()
	if len(rs) != 1 {
		t.Fatalf("%d permission requests, want 1 (the second call is allowed always): %+v", len(rs), rs)
	}
	checkShellRequest(t, rs[0], "ALWAYS")
	if !fileExists(e.w.Dir, "ALWAYS") {
		t.Error("ALWAYS does not exist: the allowed command did not run")
	}
	n := 0
	for _, ev := range evs {
		if ev.Kind == agentcli.EventToolResult {
			n++
		}
	}
	if n < 2 {
		t.Errorf("%d tool results, want 2", n)
	}
}

// testLiveEditInput: the callback allows the call with an edited command;
// the edited one runs where the CLI can edit input, and nothing runs where
// it cannot.
func testLiveEditInput(t *testing.T, c liveCase, b agentcli.Backend) {
	e := newEnv(t, c.name, agentclitest.Turn{Shell: "touch ORIGINAL"}, agentclitest.Turn{Text: "edited done"})
	req, tag := e.liveRequest()
	perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		var in map[string]any
		if err := json.Unmarshal(r.Tool.Input, &in); err != nil {
			return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "bad input"}
		}
		for k, v := range in {
			if s, ok := v.(string); ok {
				in[k] = strings.ReplaceAll(s, "ORIGINAL", "EDITED")
			}
		}
		edited, _ := json.Marshal(in)
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce, Input: edited}
	}}
	req.Permission = agentcli.PermissionAsk
	req.OnPermission = perms.callback
	s := liveSession(t, b, req, tag)
	_, res, err := collectTurn(s, context.Background(), "Touch the file.")
	if err != nil {
		t.Fatalf("turn: %s", errSummary(err))
	}
	if len(perms.requests()) != 1 {
		t.Fatalf("%d permission requests, want 1", len(perms.requests()))
	}
	if fileExists(e.w.Dir, "ORIGINAL") {
		t.Error("ORIGINAL exists: the unedited command ran")
	}
	if c.editInput {
		if !fileExists(e.w.Dir, "EDITED") {
			t.Error("EDITED does not exist: the edited command did not run")
		}
		if res.Text != "edited done" {
			t.Errorf("Result.Text = %q, want %q", res.Text, "edited done")
		}
	} else if fileExists(e.w.Dir, "EDITED") {
		t.Errorf("EDITED exists, but %s is documented not to edit input", c.name)
	}
}

// waitMainCalls waits until the server has seen n main model calls.
func waitMainCalls(t *testing.T, e *env, n int, done <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for len(e.main()) < n {
		select {
		case <-done:
			t.Fatalf("the turn ended before model call %d: %s", n, describe(e.srv.Requests()))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("model call %d never came: %s", n, describe(e.srv.Requests()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testLiveInterrupt: a turn whose model call stalls is interrupted; it ends
// with ErrInterrupted promptly, and the same process answers the next
// prompt.
func testLiveInterrupt(t *testing.T, c liveCase, b agentcli.Backend) {
	e := newEnv(t, c.name, agentclitest.Turn{Stall: true}, agentclitest.Turn{Text: "after the interrupt"})
	req, tag := e.liveRequest()
	s := liveSession(t, b, req, tag)
	type outcome struct {
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	ended := make(chan struct{})
	go func() {
		_, _, err := collectTurn(s, context.Background(), "Take your time.")
		done <- outcome{err, time.Now()}
		close(ended)
	}()
	waitMainCalls(t, e, 1, ended)
	pids := cliProcs(tag)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Interrupt(ctx); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the turn did not end within 30 s of Interrupt")
	}
	d := o.at.Sub(start)
	t.Logf("the turn ended %v after Interrupt: %s", d, errSummary(o.err))
	if !errors.Is(o.err, agentcli.ErrInterrupted) {
		t.Fatalf("turn error %s does not match ErrInterrupted", errSummary(o.err))
	}
	if err := s.Err(); err != nil {
		t.Fatalf("the session died: %s", errSummary(err))
	}
	// The failure this guards against is a turn that never ends (the
	// session's own watchdog kills the CLI after the interrupt grace). A
	// CLI on a loaded machine may take seconds (opencode took 2.3 s), which
	// the default grace allows: the session must survive that.
	if d > live.DefaultInterruptGrace {
		t.Errorf("the turn took %v to end after Interrupt (interrupt grace %v)", d, live.DefaultInterruptGrace)
	}
	res, err := s.Run(context.Background(), "Now answer.")
	if err != nil {
		t.Fatalf("the next turn: %s", errSummary(err))
	}
	if res.Text != "after the interrupt" {
		t.Errorf("next Result.Text = %q, want %q", res.Text, "after the interrupt")
	}
	if after := cliProcs(tag); !slices.Equal(pids, after) || len(after) != 1 {
		t.Errorf("CLI processes before the interrupt %v, after the next turn %v; want the same one", pids, after)
	}
}

// testLivePermissionTimeout: a callback that never answers; the request's
// deadline applies the default decision (refuse) and the session goes on.
func testLivePermissionTimeout(t *testing.T, c liveCase, b agentcli.Backend) {
	e := newEnv(t, c.name, agentclitest.Turn{Shell: "touch TIMEOUT"}, agentclitest.Turn{Text: "went on"})
	req, tag := e.liveRequest()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var called sync.WaitGroup
	called.Add(1)
	var once sync.Once
	req.Permission = agentcli.PermissionAsk
	req.PermissionTimeout = time.Second
	req.OnPermission = func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		once.Do(called.Done)
		<-release // ignores ctx: the deadline must not depend on the callback
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}
	s := liveSession(t, b, req, tag)
	start := time.Now()
	_, res, err := collectTurn(s, context.Background(), "Touch it.")
	called.Wait()
	if err != nil {
		t.Fatalf("turn: %s", errSummary(err))
	}
	t.Logf("turn took %v with a 1 s permission timeout", time.Since(start))
	if fileExists(e.w.Dir, "TIMEOUT") {
		t.Fatal("TIMEOUT exists: the command ran although the request timed out")
	}
	if c.denyEndsTurn {
		res, err = s.Run(context.Background(), "Go on.")
		if err != nil {
			t.Fatalf("next turn: %s", errSummary(err))
		}
	}
	if res.Text != "went on" {
		t.Errorf("Result.Text = %q, want %q", res.Text, "went on")
	}
}

// testLiveClose: Close after a turn and Close in the middle of one leave no
// process; the session reports ErrSessionClosed.
func testLiveClose(t *testing.T, c liveCase, b agentcli.Backend) {
	e := newEnv(t, c.name, agentclitest.Turn{Text: "one"}, agentclitest.Turn{Stall: true})
	req, tag := e.liveRequest()
	s := liveSession(t, b, req, tag)
	if _, err := s.Run(context.Background(), "One."); err != nil {
		t.Fatalf("turn: %s", errSummary(err))
	}
	ended := make(chan error, 1)
	go func() {
		_, _, err := collectTurn(s, context.Background(), "Stall.")
		ended <- err
	}()
	waitMainCalls(t, e, 2, nil)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	d := time.Since(start)
	t.Logf("Close took %v", d)
	if d > killGrace+time.Second+500*time.Millisecond {
		t.Errorf("Close took %v, more than the kill grace %v plus a second", d, killGrace)
	}
	assertNoProcs(t, tag)
	select {
	case err := <-ended:
		if !errors.Is(err, agentcli.ErrSessionClosed) {
			t.Errorf("the turn cut by Close ended with %s, want ErrSessionClosed", errSummary(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not end after Close")
	}
	if err := s.Err(); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Errorf("Err() = %v, want ErrSessionClosed", err)
	}
	if _, err := s.Run(context.Background(), "Again."); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Errorf("a turn after Close: %s, want ErrSessionClosed", errSummary(err))
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// testLiveCrashResume: the CLI is killed in the middle of a turn; the turn
// fails with a typed error, the session is dead, nothing is left running,
// and a new session started with the session id sees the history.
func testLiveCrashResume(t *testing.T, c liveCase, b agentcli.Backend) {
	const (
		prompt1 = "Remember the word cherry."
		answer1 = "Cherry remembered."
		answer3 = "The word was cherry."
	)
	e := newEnv(t, c.name, agentclitest.Turn{Text: answer1}, agentclitest.Turn{Stall: true}, agentclitest.Turn{Text: answer3})
	req, tag := e.liveRequest()
	s := liveSession(t, b, req, tag)
	if _, err := s.Run(context.Background(), prompt1); err != nil {
		t.Fatalf("turn 1: %s", errSummary(err))
	}
	id := s.ID()
	if id == "" {
		t.Fatal("no session id after a turn")
	}
	ended := make(chan error, 1)
	go func() {
		_, _, err := collectTurn(s, context.Background(), "Think about it.")
		ended <- err
	}()
	waitMainCalls(t, e, 2, nil)
	procs := cliProcs(tag)
	if len(procs) != 1 {
		t.Fatalf("CLI processes %v, want 1", procs)
	}
	if err := syscall.Kill(procs[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var turnErr error
	select {
	case turnErr = <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the turn did not end after the CLI was killed")
	}
	t.Logf("turn error after the kill: %s", errSummary(turnErr))
	var ee *agentcli.ExitError
	if !errors.As(turnErr, &ee) || ee.Code != -1 {
		t.Errorf("turn error %s, want an *agentcli.ExitError with Code -1 (killed)", errSummary(turnErr))
	}
	if err := s.Err(); !errors.As(err, &ee) {
		t.Errorf("Err() = %s, want the *agentcli.ExitError", errSummary(err))
	}
	if _, err := s.Run(context.Background(), "Still there?"); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Errorf("a turn on the dead session: %s, want ErrSessionClosed", errSummary(err))
	}
	assertNoProcs(t, tag)

	req2, tag2 := e.liveRequest()
	req2.SessionID = id
	s2 := liveSession(t, b, req2, tag2)
	res, err := s2.Run(context.Background(), "What was the word?")
	if err != nil {
		t.Fatalf("resumed turn: %s", errSummary(err))
	}
	if res.Text != answer3 {
		t.Errorf("resumed Result.Text = %q, want %q", res.Text, answer3)
	}
	last := e.lastMain()
	if !hasMessage(last.Messages, "user", prompt1) || !hasMessage(last.Messages, "assistant", answer1) {
		t.Errorf("the resumed session's model call lacks the first turn: %+v", last.Messages)
	}
}

// testLiveUnsupported: a permission mode the CLI lacks fails StartSession
// with an *agentcli.UnsupportedError naming the backend and the mode,
// before any process starts.
func testLiveUnsupported(t *testing.T, c liveCase, b agentcli.Backend) {
	modes := append(slices.DeleteFunc(slices.Clone(allModes), func(m agentcli.PermissionMode) bool {
		return slices.Contains(c.modes, m)
	}), "sometimes")
	for _, m := range modes {
		req := &agentcli.Request{Permission: m, OnPermission: func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
			return agentcli.PermissionDecision{}
		}}
		tag := newTag()
		req.Env = []string{tagKey + "=" + tag}
		s, err := agentcli.StartSession(context.Background(), b, req)
		if s != nil {
			s.Close()
		}
		if m == "sometimes" {
			// Not a mode at all: the request is wrong, whatever the backend.
			var re *agentcli.RequestError
			if !errors.As(err, &re) || re.Field != "Permission" {
				t.Errorf("mode %q: %s, want an *agentcli.RequestError on Permission", m, errSummary(err))
			}
			assertNoProcs(t, tag)
			continue
		}
		var ue *agentcli.UnsupportedError
		if !errors.As(err, &ue) || !errors.Is(err, agentcli.ErrUnsupported) {
			t.Errorf("mode %q: %s, want an *agentcli.UnsupportedError", m, errSummary(err))
			continue
		}
		if ue.Backend != c.name || !strings.Contains(ue.Feature, string(m)) {
			t.Errorf("mode %q: UnsupportedError %+v does not name the backend and the mode", m, ue)
		}
		assertNoProcs(t, tag)
	}
}

// testOneShotPermissions: Backend.Run with PermissionAsk (the callback
// refuses) and PermissionDeny: the command never runs and the run goes on.
func testOneShotPermissions(t *testing.T, c liveCase, b agentcli.Backend) {
	for _, m := range []agentcli.PermissionMode{agentcli.PermissionAsk, agentcli.PermissionDeny} {
		t.Run(string(m), func(t *testing.T) {
			if !slices.Contains(b.Capabilities().PermissionModes, m) {
				msg := fmt.Sprintf("%s does not declare permission mode %q for one-shot runs yet (Backend.Run/Stream must route it through live.OneShot or the CLI's flags)", c.name, m)
				if os.Getenv("CI") == "true" {
					t.Fatal(msg)
				}
				t.Skip(msg)
			}
			e := newEnv(t, c.name, agentclitest.Turn{Shell: "touch ONESHOT"}, agentclitest.Turn{Text: "one-shot done"})
			req, tag := e.request("Touch it.")
			req.Permission = m
			perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
				return agentcli.PermissionDecision{Kind: agentcli.RejectOnce}
			}}
			req.OnPermission = perms.callback
			res, _, err := run(t, b, req, tag)
			if fileExists(e.w.Dir, "ONESHOT") {
				t.Fatal("ONESHOT exists: the command ran")
			}
			if m == agentcli.PermissionAsk && len(perms.requests()) != 1 {
				t.Errorf("%d permission requests, want 1", len(perms.requests()))
			}
			if m == agentcli.PermissionDeny && len(perms.requests()) != 0 {
				t.Errorf("the callback was asked %d times under PermissionDeny", len(perms.requests()))
			}
			if err != nil {
				t.Fatalf("Run: %s", errSummary(err))
			}
			if !c.denyEndsTurn && res.Text != "one-shot done" {
				t.Errorf("Result.Text = %q, want %q", res.Text, "one-shot done")
			}
		})
	}
}

// testLiveWireLog: a two-turn session with a tool call (asked about and
// allowed by the callback) recorded with Request.WireLog replays into the
// same events, turn by turn, without the CLI.
func testLiveWireLog(t *testing.T, c liveCase, b agentcli.Backend) {
	e := newEnv(t, c.name,
		agentclitest.Turn{Shell: "echo wirelog > WIRELOG"},
		agentclitest.Turn{Text: "The command ran."},
		agentclitest.Turn{Text: "Second turn answered."},
	)
	req, tag := e.liveRequest()
	var log bytes.Buffer
	req.WireLog = &log
	perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}}
	req.Permission = agentcli.PermissionAsk
	req.OnPermission = perms.callback
	s := liveSession(t, b, req, tag)
	var live strings.Builder
	var results []string
	for _, p := range []string{"Run the command.", "And now?"} {
		for ev, err := range s.Stream(context.Background(), p) {
			if err != nil {
				t.Fatalf("turn %q: %s", p, errSummary(err))
			}
			if ev.Kind == agentcli.EventResult {
				results = append(results, ev.Result.Text)
			}
			live.WriteString(describeEvent(ev))
		}
	}
	s.Close()
	if !slices.Equal(results, []string{"The command ran.", "Second turn answered."}) {
		t.Fatalf("results %q", results)
	}
	if len(perms.requests()) != 1 || !fileExists(e.w.Dir, "WIRELOG") {
		t.Fatalf("the tool call was not asked about and run: %d requests", len(perms.requests()))
	}
	if !strings.Contains(live.String(), `"kind":"tool_use"`) || !strings.Contains(live.String(), `"kind":"tool_result"`) {
		t.Errorf("the session's events lack the tool call:\n%s", live.String())
	}
	var replay strings.Builder
	for ev, err := range agentcli.Replay(b, bytes.NewReader(log.Bytes())) {
		if err != nil {
			replay.WriteString("error " + errSummary(err) + "\n")
			continue
		}
		replay.WriteString(describeEvent(ev))
	}
	if replay.String() != live.String() {
		t.Errorf("the replay differs from the session\nsession:\n%s\nreplay:\n%s\nlog:\n%s", live.String(), replay.String(), log.String())
	}
	if n := strings.Count(log.String(), `{"t":"turn"}`); n != 2 {
		t.Errorf("the log holds %d turns, want 2", n)
	}
}

// describeEvent renders an event as a JSON line, its result's duration
// zeroed (a replay has none).
func describeEvent(ev agentcli.Event) string {
	if ev.Result != nil {
		r := *ev.Result
		r.Duration = 0
		ev.Result = &r
	}
	j, _ := json.Marshal(ev)
	return string(j) + "\n"
}
