//go:build unix

package conformance

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// manageCLIs are the CLIs whose session management (fork, continue,
// caller-chosen id, list) is checked on the real binary.
var manageCLIs = []string{"claude", "codex", "gemini", "opencode", "copilot", "qwen", "droid"}

// noForkID are the CLIs that take a caller-chosen id for a new session but
// not for a fork, and why.
var noForkID = map[string]string{
	"gemini":  "gemini refuses --session-id with --session-file",
	"qwen":    "qwen refuses --session-id with --resume",
	"copilot": "copilot's sessions.fork takes no id",
	"droid":   "droid's forks take no id",
}

// chosenID is the caller-chosen id of the first session, where the CLI
// takes one.
const chosenID = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

// chosenForkID is the caller-chosen id of a fork.
const chosenForkID = "8b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d5e"

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestSessionManagement: on each real CLI, a session (with a
// caller-chosen id where the CLI takes one) is forked: the fork's model
// request has the first turn, and the original, resumed afterwards, has
// only its own history. Continue then resumes the most recently updated
// session (the original), ListSessions lists both, newest first, with
// their titles, Continue in a directory without a session fails with
// ErrNoSession before the CLI starts, a live session forks and continues
// too, and what
// the backend's Capabilities refuse is refused with no process and no
// model request.
func TestSessionManagement(t *testing.T) {
	for _, cli := range manageCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			testSessionManagement(t, cli)
		})
	}
}

