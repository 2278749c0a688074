package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"pgregory.net/rapid"
)

// harness is a runtime on a recording chat and a file store.
type harness struct {
	rt    *Runtime
	chat  *recChat
	store *FileStore
	n     int
}

func newHarness(t tb, dir string, o Options) *harness {
	t.Helper()
	store, err := NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{chat: newRecChat(), store: store}
	if o.Store == nil {
		o.Store = store
	}
	if o.Queue == nil {
		o.Queue = NewMemQueue(20, 1000)
	}
	o.Chat = h.chat
	if o.Logger == nil {
		o.Logger = quiet()
	}
	if o.Retry.BaseDelay == 0 {
		o.Retry.BaseDelay = time.Millisecond
	}
	if o.EditInterval == 0 {
		o.EditInterval = 2 * time.Millisecond
	}
	if o.TypingInterval == 0 {
		o.TypingInterval = 5 * time.Millisecond
	}
	h.rt = NewRuntime(o)
	h.rt.Start()
	return h
}

// send hands a message to the runtime and returns its id.
func (h *harness) send(channel, text string) string {
	h.n++
	id := fmt.Sprintf("%s-m%d", channel, h.n)
	h.rt.Handle(Message{ID: id, Channel: channel, Author: "u1", Text: text})
	return id
}

// answered waits until message id has its final answer (its reply no
// longer shows the working indicator) and returns it.
func (h *harness) answered(t tb, id string) string {
	t.Helper()
	waitFor(t, "the answer to "+id, func() bool {
		rs := h.chat.replies(id)
		if len(rs) == 0 {
			return false
		}
		h.chat.mu.Lock()
		defer h.chat.mu.Unlock()
		f := rs[0].final()
		return !strings.HasSuffix(f, " ▍") && !strings.HasPrefix(f, "⏳ Working")
	})
	return h.chat.answer(id)
}

func (h *harness) close(t tb) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h.rt.Shutdown(ctx)
}

// TestStoreFollowsResults: after a reply with a session id the store holds
// it for the channel; after one without, the store is unchanged.
func TestStoreFollowsResults(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var calls []agentclitest.Call
		n := rapid.IntRange(1, 6).Draw(t, "messages")
		for i := range n {
			sid := rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, fmt.Sprint("sid", i))
			switch rapid.IntRange(0, 3).Draw(t, fmt.Sprint("kind", i)) {
			case 0:
				calls = append(calls, agentclitest.Reply(fmt.Sprint("answer ", i), sid))
			case 1: // a result without text
				calls = append(calls, agentclitest.Call{Result: &agentcli.Result{SessionID: sid}})
			case 2: // a failed run that still reports its session
				calls = append(calls, agentclitest.Call{Err: &agentcli.ResultError{Backend: "scripted",
					Subtype: "error_max_turns", Result: &agentcli.Result{SessionID: sid, IsError: true}}})
			case 3: // a failed run with no result
				calls = append(calls, agentclitest.Call{Err: &agentcli.ExitError{Backend: "scripted", Code: 1}})
			}
		}
		preview := rapid.Bool().Draw(t, "preview")
		dir, err := os.MkdirTemp("", "gateway-store-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		h := newHarness(t, dir, Options{Backend: agentclitest.NewBackend(calls...),
			Retry: agentcli.RetryOptions{MaxAttempts: 1}, Preview: preview, MaxLen: 2000})
		defer h.close(t)
		want := ""
		for i, c := range calls {
			id := h.send("ch", fmt.Sprint("prompt ", i))
			h.answered(t, id)
			var sid string
			switch {
			case c.Result != nil:
				sid = c.Result.SessionID
			case c.Err != nil:
				var re *agentcli.ResultError
				if errors.As(c.Err, &re) {
					sid = re.Result.SessionID
				}
			}
			if sid != "" {
				want = sid
			}
			if got, err := getSID(h.store, "ch"); got != want || err != nil {
				t.Fatalf("after message %d the store holds %q (%v), want %q", i, got, err, want)
			}
		}
	})
}

