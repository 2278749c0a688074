//go:build unix

package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// switchCase is what the switch suite knows about one CLI.
type switchCase struct {
	name string
	// model is the model SetModel switches to, atServer what the model
	// server then sees; modelEnv declares it where the CLI must know it.
	model, atServer string
	modelEnv        func(t testing.TB, w *agentclitest.Wiring) []string
	// modes are the modes SetPermission switches among, from bypass;
	// nil: only plan, from deny, and back (opencode).
	allModes bool
	// steer is how Steer reaches a running turn.
	steer agentcli.SteerMode
}

var switchCases = []switchCase{
	{name: "qwen", model: "qwen-switch-model", atServer: "qwen-switch-model", allModes: true, steer: agentcli.SteerQueued},
	{name: "opencode", model: "agentclitest/switch-model-x", atServer: "switch-model-x",
		modelEnv: opencodeExtraModel("switch-model-x"), steer: agentcli.SteerNative},
	{name: "gemini", model: "gemini-switch-model", atServer: "gemini-switch-model", allModes: true, steer: agentcli.SteerQueued},
	{name: "claude", model: "claude-switch-model", atServer: "claude-switch-model", allModes: true, steer: agentcli.SteerNative},
	{name: "codex", model: "codex-switch-model", atServer: "codex-switch-model", allModes: true, steer: agentcli.SteerNative},
	{name: "copilot", model: "copilot-switch-model", atServer: "copilot-switch-model", allModes: true, steer: agentcli.SteerQueued},
	{name: "droid", model: "custom:droid-switch-model", atServer: "droid-switch-model",
		modelEnv: droidExtraModel("droid-switch-model"), allModes: true, steer: agentcli.SteerQueued},
}

// TestSwitch drives SetModel, SetPermission and Steer on each real CLI's
// live session.
func TestSwitch(t *testing.T) {
	for _, c := range switchCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := openBackend(t, c.name, nil)
			caps := b.Capabilities()
			if !caps.SetModel || caps.Steer != c.steer || len(caps.SetPermission) == 0 {
				t.Errorf("Capabilities SetModel %v, SetPermission %v, Steer %q; want true, some, %q", caps.SetModel, caps.SetPermission, caps.Steer, c.steer)
			}
			t.Run("model", func(t *testing.T) { testSwitchModel(t, c, b) })
			t.Run("permission", func(t *testing.T) { testSwitchPermission(t, c, b) })
			t.Run("steer", func(t *testing.T) { testSteer(t, c, b) })
		})
	}
}

// testSwitchModel: a turn on the default model, SetModel, and the next
// turn's model requests ask for the new model.
func testSwitchModel(t *testing.T, c switchCase, b agentcli.Backend) {
	e := newEnv(t, c.name, agentclitest.Turn{Text: "before"}, agentclitest.Turn{Text: "after"})
	req, tag := e.liveRequest()
	if c.modelEnv != nil {
		req.Env = append(req.Env, c.modelEnv(t, e.w)...)
	}
	w := wire(req)
	s := liveSession(t, b, req, tag)
	defer w.check(t, b, s)
	ctx := context.Background()
	if res, err := w.run(ctx, s, "Turn one."); err != nil || res.Text != "before" {
		t.Fatalf("turn 1: %s, %s: %s", resText(res), errSummary(err), describe(e.srv.Requests()))
	}
	n := len(e.main())
	if got := e.main()[0].Model; got == c.atServer {
		t.Fatalf("the first turn already asked for %q", got)
	}
	if err := agentcli.SetModel(ctx, s, c.model); err != nil {
		t.Fatalf("SetModel: %s", errSummary(err))
	}
	if res, err := w.run(ctx, s, "Turn two."); err != nil || res.Text != "after" {
		t.Fatalf("turn 2: %s, %s: %s", resText(res), errSummary(err), describe(e.srv.Requests()))
	}
	after := e.main()[n:]
	if len(after) == 0 {
		t.Fatalf("no model call after SetModel: %s", describe(e.srv.Requests()))
	}
	for _, r := range after {
		if r.Model != c.atServer {
			t.Errorf("a model call after SetModel asked for %q, want %q: %s", r.Model, c.atServer, describe(e.srv.Requests()))
		}
	}
	if err := agentcli.SetModel(ctx, s, " "); !isRequestError(err) {
		t.Errorf("SetModel(\" \") = %v, want a *RequestError", err)
	}
}

func resText(res *agentcli.Result) string {
	if res == nil {
		return "no result"
	}
	return "result " + strconv.Quote(res.Text)
}

func isRequestError(err error) bool {
	var re *agentcli.RequestError
	return errors.As(err, &re)
}

// permTurn runs a turn whose model asks for "touch NAME", and reports
// whether the file was made and how many permission requests came.
func permTurn(t *testing.T, e *env, w *wired, s agentcli.Session, perms *permissions, name string) (made bool, asked int) {
	t.Helper()
	before := len(perms.requests())
	// Only the command is scripted: a CLI whose refusal ends the turn
	// (copilot, opencode) makes no further model call, and one that goes
	// on gets the server's default text.
	e.srv.Push(agentclitest.Turn{Shell: "touch " + name})
	if _, err := w.run(context.Background(), s, "Make the file "+name+"."); err != nil {
		t.Fatalf("turn %s: %s", name, errSummary(err))
	}
	return fileExists(e.w.Dir, name), len(perms.requests()) - before
}

