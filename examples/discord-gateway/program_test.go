package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// The program tests run the program itself — run(), as main calls it, in
// Discord mode — against a fake Discord on 127.0.0.1 (fakeDiscord), with
// AGENT_BACKEND=gwfake: a backend registered here that hands out the
// test's fake agent. Everything between the environment and the agent is
// the program's own wiring.

var progBackend struct {
	sync.Mutex
	b agentcli.Backend
}

func init() {
	agentcli.Register("gwfake", func(*agentcli.Options) agentcli.Backend {
		progBackend.Lock()
		defer progBackend.Unlock()
		return progBackend.b
	})
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// program is a running gateway.
type program struct {
	t      *testing.T
	f      *fakeDiscord
	state  string
	cancel context.CancelFunc
	done   chan int
	log    *syncBuffer
}

// progEnv is the environment of the program tests: what an operator sets,
// plus a secret of the host that must not reach the agent.
func progEnv(f *fakeDiscord, state string, extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/gateway", "LANG=C.UTF-8",
		"DISCORD_TOKEN=test-token", "HOST_SECRET=do-not-leak",
		"ALLOWED_USERS=alice,bob", "APPROVERS=boss,role-approvers",
		"AGENT_BACKEND=gwfake", "BACKEND_CLI_PATH=/bin/true",
		"DISCORD_API_URL=" + f.api, "DISCORD_GATEWAY_URL=" + f.ws,
		"STATE_DIR=" + state, "RETRY_DELAY=0.02",
	}, extra...)
}