func TestRepliesAndResume(t *testing.T) {
	agent := newFakeAgent()
	h := newHarness(t, t.TempDir(), Options{Backend: noSessions{agent}, Preview: true, MaxLen: 2000})
	defer h.close(t)
	a := h.send("c1", "hello")
	if got := h.answered(t, a); got != "echo: hello" {
		t.Fatalf("answer %q", got)
	}
	b := h.send("c1", "again")
	if got := h.answered(t, b); got != "echo: again" {
		t.Fatalf("answer %q", got)
	}
	agent.mu.Lock()
	runs := append([]agentcli.Request(nil), agent.runs...)
	agent.mu.Unlock()
	if len(runs) != 2 || runs[0].SessionID != "" || runs[1].SessionID != "fs-1" {
		t.Fatalf("runs resumed %q, %q; want \"\", fs-1", runs[0].SessionID, runs[1].SessionID)
	}
	if len(h.chat.replies(a)) != 1 {
		t.Fatalf("%d replies to one message", len(h.chat.replies(a)))
	}
	if h.chat.typed.Load() == 0 {
		t.Error("no typing indicator")
	}
}

func TestLongReplySplit(t *testing.T) {
	long := strings.Repeat("word ", 900) // 4,500 characters
	h := newHarness(t, t.TempDir(), Options{Backend: agentclitest.NewBackend(agentclitest.Reply(long, "s")),
		Preview: true, MaxLen: 2000})
	defer h.close(t)
	id := h.send("c", "long please")
	h.answered(t, id)
	waitFor(t, "three parts", func() bool { return len(h.chat.replies(id)) == 3 })
	var total string
	for _, m := range h.chat.replies(id) {
		if textLen(m.final()) > 2000 {
			t.Fatalf("part of %d", textLen(m.final()))
		}
		total += m.final()
	}
	if content(total) != content(long) {
		t.Fatal("content lost")
	}
}

func TestCommands(t *testing.T) {
	agent := newFakeAgent()
	h := newHarness(t, t.TempDir(), Options{Backend: agent, Live: true, Preview: true, MaxLen: 2000,
		Request: agentcli.Request{Model: "m1"}})
	defer h.close(t)
	ask := func(cmd string) string {
		id := h.send("c", cmd)
		waitFor(t, "the "+cmd+" answer", func() bool { return len(h.chat.replies(id)) == 1 })
		return h.chat.answer(id)
	}
	if got := ask("/backend"); !strings.Contains(got, "fake") || !strings.Contains(got, "m1") || !strings.Contains(got, "live sessions") {
		t.Fatalf("/backend: %q", got)
	}
	if got := ask("/status"); !strings.Contains(got, "idle") || !strings.Contains(got, "none yet") {
		t.Fatalf("/status: %q", got)
	}
	h.answered(t, h.send("c", "hello"))
	if got := ask("/status"); !strings.Contains(got, "live session open") || !strings.Contains(got, "fs-1") ||
		!strings.Contains(got, "started by <@u1>") {
		t.Fatalf("/status with a session: %q", got)
	}
	if got := ask("/usage"); !strings.Contains(got, "This conversation: 1 answers") {
		t.Fatalf("/usage: %q", got)
	}
	if got := ask("/model"); !strings.Contains(got, "Model: m1") {
		t.Fatalf("/model: %q", got)
	}
	if got := ask("/model other"); !strings.Contains(got, "not configured") {
		t.Fatalf("/model other without MODELS: %q", got)
	}
	id := ""
	id = h.send("c", "/stop")
	waitFor(t, "the /stop answer", func() bool { return len(h.chat.replies(id)) == 1 })
	if got := h.chat.answer(id); !strings.Contains(got, "Nothing") {
		t.Fatalf("/stop with nothing running: %q", got)
	}
	id = h.send("c", "/help")
	waitFor(t, "the /help answer", func() bool { return len(h.chat.replies(id)) == 1 })

	// /new: the live session closes, the store forgets, the next message
	// starts a session of its own.
	id = h.send("c", "/new")
	waitFor(t, "the /new answer", func() bool { return len(h.chat.replies(id)) == 1 })
	if sid, _ := getSID(h.store, "c"); sid != "" {
		t.Fatalf("store after /new: %q", sid)
	}
	if agent.openSessions() != 0 {
		t.Fatal("live session still open after /new")
	}
	h.answered(t, h.send("c", "fresh"))
	starts := agent.startsCopy()
	if len(starts) != 2 || starts[1].SessionID != "" {
		t.Fatalf("starts after /new: %d, resuming %q", len(starts), starts[len(starts)-1].SessionID)
	}
}