// testSwitchPermission: a session started under bypass runs a command;
// switched to deny it refuses one without asking; to ask it asks; back
// to bypass it runs one without asking. opencode, whose modes are fixed
// at spawn, switches deny → plan → deny, and refuses the others.
func testSwitchPermission(t *testing.T, c switchCase, b agentcli.Backend) {
	e := newEnv(t, c.name)
	req, tag := e.liveRequest()
	perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}}
	req.OnPermission = perms.callback
	w := wire(req)
	ctx := context.Background()
	if !c.allModes {
		s := liveSession(t, b, req, tag) // deny
		defer w.check(t, b, s)
		for _, m := range []agentcli.PermissionMode{agentcli.PermissionAsk, agentcli.PermissionBypass} {
			var ue *agentcli.UnsupportedError
			if err := agentcli.SetPermission(ctx, s, m); !errors.As(err, &ue) {
				t.Errorf("SetPermission(%s) = %v, want an *UnsupportedError", m, err)
			}
		}
		if made, asked := permTurn(t, e, w, s, perms, "DENIED1"); made || asked != 0 {
			t.Errorf("deny after a refused switch: made %v, asked %d", made, asked)
		}
		if err := agentcli.SetPermission(ctx, s, agentcli.PermissionPlan); err != nil {
			t.Fatalf("SetPermission(plan): %s", errSummary(err))
		}
		if made, asked := permTurn(t, e, w, s, perms, "PLANNED"); made || asked != 0 {
			t.Errorf("plan: made %v, asked %d", made, asked)
		}
		if err := agentcli.SetPermission(ctx, s, agentcli.PermissionDeny); err != nil {
			t.Fatalf("SetPermission(deny): %s", errSummary(err))
		}
		if made, asked := permTurn(t, e, w, s, perms, "DENIED2"); made || asked != 0 {
			t.Errorf("deny again: made %v, asked %d", made, asked)
		}
		return
	}
	req.Permission = agentcli.PermissionBypass
	s := liveSession(t, b, req, tag)
	defer w.check(t, b, s)
	steps := []struct {
		mode        agentcli.PermissionMode
		file        string
		made, asked bool
	}{
		{"", "BYPASS1", true, false},
		{agentcli.PermissionDeny, "DENIED", false, false},
		{agentcli.PermissionAsk, "ASKED", true, true},
		{agentcli.PermissionBypass, "BYPASS2", true, false},
	}
	for _, st := range steps {
		if st.mode != "" {
			if err := agentcli.SetPermission(ctx, s, st.mode); err != nil {
				t.Fatalf("SetPermission(%s): %s", st.mode, errSummary(err))
			}
		}
		made, asked := permTurn(t, e, w, s, perms, st.file)
		if e.srv.Remaining() > 0 { // a refusal ended the turn (droid): a turn of its own takes the answer left
			if _, err := w.run(ctx, s, "Go on."); err != nil {
				t.Fatalf("the turn after %s: %s", st.file, errSummary(err))
			}
		}
		t.Logf("mode %q: %s made %v, %d permission requests", cmpOr(st.mode, "bypass (start)"), st.file, made, asked)
		if made != st.made || (asked > 0) != st.asked {
			t.Errorf("mode %q: %s made %v, asked %d times; want made %v, asked %v: %s", st.mode, st.file, made, asked, st.made, st.asked, describe(e.srv.Requests()))
		}
	}
}

func cmpOr(m agentcli.PermissionMode, def string) string {
	if m == "" {
		return def
	}
	return string(m)
}