// startProgram runs the program on agent against f and waits until it is
// connected. extra adds to (and overrides) the environment.
func startProgram(t *testing.T, f *fakeDiscord, agent agentcli.Backend, state string, extra ...string) *program {
	t.Helper()
	progBackend.Lock()
	progBackend.b = agent
	progBackend.Unlock()
	if state == "" {
		state = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &program{t: t, f: f, state: state, cancel: cancel, done: make(chan int, 1), log: &syncBuffer{}}
	env := progEnv(f, state, extra...)
	identified, _, _ := f.counts()
	go func() { p.done <- run(ctx, nil, env, strings.NewReader(""), &syncBuffer{}, p.log) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if n, _, _ := f.counts(); n > identified && len(f.find("PUT", "commands")) >= 0 {
			break
		}
		select {
		case code := <-p.done:
			t.Fatalf("the program exited %d before connecting:\n%s", code, p.log.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("the program did not connect:\n%s", p.log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() || os.Getenv("GATEWAY_TEST_LOG") != "" {
			t.Logf("gateway log:\n%s", p.log.String())
		}
	})
	// Let the READY and GUILD_CREATE through the intake.
	time.Sleep(20 * time.Millisecond)
	return p
}

// stop stops the program as SIGTERM does and checks that it exits 0 and
// that Discord refused nothing it sent.
func (p *program) stop() {
	if p.cancel == nil {
		return
	}
	p.cancel()
	p.cancel = nil
	select {
	case code := <-p.done:
		if code != 0 {
			p.t.Errorf("exit status %d", code)
		}
	case <-time.After(90 * time.Second):
		p.t.Fatal("the program did not stop")
	}
	if r := p.f.refusals(); len(r) > 0 {
		p.t.Errorf("Discord refused %d requests: %q", len(r), r)
	}
}

// send dispatches a message by user in channel and returns its id.
func (p *program) send(channel, user, text string, roles ...string) string {
	id := nextSnowflake()
	p.f.dispatch("MESSAGE_CREATE", message(id, channel, user, text, roles...))
	return id
}

// placeholder returns the message that answers msg: the POST in channel
// that replies to it, or (a task's thread) the first plain POST in the
// thread msg. ok is false until it exists.
func (f *fakeDiscord) placeholder(msg string) (fakeReq, bool) {
	for _, r := range f.requests() {
		if r.method != "POST" || r.status != 200 || !strings.HasSuffix(r.path, "/messages") || r.body["components"] != nil {
			continue
		}
		ref, _ := r.body["message_reference"].(map[string]any)
		if ref != nil && ref["message_id"] == msg || ref == nil && r.path == "channels/"+msg+"/messages" {
			return r, true
		}
	}
	return fakeReq{}, false
}

// shows returns what message id of channel shows now: its last content.
func (f *fakeDiscord) shows(channel, id string) string {
	text := ""
	for _, r := range f.requests() {
		if r.status != 200 {
			continue
		}
		c, _ := r.body["content"].(string)
		switch {
		case r.method == "POST" && r.id == id:
			text = c
		case r.method == "PATCH" && r.path == "channels/"+channel+"/messages/"+id:
			text = c
		}
	}
	return text
}

// answer waits until msg's answer is final and returns it.
func (p *program) answer(msg string) string {
	p.t.Helper()
	var text string
	waitFor(p.t, "the answer to "+msg, func() bool {
		r, ok := p.f.placeholder(msg)
		if !ok {
			return false
		}
		channel := strings.TrimSuffix(strings.TrimPrefix(r.path, "channels/"), "/messages")
		text = p.f.shows(channel, r.id)
		return text != "" && !strings.HasSuffix(text, " ▍") && !strings.HasPrefix(text, "⏳ Working")
	})
	return text
}

// callbacks returns the interaction callbacks of interaction payload i.
func (f *fakeDiscord) callbacks(i map[string]any) []fakeReq {
	return f.find("POST", fmt.Sprintf("interactions/%s/%s/callback", i["id"], i["token"]))
}

// callback waits for the callback of interaction i and returns its body.
func (p *program) callback(i map[string]any) map[string]any {
	p.t.Helper()
	waitFor(p.t, "the interaction's callback", func() bool { return len(p.f.callbacks(i)) > 0 })
	return p.f.callbacks(i)[0].body
}

// TestProgramEnvAllowList (finding 1): the agent's CLI gets an allow-list
// of the gateway's environment and the operator's AGENT_ENV additions;
// never DISCORD_TOKEN, another DISCORD_ variable or a secret of the host.
func TestProgramEnvAllowList(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	p := startProgram(t, f, agent, "", "THREADS=false", "LIVE_SESSIONS=false", "EXTRA_FOR_AGENT=yes",
		"AGENT_ENV=EXTRA_FOR_AGENT,SET_HERE=1")
	p.answer(p.send("c1", "alice", "hello"))
	agent.mu.Lock()
	req := agent.runs[0]
	agent.mu.Unlock()
	env := strings.Join(req.Env, "\n")
	if !req.ReplaceEnv {
		t.Fatal("the CLI inherits the gateway's environment (ReplaceEnv is false)")
	}
	for _, want := range []string{"PATH=", "HOME=/home/gateway", "LANG=C.UTF-8", "EXTRA_FOR_AGENT=yes", "SET_HERE=1", envTag + "="} {
		if !strings.Contains(env, want) {
			t.Errorf("the CLI's environment lacks %s:\n%s", want, env)
		}
	}
	for _, never := range []string{"test-token", "DISCORD_", "HOST_SECRET", "do-not-leak"} {
		if strings.Contains(env, never) {
			t.Errorf("the CLI's environment has %s:\n%s", never, env)
		}
	}
	p.stop()
	if strings.Contains(p.log.String(), "test-token") {
		t.Error("the token is in the log")
	}
}

// TestProgramOrder50x20 (finding 2): 50 conversations × 20 messages,
// dispatched back to back over the websocket and delivered by discordgo:
// every message is answered once, with its own answer, and each
// conversation's agent session hears its messages in the order they were
// sent. Once with a conversation per channel, once with a thread per task
// (the follow-ups sent in the tasks' threads).
func TestProgramOrder50x20(t *testing.T) {
	const convs, per = 50, 20
	for _, threads := range []bool{false, true} {
		t.Run(fmt.Sprint("threads=", threads), func(t *testing.T) {
			f := newFakeDiscord(t)
			for c := range convs {
				f.channel(fmt.Sprintf("ch%02d", c), 0)
			}
			agent := newFakeAgent()
			agent.turnDelay = time.Millisecond
			p := startProgram(t, f, agent, "", fmt.Sprint("THREADS=", threads), "QUEUE_DEPTH=20", "QUEUE_TOTAL=1000",
				"MAX_CONCURRENT_RUNS=8")
			text := func(c, k int) string { return fmt.Sprintf("ch%02d-m%02d", c, k) }
			ids := make([][]string, convs)
			where := make([]string, convs) // the conversation's channel
			for c := range convs {
				where[c] = fmt.Sprintf("ch%02d", c)
			}
			first := 0
			if threads {
				// The tasks: one message in each channel; each gets a
				// thread, where the rest of the conversation goes.
				for c := range convs {
					ids[c] = append(ids[c], p.send(where[c], "alice", text(c, 0)))
				}
				waitFor(t, "the threads", func() bool { return len(f.find("POST", "/threads")) == convs })
				for c := range convs {
					where[c] = ids[c][0]
				}
				first = 1
			}
			for k := first; k < per; k++ {
				for c := range convs {
					ids[c] = append(ids[c], p.send(where[c], "alice", text(c, k)))
				}
			}
			deadline := time.Now().Add(2 * time.Minute)
			for c := range convs {
				for k, id := range ids[c] {
					for {
						r, ok := f.placeholder(id)
						if ok {
							channel := strings.TrimSuffix(strings.TrimPrefix(r.path, "channels/"), "/messages")
							if channel != where[c] {
								t.Fatalf("%s answered in %s, want %s", text(c, k), channel, where[c])
							}
							got := f.shows(channel, r.id)
							if strings.Contains(got, "echo: ") {
								if !strings.Contains(got, text(c, k)) || strings.Count(got, "echo:") != 1 {
									t.Fatalf("%s answered %q", text(c, k), got)
								}
								break
							}
						}
						if time.Now().After(deadline) {
							t.Fatalf("%s: no answer", text(c, k))
						}
						time.Sleep(5 * time.Millisecond)
					}
				}
			}
			// Once each, in order, one session per conversation.
			placeholders := map[string]int{}
			for _, r := range f.find("POST", "/messages") {
				if ref, _ := r.body["message_reference"].(map[string]any); ref != nil {
					placeholders[ref["message_id"].(string)]++
				}
			}
			sessions := agent.sessionsCopy()
			for c := range convs {
				for k, id := range ids[c] {
					if n := placeholders[id]; n != 1 && !(threads && k == 0) {
						t.Fatalf("%s: %d replies", text(c, k), n)
					}
				}
				var heard []string
				for _, prompts := range sessions {
					if len(prompts) > 0 && strings.HasPrefix(body(prompts[0]), fmt.Sprintf("ch%02d-", c)) {
						if heard != nil {
							t.Fatalf("ch%02d: two sessions", c)
						}
						for _, pr := range prompts {
							heard = append(heard, body(pr))
						}
					}
				}
				var want []string
				for k := range per {
					want = append(want, text(c, k))
				}
				if strings.Join(heard, ",") != strings.Join(want, ",") {
					t.Fatalf("ch%02d: the agent heard %v, want %v", c, heard, want)
				}
			}
			if o := agent.openSessions(); o > 8 {
				t.Errorf("%d live sessions open, MAX_LIVE_SESSIONS is 8", o)
			}
		})
	}
}

// faults scripts the fake agent's failures by the prompt's text: each
// entry's errors are returned by its successive attempts, then it
// succeeds. It returns the attempts made per text.
func faults(agent *fakeAgent, script map[string][]error) func() map[string]int {
	var mu sync.Mutex
	attempts := map[string]int{}
	agent.fault = func(prompt string) error {
		b := body(prompt)
		mu.Lock()
		defer mu.Unlock()
		attempts[b]++
		if errs := script[b]; attempts[b] <= len(errs) {
			return errs[attempts[b]-1]
		}
		return nil
	}
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range attempts {
			out[k] = v
		}
		return out
	}
}

// TestProgramFailures (findings 3, 4, 8), on live sessions (the default)
// and on one CLI process per message: a failure shows the CLI's error, not
// Node's warnings before it; a crash (exit status 1, or a live session's
// CLI dying), a 5xx and a timeout are retried, three attempts in all; a
// run that failed after it had shown output is not run again and says so;
// a timeout says "Query timed out".
func TestProgramFailures(t *testing.T) {
	stderr := "(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated. Please use a userland alternative instead.\n" +
		"(Use `node --trace-deprecation ...` to show where the warning was created)\n" +
		"file:///usr/lib/node_modules/cli.js:12\n    throw new InvalidModelError(name)\n    ^\n\n" +
		"InvalidModelError: model 'gpt-9' does not exist\n    at main (file:///usr/lib/node_modules/cli.js:12:11)"
	crash := &agentcli.ExitError{Backend: "fake", Code: 1, Stderr: stderr}
	overloaded := &agentcli.ResultError{Backend: "fake", APIStatus: 529, Message: "Overloaded"}
	timeout := &agentcli.TimeoutError{Backend: "fake", Timeout: 7 * time.Second}
	for _, live := range []bool{true, false} {
		t.Run(fmt.Sprint("live=", live), func(t *testing.T) {
			f := newFakeDiscord(t)
			agent := newFakeAgent()
			var b agentcli.Backend = agent
			if !live {
				b = noSessions{agent}
			}
			attempts := faults(agent, map[string][]error{
				"always crashes":   {crash, crash, crash},
				"crashes once":     {crash},
				"overloaded twice": {overloaded, overloaded},
				"times out":        {timeout, timeout, timeout},
			})
			p := startProgram(t, f, b, "", "THREADS=false", "QUERY_TIMEOUT=7")
			p.answer(p.send("c1", "alice", "hello")) // the conversation's session: fs-1
			for _, tt := range []struct {
				text, want string
				attempts   int
				not        []string
			}{
				{"always crashes", "⚠️ The agent failed: exit status 1: InvalidModelError: model 'gpt-9' does not exist", 3,
					[]string{"DeprecationWarning", "node:4242"}},
				{"crashes once", "echo: ", 2, nil},
				{"overloaded twice", "echo: ", 3, nil},
				{"times out", "⏱ Query timed out after 7s", 3, nil},
				{"partial answer", "half an answer", 1, nil},
			} {
				got := p.answer(p.send("c1", "alice", tt.text))
				if !strings.Contains(got, tt.want) {
					t.Errorf("%q: answered %q, want %q", tt.text, got, tt.want)
				}
				for _, n := range tt.not {
					if strings.Contains(got, n) {
						t.Errorf("%q: the answer shows %q: %q", tt.text, n, got)
					}
				}
				if n := attempts()[tt.text]; n != tt.attempts {
					t.Errorf("%q: %d attempts, want %d", tt.text, n, tt.attempts)
				}
				if tt.text == "partial answer" && !strings.Contains(got, "not run again") {
					t.Errorf("a failure after output does not say it was not run again: %q", got)
				}
			}
			if live {
				// The crashed sessions were replaced, each resuming the
				// conversation.
				starts := agent.startsCopy()
				if len(starts) < 3 {
					t.Fatalf("%d sessions started; the crashes should have replaced the session", len(starts))
				}
				for _, s := range starts[1:] {
					if s.SessionID != "fs-1" {
						t.Fatalf("a replacement session resumed %q, want fs-1", s.SessionID)
					}
				}
			}
		})
	}
}

// TestProgramRequesterBinding (finding 5): the prompt names its requester;
// a permission request mentions (and pings) them and only they or an
// approver may answer it; /stop and /new of a conversation are for its
// requester, its owner or an approver.
func TestProgramRequesterBinding(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	p := startProgram(t, f, agent, "", "THREADS=false", "PERMISSION_MODE=ask", "ALLOWED_ROLES=devs")
	m := p.send("c1", "alice", "ask to clean up")
	var card fakeReq
	waitFor(t, "the permission request", func() bool {
		for _, r := range f.find("POST", "channels/c1/messages") {
			if r.body["components"] != nil {
				card = r
				return true
			}
		}
		return false
	})
	content := card.body["content"].(string)
	if !strings.HasPrefix(content, "<@alice>") || !strings.Contains(content, "rm -rf build") {
		t.Errorf("the request does not mention its requester: %q", content)
	}
	am := card.body["allowed_mentions"].(map[string]any)
	if users, _ := am["users"].([]any); len(users) != 1 || users[0] != "alice" || len(am["parse"].([]any)) != 0 {
		t.Errorf("the request pings %v, want alice only", am)
	}
	row := card.body["components"].([]any)[0].(map[string]any)["components"].([]any)
	allow := row[0].(map[string]any)["custom_id"].(string)
	press := func(user string, roles ...string) map[string]any {
		i := interaction(3, "c1", user, map[string]any{"custom_id": allow, "component_type": 2}, roles...)
		i["message"] = map[string]any{"id": card.id, "channel_id": "c1"}
		f.dispatch("INTERACTION_CREATE", i)
		return i
	}
	for _, who := range [][]string{{"bob"}, {"carol", "devs"}, {"mallory"}} {
		cb := p.callback(press(who[0], who[1:]...))
		d := cb["data"].(map[string]any)
		if cb["type"].(float64) != 4 || d["flags"].(float64) != 64 || !strings.Contains(d["content"].(string), "Only <@alice>") {
			t.Errorf("a press by %s: %v; want a private refusal", who[0], cb)
		}
	}
	cb := p.callback(press("zed", "role-approvers")) // an approver, by role
	if d := cb["data"].(map[string]any); cb["type"].(float64) != 7 || !strings.Contains(d["content"].(string), "Allowed once by <@zed>") {
		t.Errorf("an approver's press: %v", cb)
	}
	if got := p.answer(m); !strings.Contains(got, "decision: allow_once") {
		t.Errorf("answer %q", got)
	}
	agent.mu.Lock()
	prompt := agent.sessions["fs-1"][0]
	agent.mu.Unlock()
	if !strings.HasPrefix(prompt, "Message from <@alice> (alice):\n") {
		t.Errorf("the prompt does not name its requester: %q", prompt)
	}

	// /stop and /new: refused to another user, allowed to the requester
	// and to an approver.
	slow := p.send("c1", "alice", "slow one")
	waitFor(t, "the slow turn", func() bool { return len(agent.sessionsCopy()["fs-1"]) == 2 })
	for _, cmd := range []string{"/stop", "/new"} {
		got := p.answer(p.send("c1", "bob", cmd))
		if !strings.Contains(got, "Only <@alice>") {
			t.Errorf("%s by bob: %q", cmd, got)
		}
	}
	p.answer(p.send("c1", "alice", "/stop"))
	if got := p.answer(slow); !strings.Contains(got, "Stopped") {
		t.Errorf("after /stop: %q", got)
	}
	if got := p.answer(p.send("c1", "boss", "/new")); !strings.Contains(got, "Fresh start") {
		t.Errorf("/new by an approver: %q", got)
	}
}

// TestProgramGlobal429 (finding 7): after a 429 whose scope is global,
// no request to any route goes out before its retry_after has passed; a
// route's own 429 holds only that channel.
func TestProgramGlobal429(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	agent.textDelay = 300 * time.Millisecond
	p := startProgram(t, f, agent, "", "THREADS=false")
	f.rateLimitNext("POST channels/c1/messages", 0.6, true)
	a := p.send("c1", "alice", "one")
	waitFor(t, "the 429", func() bool {
		for _, r := range f.requests() {
			if r.status == 429 {
				return true
			}
		}
		return false
	})
	b := p.send("c2", "alice", "two")
	p.answer(a)
	p.answer(b)
	var limited fakeReq
	for _, r := range f.requests() {
		if r.status == 429 {
			limited = r
		}
	}
	if limited.at.IsZero() {
		t.Fatal("no 429 was served")
	}
	after := 0
	for _, r := range f.requests() {
		if r.n <= limited.n || strings.HasPrefix(r.path, "interactions/") {
			continue
		}
		after++
		if gap := r.at.Sub(limited.at); gap < 550*time.Millisecond {
			t.Errorf("%s %s went out %v after a global 429 with retry_after 0.6s", r.method, r.path, gap)
		}
	}
	if after == 0 {
		t.Fatal("nothing after the 429")
	}

	// A route's own 429: the other channel goes on meanwhile.
	f.rateLimitNext("POST channels/c3/messages", 1, false)
	c := p.send("c3", "alice", "three")
	d := p.send("c4", "alice", "four")
	p.answer(c)
	p.answer(d)
	pc, _ := f.placeholder(c)
	pd, _ := f.placeholder(d)
	if pd.at.After(pc.at) {
		t.Errorf("a 429 of channel c3 held channel c4 (posted %v after)", pd.at.Sub(pc.at))
	}
}

// TestProgramConnection (finding 9): heartbeats are sent and acknowledged;
// a dropped connection is resumed (no second identify) and the messages
// sent meanwhile are answered, once; long and empty answers never make
// Discord refuse a request.
func TestProgramConnection(t *testing.T) {
	f := newFakeDiscord(t)
	f.heartbeat = 50 * time.Millisecond
	sb := agentcli.Backend(newFakeAgent())
	p := startProgram(t, f, sb, "", "THREADS=false")
	waitFor(t, "heartbeats", func() bool { _, _, h := f.counts(); return h >= 4 })
	p.answer(p.send("c1", "alice", "before"))
	f.drop()
	during := p.send("c1", "alice", "during")
	waitFor(t, "the resume", func() bool { _, r, _ := f.counts(); return r == 1 })
	if got := p.answer(during); !strings.Contains(got, "echo: ") {
		t.Errorf("after a reconnect: %q", got)
	}
	if i, _, _ := f.counts(); i != 1 {
		t.Errorf("%d identifies; a dropped connection should be resumed", i)
	}
	placeholders := 0
	for _, r := range f.find("POST", "channels/c1/messages") {
		if ref, _ := r.body["message_reference"].(map[string]any); ref != nil && ref["message_id"] == during {
			placeholders++
		}
	}
	if placeholders != 1 {
		t.Errorf("%d replies to the message sent during the reconnect", placeholders)
	}
}