func TestNotAllowedIgnored(t *testing.T) {
	h := newHarness(t, t.TempDir(), Options{Backend: newFakeAgent(),
		Allowed: func(user string, roles []string) bool { return user == "u1" || len(roles) > 0 && roles[0] == "admins" }})
	defer h.close(t)
	h.rt.Handle(Message{ID: "x", Channel: "c", Author: "stranger", Text: "rm -rf /"})
	h.rt.Handle(Message{ID: "y", Channel: "c", Author: "mod", Roles: []string{"admins"}, Text: "hi"})
	h.answered(t, "y")
	if len(h.chat.replies("x")) != 0 {
		t.Fatal("answered a stranger")
	}
}

func TestBusy(t *testing.T) {
	agent := newFakeAgent()
	h := newHarness(t, t.TempDir(), Options{Backend: noSessions{agent}, Queue: NewMemQueue(1, 10), Preview: true, MaxLen: 2000})
	defer h.close(t)
	first := h.send("c", "slow one")
	waitFor(t, "the first run", func() bool { agent.mu.Lock(); defer agent.mu.Unlock(); return len(agent.runs) == 1 })
	second := h.send("c", "two")
	third := h.send("c", "three")
	waitFor(t, "the busy answer", func() bool { return len(h.chat.replies(third)) == 1 })
	if got := h.chat.answer(third); !strings.Contains(got, "Busy") {
		t.Fatalf("third message: %q, want busy", got)
	}
	id := h.send("c", "/stop")
	waitFor(t, "/stop", func() bool { return len(h.chat.replies(id)) == 1 })
	if got := h.answered(t, first); !strings.Contains(got, "Stopped") {
		t.Fatalf("stopped message: %q", got)
	}
	if got := h.answered(t, second); got != "echo: two" {
		t.Fatalf("second: %q", got)
	}
}

func TestStopLiveInterrupts(t *testing.T) {
	agent := newFakeAgent()
	h := newHarness(t, t.TempDir(), Options{Backend: agentcli.WithLimit(agent, 2), Live: true, Preview: true, MaxLen: 2000})
	defer h.close(t)
	first := h.send("c", "slow down")
	waitFor(t, "the turn", func() bool { return agent.openSessions() == 1 && len(agent.sessionsCopy()["fs-1"]) == 1 })
	h.send("c", "/stop")
	if got := h.answered(t, first); !strings.Contains(got, "Stopped") {
		t.Fatalf("answer %q", got)
	}
	agent.mu.Lock()
	n := agent.interrupts
	agent.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d interrupts", n)
	}
	// The session survives the interrupt and takes the next message.
	if got := h.answered(t, h.send("c", "next")); got != "echo: next" {
		t.Fatalf("after stop: %q", got)
	}
	if len(agent.startsCopy()) != 1 {
		t.Fatalf("%d sessions started", len(agent.startsCopy()))
	}
}

func (a *fakeAgent) sessionsCopy() map[string][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string][]string{}
	for k, v := range a.sessions {
		out[k] = append([]string(nil), v...)
	}
	return out
}

