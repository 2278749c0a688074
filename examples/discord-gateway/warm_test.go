package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// holdStarts makes every StartSession of agent wait until the function it
// returns is called (also at the end of the test).
func holdStarts(t *testing.T, agent *fakeAgent) (release func()) {
	gate := make(chan struct{})
	agent.mu.Lock()
	agent.gate = gate
	agent.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			agent.mu.Lock()
			agent.gate = nil
			agent.mu.Unlock()
			close(gate)
		})
	}
	t.Cleanup(release)
	return release
}

// TestProgramWarmFirstTurn: the program starts a warm session at start-up;
// a new conversation's first message runs in it while no CLI can start
// (every StartSession is held), so that the turn waited for no CLI start;
// a replacement is started in the background; after /new the next message
// takes that one.
func TestProgramWarmFirstTurn(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	p := startProgram(t, f, agent, "", "THREADS=false")
	waitFor(t, "the warm session", func() bool { return agent.openSessions() == 1 })
	if starts := agent.startsCopy(); len(starts) != 1 || starts[0].SessionID != "" || starts[0].OnPermission == nil {
		t.Fatalf("starts %+v; want one new session, with a permission callback", starts)
	}

	release := holdStarts(t, agent)
	if got := p.answer(p.send("c1", "alice", "hello")); !strings.Contains(got, "echo: ") {
		t.Fatalf("answer %q", got)
	}
	if s := agent.sessionsCopy()["fs-1"]; len(s) != 1 || body(s[0]) != "hello" {
		t.Errorf("the warm session fs-1 ran %q; want c1's first message", s)
	}
	release()
	waitFor(t, "the replacement", func() bool { return agent.openSessions() == 2 })
	if starts := agent.startsCopy(); len(starts) != 2 || starts[1].SessionID != "" {
		t.Fatalf("starts %+v; want a new session to replace the one taken", starts)
	}

	release = holdStarts(t, agent)
	p.send("c1", "alice", "/new")
	if got := p.answer(p.send("c1", "alice", "again")); !strings.Contains(got, "echo: ") {
		t.Fatalf("answer %q", got)
	}
	if s := agent.sessionsCopy()["fs-2"]; len(s) != 1 || body(s[0]) != "again" {
		t.Errorf("after /new the warm session fs-2 ran %q; want the conversation's next message", s)
	}
	release()
}

// TestProgramWarmNoCrossTalk: two conversations in warm sessions (started
// from one request, with the same callbacks) ask at the same time, one
// for permission, one a question: each card goes to its own channel and
// requester, the other requester cannot answer it, and each answer reaches
// the session that asked.
func TestProgramWarmNoCrossTalk(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	p := startProgram(t, f, agent, "", "THREADS=false", "WARM_SESSIONS=2")
	waitFor(t, "two warm sessions", func() bool { return agent.openSessions() == 2 })
	holdStarts(t, agent) // the conversations can only run in the warm sessions

	// Both sessions are taken before either asks.
	p.answer(p.send("c1", "alice", "hello"))
	p.answer(p.send("c2", "bob", "hello"))
	ask := p.send("c1", "alice", "ask to deploy")
	question := p.send("c2", "bob", "question of colors")
	c1, c2 := p.card("c1", 0), p.card("c2", 0)
	t1, t2 := c1.body["content"].(string), c2.body["content"].(string)
	if !strings.HasPrefix(t1, "<@alice> 🔐") || strings.Contains(t1, "bob") {
		t.Errorf("c1's card %q; want alice's permission request", t1)
	}
	if !strings.HasPrefix(t2, "<@bob> ❓") || strings.Contains(t2, "alice") {
		t.Errorf("c2's card %q; want bob's question", t2)
	}
	if n1, n2 := len(f.cards("c1")), len(f.cards("c2")); n1 != 1 || n2 != 1 {
		t.Errorf("%d cards in c1, %d in c2; want one each", n1, n2)
	}
	allow := components(c1)[0]["custom_id"].(string)
	if cb := p.click("c1", c1, allow, nil, "bob"); !refusedPrivately(cb, "Only <@alice>") {
		t.Errorf("bob's press on alice's card: %v", cb)
	}
	blue := components(c2)[1]["custom_id"].(string)
	if cb := p.click("c2", c2, blue, nil, "alice"); !refusedPrivately(cb, "Only <@bob>") {
		t.Errorf("alice's press on bob's card: %v", cb)
	}
	p.click("c2", c2, blue, nil, "bob")
	p.click("c1", c1, allow, nil, "alice")
	if got := p.answer(ask); !strings.Contains(got, "decision: allow_once") {
		t.Errorf("c1: %q", got)
	}
	if got := p.answer(question); !strings.Contains(got, `answers: [["Blue"]]`) {
		t.Errorf("c2: %q", got)
	}
	s := agent.sessionsCopy()
	byConv := map[string]string{}
	for id, prompts := range s {
		for _, pr := range prompts {
			byConv[body(pr)] = id
		}
	}
	if a, q := byConv["ask to deploy"], byConv["question of colors"]; a == q || a != "fs-1" && a != "fs-2" || q != "fs-1" && q != "fs-2" {
		t.Errorf("sessions %v; want each conversation in a warm session of its own", s)
	}
}

