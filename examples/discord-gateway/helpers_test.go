package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

func TestMain(m *testing.M) {
	guardExec() // the test binary stands in for the gateway's own as a CLI's guard
	code := m.Run()
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}

// getSID, setSID and deleteEntry read and write the session id of a
// conversation.
func getSID(s SessionStore, conv string) (string, error) {
	e, err := s.Get(context.Background(), conv)
	return e.SessionID, err
}

func setSID(s SessionStore, conv, id string) error {
	_, err := s.Update(context.Background(), conv, func(e *Entry) { e.SessionID = id })
	return err
}

func deleteEntry(s SessionStore, conv string) error {
	_, err := s.Update(context.Background(), conv, func(e *Entry) { *e = Entry{} })
	return err
}

// quiet is a logger for tests; GATEWAY_TEST_LOG=1 shows the logs.
func quiet() *slog.Logger {
	if os.Getenv("GATEWAY_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// recChat is a Chat that records everything, in order.
type recChat struct {
	mu      sync.Mutex
	seq     int
	msgs    map[string]*recMsg
	order   []*recMsg // by post
	typed   atomic.Int64
	asked   chan *recMsg      // permission requests, when set
	threads map[string]string // started: id → name
}

type recMsg struct {
	id, channel, replyTo string
	texts                []string // the posted text, then every edit
	buttons              []Button
	mention              string
	posted, last         int // sequence numbers of the post and the last change
}

func newRecChat() *recChat { return &recChat{msgs: map[string]*recMsg{}} }

func (c *recChat) Post(ctx context.Context, channel, replyTo, text string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	m := &recMsg{id: fmt.Sprint("r", c.seq), channel: channel, replyTo: replyTo, texts: []string{text}, posted: c.seq, last: c.seq}
	c.msgs[m.id] = m
	c.order = append(c.order, m)
	return m.id, nil
}

func (c *recChat) Edit(ctx context.Context, channel, id, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.msgs[id]
	if m == nil || m.channel != channel {
		return fmt.Errorf("edit of unknown message %s in %s", id, channel)
	}
	c.seq++
	m.texts = append(m.texts, text)
	m.buttons = nil
	m.last = c.seq
	return nil
}

func (c *recChat) Typing(ctx context.Context, channel string) error {
	c.typed.Add(1)
	return nil
}

func (c *recChat) Ask(ctx context.Context, channel string, card Card) (string, error) {
	id, _ := c.Post(ctx, channel, "", card.Text)
	c.mu.Lock()
	m := c.msgs[id]
	m.buttons = card.Buttons
	m.mention = card.Mention
	c.mu.Unlock()
	if c.asked != nil {
		c.asked <- m
	}
	return id, nil
}

// StartThread starts a thread whose id is the message's, as Discord does;
// channel "nothreads" refuses.
func (c *recChat) StartThread(ctx context.Context, channel, messageID, name string) (string, error) {
	if channel == "nothreads" {
		return "", errors.New("missing permissions")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.threads == nil {
		c.threads = map[string]string{}
	}
	c.threads[messageID] = name
	return messageID, nil
}

// replies returns the messages that answer message id, in order.
func (c *recChat) replies(id string) []*recMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*recMsg
	for _, m := range c.order {
		if m.replyTo == id {
			out = append(out, m)
		}
	}
	return out
}

// final returns the text a message shows now.
func (m *recMsg) final() string { return m.texts[len(m.texts)-1] }

// answer returns the complete answer to message id: the final text of
// every reply to it, joined.
func (c *recChat) answer(id string) string {
	var parts []string
	for _, m := range c.replies(id) {
		c.mu.Lock()
		parts = append(parts, m.final())
		c.mu.Unlock()
	}
	return strings.Join(parts, "\n")
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t tb, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// echoBackend answers "echo: <prompt>" and keeps sessions: a run without
// SessionID starts one, a run with an unknown SessionID fails with
// ErrSessionNotFound. It fails transiently at random (before any content,
// at most maxFail times per prompt) and records the prompts of every
// session and how many runs it has at once.
type echoBackend struct {
	failP   float64
	maxFail int
	delay   time.Duration // at most, per event

	mu       sync.Mutex
	rng      *rand.Rand
	sessions map[string][]string
	next     int
	failures map[string]int
	faults   int
	notFound int

	cur, max atomic.Int32
}

func newEchoBackend(seed uint64, failP float64, maxFail int) *echoBackend {
	return &echoBackend{failP: failP, maxFail: maxFail, rng: rand.New(rand.NewPCG(seed, seed^0x9e37)),
		sessions: map[string][]string{}, failures: map[string]int{}}
}

func (b *echoBackend) Name() string                    { return "echo" }
func (b *echoBackend) Check(ctx context.Context) error { return nil }
func (b *echoBackend) Capabilities() agentcli.Capabilities {
	return agentcli.Capabilities{TextDeltas: true, Resume: true,
		PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass}}
}

func (b *echoBackend) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	var res *agentcli.Result
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			return res, err
		}
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
	}
	return res, nil
}