func TestLiveSessionLifecycle(t *testing.T) {
	agent := newFakeAgent()
	dir := t.TempDir()
	h := newHarness(t, dir, Options{Backend: agent, Live: true, LiveIdle: 200 * time.Millisecond})
	// Both queued at once: the second turn follows the first without an
	// idle gap.
	one, two := h.send("c", "one"), h.send("c", "two")
	h.answered(t, one)
	h.answered(t, two)
	if starts := agent.startsCopy(); len(starts) != 1 {
		t.Fatalf("%d starts for two messages", len(starts))
	}
	// Idle: the session closes; the next message resumes it.
	waitFor(t, "the idle close", func() bool { return agent.openSessions() == 0 })
	h.answered(t, h.send("c", "three"))
	starts := agent.startsCopy()
	if len(starts) != 2 || starts[1].SessionID != "fs-1" {
		t.Fatalf("after idle: %d starts, resuming %q", len(starts), starts[len(starts)-1].SessionID)
	}
	h.close(t)
	if agent.openSessions() != 0 {
		t.Fatal("shutdown left a live session open")
	}
	// A restart resumes from the store.
	h = newHarness(t, dir, Options{Backend: agent, Live: true})
	h.answered(t, h.send("c", "four"))
	h.close(t)
	starts = agent.startsCopy()
	if starts[len(starts)-1].SessionID != "fs-1" {
		t.Fatalf("after restart: resumed %q", starts[len(starts)-1].SessionID)
	}
	if got := agent.sessionsCopy()["fs-1"]; strings.Join(got, ",") != "one,two,three,four" {
		t.Fatalf("session fs-1 heard %v", got)
	}
}

func TestFallbackWithoutSessions(t *testing.T) {
	agent := newFakeAgent()
	h := newHarness(t, t.TempDir(), Options{Backend: noSessions{agent}, Live: true})
	defer h.close(t)
	h.answered(t, h.send("c", "one"))
	h.answered(t, h.send("c", "two"))
	if len(agent.startsCopy()) != 0 || !strings.Contains(strings.Join(agent.sessionsCopy()["fs-1"], ","), "one,two") {
		t.Fatalf("starts %d, sessions %v", len(agent.startsCopy()), agent.sessionsCopy())
	}
}

func TestUnknownSessionClearedAndRetriedOnce(t *testing.T) {
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprint("live=", live), func(t *testing.T) {
			agent := newFakeAgent()
			dir := t.TempDir()
			h := newHarness(t, dir, Options{Backend: agent, Live: live})
			defer h.close(t)
			setSID(h.store, "c", "ghost")
			if got := h.answered(t, h.send("c", "hi")); got != "echo: hi" {
				t.Fatalf("answer %q", got)
			}
			if sid, _ := getSID(h.store, "c"); sid != "fs-1" {
				t.Fatalf("store holds %q, want the new session", sid)
			}
			agent.mu.Lock()
			attempts := len(agent.runs) + len(agent.starts)
			agent.mu.Unlock()
			if attempts != 2 {
				t.Fatalf("%d attempts, want the failed one and one retry", attempts)
			}
		})
	}
}

func TestTransientRetried(t *testing.T) {
	e := &agentcli.ResultError{Backend: "scripted", APIStatus: 503}
	sb := agentclitest.NewBackend(agentclitest.Call{Err: e}, agentclitest.Call{Err: e}, agentclitest.Reply("finally", "s"))
	h := newHarness(t, t.TempDir(), Options{Backend: sb, Retry: agentcli.RetryOptions{MaxAttempts: 3, BaseDelay: time.Millisecond},
		Preview: true, MaxLen: 2000})
	defer h.close(t)
	if got := h.answered(t, h.send("c", "x")); got != "finally" {
		t.Fatalf("answer %q", got)
	}
	// Non-transient: one attempt, an error reply.
	sb.Push(agentclitest.Call{Err: &agentcli.ResultError{Backend: "scripted", APIStatus: 400, Message: "bad"}}, agentclitest.Reply("no", "s"))
	if got := h.answered(t, h.send("c", "y")); !strings.Contains(got, "failed") || !strings.Contains(got, "400") {
		t.Fatalf("answer %q", got)
	}
	if n := len(sb.Requests()); n != 4 {
		t.Fatalf("%d runs", n)
	}
}