func testSessionManagement(t *testing.T, cli string) {
	ctx := context.Background()
	e := newEnv(t, cli)
	b, err := agentcli.Open(cli, &agentcli.Options{Path: cliPath(t, cli), Env: e.w.Env, KillGrace: killGrace})
	if err != nil {
		t.Fatal(err)
	}
	caps := b.Capabilities()
	t.Logf("%s: fork %+v continue %+v new id %+v list %v", cli, caps.ForkSession, caps.ContinueSession, caps.NewSessionID, caps.ListSessions)
	if !caps.ForkSession.OneShot || !caps.ContinueSession.OneShot || !caps.ListSessions {
		t.Fatalf("%s should fork, continue and list one-shot: %+v", cli, caps)
	}
	userTexts := func(r agentclitest.ModelRequest) []string {
		var out []string
		for _, m := range r.Messages {
			if m.Role == "user" {
				out = append(out, m.Text)
			}
		}
		return out
	}
	has := func(r agentclitest.ModelRequest, s string) bool { return hasText(r.Messages, "user", s) }
	t0 := time.Now()
	step := func(name string) {
		t.Logf("%s done at %v", name, time.Since(t0).Round(time.Millisecond))
	}
	refused := func(name string, req *agentcli.Request, tag string, want error) {
		t.Helper()
		before := len(e.srv.Requests())
		_, _, err := run(t, b, req, tag)
		if !errors.Is(err, want) {
			t.Errorf("%s: %s; want %v", name, errSummary(err), want)
		}
		if n := len(e.srv.Requests()); n != before {
			t.Errorf("%s: %d model requests; want none", name, n-before)
		}
	}

	// The first session, with a chosen id where the CLI takes one.
	req, tag := e.request("first turn ALPHA")
	if caps.NewSessionID.OneShot {
		req.NewSessionID = chosenID
	} else {
		r2, tag2 := e.request("never sent")
		r2.NewSessionID = chosenID
		refused("NewSessionID", r2, tag2, agentcli.ErrUnsupported)
	}
	res, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("first run: %s", errSummary(err))
	}
	orig := res.SessionID
	step("first run")
	if req.NewSessionID != "" && orig != chosenID {
		t.Errorf("SessionID = %q; want the chosen %q", orig, chosenID)
	}

	// Fork it: a new id, with the history.
	req, tag = e.request("fork turn BETA")
	req.SessionID, req.ForkSession = orig, true
	res, _, err = run(t, b, req, tag)
	if err != nil {
		t.Fatalf("fork: %s", errSummary(err))
	}
	fork := res.SessionID
	step("fork")
	if fork == "" || fork == orig {
		t.Errorf("the fork's SessionID = %q; want a new one (original %q)", fork, orig)
	}
	if last := e.lastMain(); !has(last, "first turn ALPHA") || !has(last, "fork turn BETA") {
		t.Errorf("the fork's request lacks the history: %q", userTexts(last))
	}

	want := []string{fork}
	switch {
	case noForkID[cli] != "":
		req, tag = e.request("never sent")
		req.SessionID, req.ForkSession, req.NewSessionID = orig, true, chosenForkID
		refused("fork to a chosen id", req, tag, agentcli.ErrUnsupported)
	case caps.NewSessionID.OneShot:
		// A fork to a chosen id.
		req, tag = e.request("chosen fork turn ZETA")
		req.SessionID, req.ForkSession, req.NewSessionID = orig, true, chosenForkID
		if res, _, err = run(t, b, req, tag); err != nil {
			t.Fatalf("fork to a chosen id: %s", errSummary(err))
		}
		if res.SessionID != chosenForkID {
			t.Errorf("fork to a chosen id: SessionID %q; want %q", res.SessionID, chosenForkID)
		}
		if last := e.lastMain(); !has(last, "first turn ALPHA") || !has(last, "chosen fork turn ZETA") || has(last, "fork turn BETA") {
			t.Errorf("the chosen-id fork's request: %q", userTexts(last))
		}
		want = append(want, chosenForkID)
		step("fork to a chosen id")
	}
	if cli == "qwen" {
		// qwen's zero mode is a turn of a live session: the fork above
		// went through it. A plain one-shot fork (bypass: stdin closed
		// after the prompt) too.
		req, tag = e.request("bypass fork turn IOTA")
		req.SessionID, req.ForkSession, req.Permission = orig, true, agentcli.PermissionBypass
		if res, _, err = run(t, b, req, tag); err != nil {
			t.Fatalf("bypass fork: %s", errSummary(err))
		}
		if res.SessionID == "" || slices.Contains(append(want, orig), res.SessionID) {
			t.Errorf("the bypass fork's SessionID = %q; want a new one", res.SessionID)
		}
		if last := e.lastMain(); !has(last, "first turn ALPHA") || !has(last, "bypass fork turn IOTA") || has(last, "fork turn BETA") {
			t.Errorf("the bypass fork's request: %q", userTexts(last))
		}
		want = append(want, res.SessionID)
		step("bypass fork")
	}

	if cli == "codex" {
		time.Sleep(1100 * time.Millisecond) // codex keeps update times in seconds
	}
	// The original is unchanged: resumed, it has its turn, not the fork's.
	req, tag = e.request("original turn GAMMA")
	req.SessionID = orig
	if res, _, err = run(t, b, req, tag); err != nil {
		t.Fatalf("resume the original: %s", errSummary(err))
	}
	if res.SessionID != orig {
		t.Errorf("resuming %s reported %s", orig, res.SessionID)
	}
	if last := e.lastMain(); !has(last, "first turn ALPHA") || !has(last, "original turn GAMMA") || has(last, "fork turn BETA") {
		t.Errorf("the original's request after the fork: %q; want turn 1 and this one, not the fork's", userTexts(last))
	}

	step("resume")
	// ListSessions: both, the original (updated last) first.
	list, err := agentcli.ListSessions(ctx, b, e.w.Dir)
	if err != nil {
		t.Fatalf("ListSessions: %s", errSummary(err))
	}
	step("list")
	t.Logf("ListSessions: %+v", list)
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	if len(list) != 1+len(want) || list[0].ID != orig || !sameSet(ids[1:], want) {
		t.Errorf("ListSessions ids = %q; want %s first, then %q", ids, orig, want)
	}
	for _, s := range list {
		if s.Updated.IsZero() || time.Since(s.Updated) > time.Hour {
			t.Errorf("session %s updated %v", s.ID, s.Updated)
		}
		switch {
		case cli == "opencode" && s.Title == "":
			// opencode titles a session itself (its title model's summary).
			t.Errorf("session %s has no title", s.ID)
		case cli == "droid" && s.Title != agentclitest.TitleText && !strings.Contains(s.Title, "first turn ALPHA"):
			// droid titles a session with the first prompt, then, in a
			// live session (which a chosen id makes), with its title
			// model's answer.
			t.Errorf("session %s: title %q; want the first prompt or %q", s.ID, s.Title, agentclitest.TitleText)
		case cli != "opencode" && cli != "droid" && !strings.Contains(s.Title, "first turn ALPHA"):
			t.Errorf("session %s: title %q; want the first prompt", s.ID, s.Title)
		}
	}
	if !slices.IsSortedFunc(list, func(a, b agentcli.SessionInfo) int { return b.Updated.Compare(a.Updated) }) {
		t.Errorf("ListSessions not newest first: %+v", list)
	}

	// Continue: the newest session, the original.
	req, tag = e.request("continued turn DELTA")
	req.Continue = true
	if res, _, err = run(t, b, req, tag); err != nil {
		t.Fatalf("continue: %s", errSummary(err))
	}
	if res.SessionID != orig {
		t.Errorf("Continue resumed %s; want the newest, %s", res.SessionID, orig)
	}
	if last := e.lastMain(); !has(last, "original turn GAMMA") || !has(last, "continued turn DELTA") {
		t.Errorf("the continued request: %q; want the original's history", userTexts(last))
	}

	step("continue")
	// Continue where there is no session: refused, nothing starts.
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	req, tag = e.request("never sent")
	req.Dir, req.Continue = empty, true
	refused("Continue in an empty dir", req, tag, agentcli.ErrNoSession)
	if l, err := agentcli.ListSessions(ctx, b, empty); err != nil || len(l) != 0 {
		t.Errorf("ListSessions of an empty dir: %v, %s", l, errSummary(err))
	}

	step("continue in an empty dir")
	// Conflicting fields are a *RequestError.
	req, tag = e.request("never sent")
	req.Continue, req.SessionID = true, orig
	refused("Continue with SessionID", req, tag, agentcli.ErrBadRequest)
	req, tag = e.request("never sent")
	req.ForkSession = true
	refused("ForkSession alone", req, tag, agentcli.ErrBadRequest)

	// A live session forks too. codex orders its threads by update time
	// in whole seconds: the fork must be newer than the continued
	// original by at least a second, or the live continue below may
	// take either.
	if cli == "codex" {
		time.Sleep(1100 * time.Millisecond)
	}
	if !caps.ForkSession.Live {
		req, tag = e.request("")
		req.SessionID, req.ForkSession = orig, true
		before := len(e.srv.Requests())
		if s, err := agentcli.StartSession(ctx, b, req); !errors.Is(err, agentcli.ErrUnsupported) {
			t.Errorf("live fork: %s; want ErrUnsupported", errSummary(err))
			if s != nil {
				s.Close()
			}
		}
		assertNoProcs(t, tag)
		if n := len(e.srv.Requests()); n != before {
			t.Errorf("refused live fork: %d model requests", n-before)
		}
		return
	}
	req, tag = e.request("")
	req.SessionID, req.ForkSession = orig, true
	s, err := agentcli.StartSession(ctx, b, req)
	if err != nil {
		t.Fatalf("live fork: %s", errSummary(err))
	}
	res, err = s.Run(ctx, "live fork EPSILON")
	id := s.ID()
	s.Close()
	step("live fork")
	assertNoProcs(t, tag)
	if err != nil {
		t.Fatalf("live fork turn: %s", errSummary(err))
	}
	if id == "" || id == orig || id == fork || res.SessionID != id {
		t.Errorf("live fork id %q (result %q); want a new one (original %s, fork %s)", id, res.SessionID, orig, fork)
	}
	if last := e.lastMain(); !has(last, "continued turn DELTA") || !has(last, "live fork EPSILON") || has(last, "fork turn BETA") {
		t.Errorf("the live fork's request: %q; want the original's history", userTexts(last))
	}

	// A live session continues the newest session: the live fork.
	if cli == "codex" {
		time.Sleep(1100 * time.Millisecond)
	}
	req, tag = e.request("")
	req.Continue = true
	s, err = agentcli.StartSession(ctx, b, req)
	if err != nil {
		t.Fatalf("live continue: %s", errSummary(err))
	}
	res, err = s.Run(ctx, "live continued ETA")
	cid := s.ID()
	s.Close()
	step("live continue")
	assertNoProcs(t, tag)
	if err != nil {
		t.Fatalf("live continue turn: %s", errSummary(err))
	}
	if cid != id || res.SessionID != id {
		t.Errorf("live Continue resumed %q (result %q); want the newest, the live fork %q", cid, res.SessionID, id)
	}
	if last := e.lastMain(); !has(last, "live fork EPSILON") || !has(last, "live continued ETA") {
		t.Errorf("the live continued request: %q; want the live fork's history", userTexts(last))
	}

	// A live session with a chosen id, where the CLI takes one there.
	if !caps.NewSessionID.Live {
		return
	}
	const liveID = "9c3d4e5f-6a7b-4c8d-8e9f-1a2b3c4d5e6f"
	req, tag = e.request("")
	req.NewSessionID = liveID
	if cli == "droid" {
		// droid makes the session first, then loads it: the system
		// prompt (droid's ACP takes it before a new session's first
		// prompt) must still reach the model.
		req.SystemPrompt = "chosen system MU"
	}
	if s, err = agentcli.StartSession(ctx, b, req); err != nil {
		t.Fatalf("live chosen id: %s", errSummary(err))
	}
	res, err = s.Run(ctx, "live chosen THETA")
	lid := s.ID()
	s.Close()
	step("live chosen id")
	assertNoProcs(t, tag)
	if err != nil {
		t.Fatalf("live chosen id turn: %s", errSummary(err))
	}
	if lid != liveID || res.SessionID != liveID {
		t.Errorf("live session id %q (result %q); want the chosen %s", lid, res.SessionID, liveID)
	}
	if last := e.lastMain(); !has(last, "live chosen THETA") || has(last, "first turn ALPHA") {
		t.Errorf("the live chosen-id session's request: %q; want a new session", userTexts(last))
	}
	if last := e.lastMain(); req.SystemPrompt != "" && !has(last, req.SystemPrompt) {
		t.Errorf("the live chosen-id session's request: %q; want the system prompt", userTexts(last))
	}
}