var transientErrs = []error{
	&agentcli.ResultError{Backend: "echo", APIStatus: 503, Message: "overloaded"},
	&agentcli.ExitError{Backend: "echo", Code: -1},
	&agentcli.ExitError{Backend: "echo", Code: 1, Kind: agentcli.ErrRateLimited},
	&agentcli.NoResultError{Backend: "echo"},
}

func (b *echoBackend) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		n := b.cur.Add(1)
		defer b.cur.Add(-1)
		for {
			m := b.max.Load()
			if n <= m || b.max.CompareAndSwap(m, n) {
				break
			}
		}
		b.mu.Lock()
		var fail error
		if b.failures[req.Prompt] < b.maxFail && b.rng.Float64() < b.failP {
			b.failures[req.Prompt]++
			b.faults++
			fail = transientErrs[b.rng.IntN(len(transientErrs))]
		}
		id := req.SessionID
		switch {
		case fail != nil:
		case id == "":
			b.next++
			id = fmt.Sprint("s-", b.next)
			b.sessions[id] = nil
		case !b.has(id):
			b.notFound++
			fail = &agentcli.ExitError{Backend: "echo", Code: 1, Kind: agentcli.ErrSessionNotFound,
				Stderr: "No conversation found with session ID: " + id}
		}
		if fail == nil {
			b.sessions[id] = append(b.sessions[id], req.Prompt)
		}
		d := time.Duration(0)
		if b.delay > 0 {
			d = time.Duration(b.rng.Int64N(int64(b.delay)))
		}
		b.mu.Unlock()

		wait := func() bool {
			if d == 0 {
				return ctx.Err() == nil
			}
			select {
			case <-time.After(d):
				return true
			case <-ctx.Done():
				return false
			}
		}
		if !wait() {
			yield(agentcli.Event{}, &agentcli.CanceledError{Backend: "echo", Err: context.Cause(ctx)})
			return
		}
		if fail != nil {
			// A transient failure right after the CLI started: the init
			// event is all that came before it.
			if yield(agentcli.Event{Kind: agentcli.EventInit, SessionID: "doomed"}, nil) {
				yield(agentcli.Event{}, fail)
			}
			return
		}
		text := "echo: " + req.Prompt
		evs := []agentcli.Event{{Kind: agentcli.EventInit, SessionID: id}}
		for _, part := range []string{text[:len(text)/2], text[len(text)/2:]} {
			evs = append(evs, agentcli.Event{Kind: agentcli.EventTextDelta, SessionID: id, Text: part})
		}
		evs = append(evs,
			agentcli.Event{Kind: agentcli.EventText, SessionID: id, Text: text},
			agentcli.Event{Kind: agentcli.EventResult, SessionID: id, Result: &agentcli.Result{Text: text, SessionID: id}})
		for _, ev := range evs {
			if !wait() {
				yield(agentcli.Event{}, &agentcli.CanceledError{Backend: "echo", Err: context.Cause(ctx)})
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// has reports whether session id exists; b.mu is held.
func (b *echoBackend) has(id string) bool {
	_, ok := b.sessions[id]
	return ok
}

// sessionsOf returns the sessions whose prompts start with prefix, each
// as its list of prompts, ordered by their first prompt's position.
func (b *echoBackend) sessionsOf(prefix string) map[string][]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string][]string{}
	for id, ps := range b.sessions {
		if len(ps) > 0 && strings.HasPrefix(ps[0], prefix) {
			out[id] = slices.Clone(ps)
		}
	}
	return out
}

var goroutineHeader = regexp.MustCompile(`^goroutine (\d+) `)

// goroutines returns the stacks of the running goroutines by id.
func goroutines() map[string]string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if m := goroutineHeader.FindStringSubmatch(g); m != nil {
			out[m[1]] = g
		}
	}
	return out
}

// noLeaks fails t if goroutines that were not in before are still running
// a few seconds later (ours, not the test framework's).
func noLeaks(t *testing.T, before map[string]string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var leaked []string
		for id, g := range goroutines() {
			if _, old := before[id]; old || strings.Contains(g, "main.noLeaks") {
				continue
			}
			leaked = append(leaked, g)
		}
		if len(leaked) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines left behind:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}