func TestPermissionButtons(t *testing.T) {
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprint("live=", live), func(t *testing.T) {
			agent := newFakeAgent()
			var b agentcli.Backend = agent
			if !live {
				b = noSessions{agent}
			}
			newH := func(timeout time.Duration) *harness {
				h := newHarness(t, t.TempDir(), Options{Backend: b, Live: live, Preview: true, MaxLen: 2000,
					Request:  agentcli.Request{Permission: agentcli.PermissionAsk, PermissionTimeout: timeout},
					Allowed:  func(user string, _ []string) bool { return user == "u1" || user == "u2" || user == "boss" },
					Approver: func(user string, _ []string) bool { return user == "boss" }})
				h.chat.asked = make(chan *recMsg, 1)
				return h
			}
			h := newH(time.Minute)
			defer h.close(t)
			for _, tt := range []struct{ button, label, decision string }{
				{"allow", "Allowed once", "allow_once"},
				{"always", "Allowed for this session", "allow_always"},
				{"deny", "Denied", "reject_once"},
			} {
				id := h.send("c", "ask "+tt.button)
				m := <-h.chat.asked
				if len(m.buttons) != 3 || !strings.Contains(m.texts[0], "rm -rf build") {
					t.Fatalf("permission message %q with %d buttons", m.texts[0], len(m.buttons))
				}
				var bid string
				for _, b := range m.buttons {
					if strings.HasSuffix(b.ID, ":"+tt.button) {
						bid = b.ID
					}
				}
				if m.mention != "u1" {
					t.Fatalf("the permission request mentions %q, want the requester u1", m.mention)
				}
				for _, who := range []string{"intruder", "u2"} { // a stranger; another allowed user
					if text, ok := h.rt.Answer("c", bid, who, nil, nil); ok || !strings.Contains(text, "Only <@u1>") {
						t.Fatalf("press by %s: %q, %v", who, text, ok)
					}
				}
				if text, ok := h.rt.Answer("elsewhere", bid, "u1", nil, nil); ok {
					t.Fatalf("press from another channel: %q", text)
				}
				presser := "u1"
				if tt.button == "always" {
					presser = "boss" // an approver answers for anyone
				}
				text, ok := h.rt.Answer("c", bid, presser, nil, nil)
				if !ok || !strings.Contains(text, tt.label) || !strings.Contains(text, "<@"+presser+">") {
					t.Fatalf("press: %q, %v", text, ok)
				}
				if got := h.answered(t, id); got != "decision: "+tt.decision {
					t.Fatalf("answer %q, want decision %s", got, tt.decision)
				}
				if _, ok := h.rt.Answer("c", bid, "u1", nil, nil); ok {
					t.Fatal("a second press decided again")
				}
			}

			// No answer: denied, and the request says so.
			h2 := newH(30 * time.Millisecond)
			defer h2.close(t)
			id := h2.send("c", "ask nobody")
			m := <-h2.chat.asked
			if got := h2.answered(t, id); got != "decision: reject_once" {
				t.Fatalf("answer %q", got)
			}
			waitFor(t, "the timeout edit", func() bool {
				h2.chat.mu.Lock()
				defer h2.chat.mu.Unlock()
				return strings.Contains(m.final(), "No answer in time")
			})
		})
	}
}