// TestProgramWarmCap: warm sessions count against MAX_LIVE_SESSIONS: 50
// conversations at once hold at most that many CLIs, and once they are
// quiet for LIVE_IDLE none at all (the warm one included). A conversation
// that comes back resumes its stored session (a warm one cannot); a new
// one still gets a session.
func TestProgramWarmCap(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	p := startProgram(t, f, agent, "", "THREADS=false", "MAX_LIVE_SESSIONS=3", "LIVE_IDLE=1")
	waitFor(t, "the warm session", func() bool { return agent.openSessions() == 1 })
	var msgs []string
	for i := range 50 {
		msgs = append(msgs, p.send(fmt.Sprint("c", i), "alice", fmt.Sprint("hello ", i)))
	}
	for _, m := range msgs {
		if got := p.answer(m); !strings.Contains(got, "echo: ") {
			t.Fatalf("answer %q", got)
		}
	}
	if n := agent.openSessions(); n > 3 {
		t.Errorf("%d live sessions open; MAX_LIVE_SESSIONS is 3", n)
	}
	waitFor(t, "every session closed after LIVE_IDLE", func() bool { return agent.openSessions() == 0 })

	// c0 resumes its session; a new conversation gets one.
	before := len(agent.startsCopy())
	if got := p.answer(p.send("c0", "alice", "back again")); !strings.Contains(got, "echo: ") {
		t.Fatalf("answer %q", got)
	}
	var c0 string
	for id, prompts := range agent.sessionsCopy() {
		for _, pr := range prompts {
			if body(pr) == "hello 0" {
				c0 = id
			}
		}
	}
	resumed := false
	for _, s := range agent.startsCopy()[before:] {
		resumed = resumed || s.SessionID == c0
	}
	if s := agent.sessionsCopy()[c0]; !resumed || len(s) != 2 || body(s[1]) != "back again" {
		t.Errorf("c0's session %s: resumed %v, prompts %q; want its second message in it", c0, resumed, s)
	}
	if got := p.answer(p.send("c99", "alice", "new here")); !strings.Contains(got, "echo: ") {
		t.Fatalf("answer %q", got)
	}
	if n := agent.openSessions(); n > 3 {
		t.Errorf("%d live sessions open; MAX_LIVE_SESSIONS is 3", n)
	}
}

// TestWarmSessionWithoutOwner: a warm session asked for permission
// before any conversation took it denies, and its question goes
// unanswered: nobody is there.
func TestWarmSessionWithoutOwner(t *testing.T) {
	agent := newFakeAgent()
	store, err := NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := NewRuntime(Options{Backend: agent, Store: store, Queue: NewMemQueue(1, 1), Chat: newRecChat(),
		Questions: true, Logger: quiet()})
	called := false
	req := &agentcli.Request{Permission: agentcli.PermissionAsk,
		OnPermission: func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
			called = true
			return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
		},
		OnQuestion: func(context.Context, *agentcli.Question) (*agentcli.Answer, error) {
			called = true
			return &agentcli.Answer{Answers: [][]string{{"Red"}}}, nil
		}}
	s, err := (&warmBackend{Backend: agent, rt: rt}).StartSession(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for prompt, want := range map[string]string{"ask x": "decision: reject_once", "question y": "answers: none"} {
		res, err := s.Run(context.Background(), prompt)
		if err != nil || res.Text != want {
			t.Errorf("%s: %v, %v; want %q", prompt, res, err, want)
		}
	}
	if called {
		t.Error("the template's own callbacks were called")
	}
}

// TestProgramWarmStartHangs: a warm session whose CLI does not finish
// starting does not hold up the shutdown: its start is cancelled.
func TestProgramWarmStartHangs(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	gate := make(chan struct{})
	agent.gate = gate
	defer close(gate)
	p := startProgram(t, f, agent, "", "THREADS=false")
	done := make(chan struct{})
	go func() { p.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the shutdown waits for the warm session's start")
	}
	if n := len(agent.startsCopy()); n != 0 {
		t.Errorf("%d sessions started", n)
	}
}