// testSteer: while a turn runs a slow command, Steer sends more input. A
// native steer reaches the turn's next model request; a queued one the
// request after the turn's answer. Either way the Stream yields exactly
// one result, the answer to the last model request, and the next turn
// is a turn of its own. Without a running turn Steer fails with
// ErrNoTurn.
func testSteer(t *testing.T, c switchCase, b agentcli.Backend) {
	const steer = "STEER-7d1e please also say hi"
	texts := []string{"", "answer after the command", "answer to the steer", "the next turn"}
	e := newEnv(t, c.name, agentclitest.Turn{Shell: "echo started; sleep 3; echo done"}, agentclitest.Turn{Text: texts[1]},
		agentclitest.Turn{Text: texts[2]}, agentclitest.Turn{Text: texts[3]})
	req, tag := e.liveRequest()
	req.Permission = agentcli.PermissionBypass
	w := wire(req)
	s := liveSession(t, b, req, tag)
	defer w.check(t, b, s)
	ctx := context.Background()
	if err := agentcli.Steer(ctx, s, steer); !errors.Is(err, agentcli.ErrNoTurn) {
		t.Fatalf("Steer before any turn = %v, want ErrNoTurn", err)
	}
	type outcome struct {
		evs []agentcli.Event
		err error
	}
	done := make(chan outcome, 1)
	ended := make(chan struct{})
	go func() {
		var o outcome
		for ev, err := range s.Stream(ctx, "Run the slow command.") {
			w.record(ev, err)
			if err != nil {
				o.err = err
				break
			}
			o.evs = append(o.evs, ev)
		}
		done <- o
		close(ended)
	}()
	waitMainCalls(t, e, 1, ended)
	time.Sleep(300 * time.Millisecond) // the command is running
	if err := agentcli.Steer(ctx, s, steer); err != nil {
		var o outcome
		select {
		case o = <-done:
		case <-time.After(10 * time.Second):
		}
		t.Fatalf("Steer: %s; the turn: %s, %d events %s", errSummary(err), errSummary(o.err), len(o.evs), describeEvents(o.evs))
	}
	var o outcome
	select {
	case o = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the steered turn did not end")
	}
	if o.err != nil {
		t.Fatalf("steered turn: %s", errSummary(o.err))
	}
	var results []*agentcli.Result
	for _, ev := range o.evs {
		if ev.Kind == agentcli.EventResult {
			results = append(results, ev.Result)
		}
	}
	if len(results) != 1 {
		t.Fatalf("%d results in the steered Stream, want 1", len(results))
	}
	main := e.main()
	at := slices.IndexFunc(main, func(r agentclitest.ModelRequest) bool {
		return slices.ContainsFunc(r.Messages, func(m agentclitest.Message) bool { return strings.Contains(m.Text, "STEER-7d1e") })
	})
	t.Logf("the steer reached model request %d of %d; result %q", at, len(main), results[0].Text)
	want := 1 // native: the turn's request after the command
	if c.steer == agentcli.SteerQueued {
		want = 2 // after the turn's answer
	}
	if at != want {
		t.Fatalf("the steered input reached model request %d, want %d: %s", at, want, describe(e.srv.Requests()))
	}
	if results[0].Text != texts[at] {
		t.Errorf("Result.Text = %q, want %q (the answer to the steered request)", results[0].Text, texts[at])
	}
	// The log says how the steer went: into the turn, or a follow-up
	// (read once the session is closed: its reader writes the log).
	w.closed = func(log string) {
		if rec := `{"t":"turn","steered":true}`; strings.Contains(log, rec) != (c.steer == agentcli.SteerQueued) {
			t.Errorf("the log holds %s: %v; steer %s", rec, c.steer != agentcli.SteerQueued, c.steer)
		}
	}
	if len(main) != at+1 {
		t.Errorf("%d model requests in the steered turn, want %d: %s", len(main), at+1, describe(e.srv.Requests()))
	}
	if err := agentcli.Steer(ctx, s, steer); !errors.Is(err, agentcli.ErrNoTurn) {
		t.Errorf("Steer between turns = %v, want ErrNoTurn", err)
	}
	res, err := w.run(ctx, s, "And now?")
	if err != nil {
		t.Fatalf("the next turn: %s", errSummary(err))
	}
	if want := texts[at+1]; res.Text != want {
		t.Errorf("next turn's Result.Text = %q, want %q", res.Text, want)
	}
}

// wired is a switch test's session recorded with Request.WireLog, and
// the events its turns yielded.
type wired struct {
	log  bytes.Buffer // written by the session until it is closed
	mu   sync.Mutex
	live strings.Builder
	// closed, when set, checks the log once the session is closed.
	closed func(log string)
}

// wire records the session of req.
func wire(req *agentcli.Request) *wired {
	w := &wired{}
	req.WireLog = &w.log
	return w
}

// record notes an event or error the session yielded; a nil w records
// nothing.
func (w *wired) record(ev agentcli.Event, err error) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.live.WriteString("error " + errSummary(err) + "\n")
		return
	}
	w.live.WriteString(describeEvent(ev))
}

// run is s.Run, its events recorded.
func (w *wired) run(ctx context.Context, s agentcli.Session, prompt string) (*agentcli.Result, error) {
	var res *agentcli.Result
	for ev, err := range s.Stream(ctx, prompt) {
		w.record(ev, err)
		if err != nil {
			return res, err
		}
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
	}
	if res == nil {
		return nil, fmt.Errorf("no result")
	}
	return res, nil
}

// check closes s and replays its wire log: the events must be those the
// session yielded, turn by turn.
func (w *wired) check(t *testing.T, b agentcli.Backend, s agentcli.Session) {
	t.Helper()
	s.Close()
	if w.closed != nil {
		w.closed(w.log.String())
	}
	w.mu.Lock()
	live := w.live.String()
	w.mu.Unlock()
	var replay strings.Builder
	for ev, err := range agentcli.Replay(b, bytes.NewReader(w.log.Bytes())) {
		if err != nil {
			replay.WriteString("error " + errSummary(err) + "\n")
			continue
		}
		replay.WriteString(describeEvent(ev))
	}
	if replay.String() != live {
		t.Errorf("the replay differs from the session\nsession:\n%s\nreplay:\n%s\nlog:\n%s", live, replay.String(), w.log.String())
	}
}