// TestHardShutdown: when the drain deadline passes, the run in progress is
// cancelled and every message still waiting is answered, each once.
func TestHardShutdown(t *testing.T) {
	agent := newFakeAgent()
	h := newHarness(t, t.TempDir(), Options{Backend: noSessions{agent}, Preview: true, MaxLen: 2000})
	var ids []string
	ids = append(ids, h.send("c", "slow forever"))
	for i := range 3 {
		ids = append(ids, h.send("c", fmt.Sprint("queued ", i)))
	}
	waitFor(t, "the first run", func() bool { agent.mu.Lock(); defer agent.mu.Unlock(); return len(agent.runs) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	h.rt.Shutdown(ctx)
	for _, id := range ids {
		rs := h.chat.replies(id)
		if len(rs) != 1 {
			t.Fatalf("%s: %d replies", id, len(rs))
		}
		if !strings.Contains(rs[0].final(), "restarting") {
			t.Fatalf("%s: %q", id, rs[0].final())
		}
	}
	// Messages after shutdown are answered at once.
	late := h.send("c", "late")
	waitFor(t, "the answer to a late message", func() bool { return len(h.chat.replies(late)) == 1 })
	if got := h.chat.answer(late); !strings.Contains(got, "restarting") {
		t.Fatalf("late message: %q", got)
	}
	agent.mu.Lock()
	runs := len(agent.runs)
	agent.mu.Unlock()
	if runs != 1 {
		t.Fatalf("%d runs; the queued messages must not run after the deadline", runs)
	}
}

func TestErrorsReachTheChat(t *testing.T) {
	sb := agentclitest.NewBackend(agentclitest.Call{Err: &agentcli.ExitError{Backend: "scripted", Code: 1, Kind: agentcli.ErrAuth, Stderr: "Invalid API key"}})
	h := newHarness(t, t.TempDir(), Options{Backend: sb})
	defer h.close(t)
	if got := h.answered(t, h.send("c", "x")); !strings.Contains(got, "credentials") {
		t.Fatalf("answer %q", got)
	}
}

// TestRecover: after a crash, a message that was being answered gets its
// placeholder edited to ask for a resend (or a reply, without one); the
// messages that were waiting are answered, in their order.
func TestRecover(t *testing.T) {
	dir := t.TempDir()
	j, _ := NewFileJournal(filepath.Join(dir, "inflight"))
	chat := newRecChat()
	ph, _ := chat.Post(context.Background(), "c", "m1", "⏳ Working…")
	j.Running(Message{ID: "m1", Channel: "c", Text: "cut short", Seq: 1}, "c", ph)
	j.Running(Message{ID: "m2", Channel: "d", Text: "also cut", Seq: 2}, "d", "")
	j.Queued(Message{ID: "m4", Channel: "c", Text: "second", Seq: 4})
	j.Queued(Message{ID: "m3", Channel: "c", Text: "first", Seq: 3})
	agent := newFakeAgent()
	store, _ := NewFileStore(dir)
	rt := NewRuntime(Options{Backend: agent, Store: store, Queue: NewMemQueue(5, 50), Journal: j, Chat: chat, Logger: quiet()})
	resent, requeued := rt.Recover(context.Background())
	if resent != 2 || requeued != 2 {
		t.Fatalf("recover: %d resent, %d requeued", resent, requeued)
	}
	rt.Start()
	h := &harness{rt: rt, chat: chat, store: store}
	h.answered(t, "m4")
	h.close(t)
	if got := chat.answer("m1"); !strings.Contains(got, "restarted") || !strings.Contains(got, "send it again") {
		t.Errorf("the interrupted message shows %q", got)
	}
	if got := chat.answer("m2"); !strings.Contains(got, "send it again") {
		t.Errorf("the interrupted message without a placeholder: %q", got)
	}
	if got := agent.sessionsCopy()["fs-1"]; strings.Join(got, ",") != "first,second" {
		t.Errorf("the waiting messages ran as %v", got)
	}
	if p, _ := j.Pending(); len(p) != 0 {
		t.Errorf("journal left %+v", p)
	}
	if n := rt.nextSeq(); n <= 4 {
		t.Errorf("sequence %d after recovering 4", n)
	}
}