// TestSessionManagementUnsupported: what a CLI's Capabilities refuse
// (ForkSession, Continue, NewSessionID in a run or a live session, and
// ListSessions) is refused with an *agentcli.UnsupportedError before
// anything starts (no model request, no process).
func TestSessionManagementUnsupported(t *testing.T) {
	for _, cli := range manageCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cli, agentclitest.Turn{Text: "never"})
			b := openBackend(t, cli, nil)
			c := b.Capabilities()
			checked := 0
			for _, f := range []struct {
				name  string
				modes agentcli.SessionModes
				set   func(*agentcli.Request)
			}{
				{"fork", c.ForkSession, func(r *agentcli.Request) { r.SessionID, r.ForkSession = unknownSessionOf(cli), true }},
				{"continue", c.ContinueSession, func(r *agentcli.Request) { r.Continue = true }},
				{"new id", c.NewSessionID, func(r *agentcli.Request) { r.NewSessionID = chosenID }},
			} {
				if !f.modes.OneShot {
					checked++
					req, tag := e.request("hi")
					req.Permission = agentcli.PermissionBypass // a plain one-shot run
					f.set(req)
					_, _, err := run(t, b, req, tag)
					if !errors.Is(err, agentcli.ErrUnsupported) {
						t.Errorf("Run with %s: %s, want an *agentcli.UnsupportedError", f.name, errSummary(err))
					}
					assertNoProcs(t, tag)
				}
				if !f.modes.Live {
					checked++
					lreq, ltag := e.liveRequest()
					f.set(lreq)
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					s, err := agentcli.StartSession(ctx, b, lreq)
					cancel()
					if err == nil {
						s.Close()
					}
					if !errors.Is(err, agentcli.ErrUnsupported) {
						t.Errorf("StartSession with %s: %s, want an *agentcli.UnsupportedError", f.name, errSummary(err))
					}
					assertNoProcs(t, ltag)
				}
			}
			if !c.ListSessions {
				checked++
				if _, err := agentcli.ListSessions(context.Background(), b, e.w.Dir); !errors.Is(err, agentcli.ErrUnsupported) {
					t.Errorf("ListSessions: %s, want an *agentcli.UnsupportedError", errSummary(err))
				}
			}
			if n := len(e.srv.Requests()); n != 0 {
				t.Errorf("%d model requests, want none", n)
			}
			t.Logf("%s: %d refusals checked", cli, checked)
		})
	}
}

// unknownSessionOf returns a session id of cli's syntax that names no
// session.
func unknownSessionOf(cli string) string {
	if id, ok := unknownSession[cli]; ok {
		return id
	}
	return "00000000-0000-4000-8000-000000000000"
}
