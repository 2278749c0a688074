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
	"github.com/agentcli/agentcli/driver"
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
	driver.Register("gwfake", func(*agentcli.Options) agentcli.Backend {
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
	return startProgramArgs(t, f, agent, state, nil, extra...)
}

// startProgramArgs is startProgram with command-line arguments.
func startProgramArgs(t *testing.T, f *fakeDiscord, agent agentcli.Backend, state string, args []string, extra ...string) *program {
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
	go func() { p.done <- run(ctx, args, env, strings.NewReader(""), &syncBuffer{}, p.log) }()
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

// TestProgramMentionStripped: a message that mentions the bot (both
// spellings, the READY's user bot1) reaches the agent without the mention.
func TestProgramMentionStripped(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	p := startProgram(t, f, agent, "", "THREADS=false", "LIVE_SESSIONS=false")
	p.answer(p.send("c1", "alice", "<@bot1> hello <@!bot1>there"))
	agent.mu.Lock()
	got := agent.runs[0].Prompt
	agent.mu.Unlock()
	if strings.Contains(got, "bot1") || !strings.Contains(got, "hello") || !strings.Contains(got, "there") {
		t.Errorf("the agent's prompt %q still mentions the bot, or lost the text", got)
	}
	p.stop()
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
			deadline := time.Now().Add(90 * time.Second) // generous: a loaded machine under -race is slow
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
							if r, ok := f.placeholder(id); ok {
								channel := strings.TrimSuffix(strings.TrimPrefix(r.path, "channels/"), "/messages")
								t.Logf("its reply shows %q", f.shows(channel, r.id))
							}
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
						for _, r := range f.find("POST", "/messages") {
							if ref, _ := r.body["message_reference"].(map[string]any); ref != nil && ref["message_id"] == id {
								t.Logf("reply %s: %q", r.id, r.body["content"])
							}
						}
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
				// conversation (the new sessions are the warm ones).
				resumed := 0
				for _, s := range agent.startsCopy() {
					switch s.SessionID {
					case "fs-1":
						resumed++
					case "":
					default:
						t.Fatalf("a replacement session resumed %q, want fs-1", s.SessionID)
					}
				}
				if resumed < 2 {
					t.Fatalf("%d sessions resumed fs-1; the crashes should have replaced the session", resumed)
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
	// The fake served it; the gateway knows once it has read the answer
	// (a request it sends before then cannot have waited).
	waitFor(t, "the gateway to read the global 429", func() bool {
		return strings.Contains(p.log.String(), "discord global rate limit")
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
// a dropped connection, and one whose heartbeats go unacknowledged, is
// resumed (no second identify) and the messages sent meanwhile are
// answered, once; long and empty answers never make
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
	// Heartbeats that Discord stops acknowledging: discordgo gives the
	// connection up and resumes on a new one.
	f.mu.Lock()
	f.noAcks = true
	f.mu.Unlock()
	waitFor(t, "a resume after unacknowledged heartbeats", func() bool { _, r, _ := f.counts(); return r >= 2 })
	f.mu.Lock()
	f.noAcks = false
	f.mu.Unlock()
	if got := p.answer(p.send("c1", "alice", "after the silence")); !strings.Contains(got, "echo: ") {
		t.Errorf("after a zombie connection: %q", got)
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
	// A long answer is split; an empty message is no prompt. Discord
	// refuses nothing (checked by stop).
	long := p.send("c1", "alice", strings.Repeat("lorem ipsum ", 180))
	p.answer(long)
	waitFor(t, "the parts of a long answer", func() bool {
		n := 0
		for _, r := range f.find("POST", "channels/c1/messages") {
			if ref, _ := r.body["message_reference"].(map[string]any); ref != nil && ref["message_id"] == long {
				n++
			}
		}
		return n == 3 // the first line, then the long one cut at a space
	})
	p.send("c1", "alice", "   ")
	p.stop()
}

// TestProgramThreads: a message in a text channel starts a task in a
// thread of its own (named after it), where it is answered and goes on in
// one session; another task gets another thread and session; a direct
// message, a known thread and a channel Discord does not describe are
// conversations as they are.
func TestProgramThreads(t *testing.T) {
	f := newFakeDiscord(t)
	f.channel("general", 0)
	f.channel("old-thread", 11)
	agent := newFakeAgent()
	p := startProgram(t, f, agent, "", "THREADS=true")
	task := p.send("general", "alice", "fix the build\nit fails since Monday")
	if got := p.answer(task); !strings.Contains(got, "fix the build") {
		t.Fatalf("the task's answer: %q", got)
	}
	threads := f.find("POST", "channels/general/messages/"+task+"/threads")
	if len(threads) != 1 || threads[0].body["name"] != "fix the build" {
		t.Fatalf("thread requests %+v", threads)
	}
	if r, _ := f.placeholder(task); r.path != "channels/"+task+"/messages" {
		t.Fatalf("the task was answered in %s, not in its thread", r.path)
	}
	follow := p.send(task, "alice", "and the tests")
	p.answer(follow)
	if r, _ := f.placeholder(follow); r.path != "channels/"+task+"/messages" {
		t.Fatalf("the follow-up was answered in %s", r.path)
	}
	other := p.send("general", "bob", "write the changelog")
	p.answer(other)
	dm := p.send("dm1", "alice", "a direct question")
	p.answer(dm)
	old := p.send("old-thread", "alice", "in an old thread")
	p.answer(old)
	unknown := p.send("nowhere", "alice", "in a channel nobody knows")
	p.answer(unknown)
	// A channel where the bot may not start threads: the first task is
	// answered in the channel, and the channel is one conversation from
	// then on.
	f.mu.Lock()
	f.channels["locked"] = 0
	f.noThreads["locked"] = true
	f.mu.Unlock()
	refusedTask := p.send("locked", "alice", "no thread for me")
	p.answer(refusedTask)
	if r, _ := f.placeholder(refusedTask); r.path != "channels/locked/messages" {
		t.Errorf("a task without its thread was answered in %s", r.path)
	}
	p.answer(p.send("locked", "alice", "then the channel it is"))
	if n := len(f.find("POST", "/threads")); n != 3 {
		t.Errorf("%d threads asked for, want 3 (the two tasks, and one refused)", n)
	}
	sessions := agent.sessionsCopy()
	if got := sessions["fs-7"]; len(got) != 1 || body(got[0]) != "then the channel it is" {
		t.Errorf("after a refused thread: %v", sessions)
	}
	var got []string
	for _, id := range []string{"fs-1", "fs-2", "fs-3", "fs-4", "fs-5"} {
		var bodies []string
		for _, pr := range sessions[id] {
			bodies = append(bodies, body(pr))
		}
		got = append(got, strings.Join(bodies, "+"))
	}
	want := []string{"fix the build\nit fails since Monday+and the tests", "write the changelog", "a direct question",
		"in an old thread", "in a channel nobody knows"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("sessions heard %q, want %q", got, want)
	}
}

// TestProgramSlashCommands: the commands are registered (globally, or in
// COMMAND_GUILDS); they answer privately; /model completes from MODELS and
// sets the conversation's model; /new keeps its place among the messages;
// /stop stops the requester's answer.
func TestProgramSlashCommands(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	// No warm sessions: the test counts the sessions started.
	p := startProgram(t, f, agent, "", "THREADS=false", "MODELS=sonnet,opus,haiku", "BACKEND_MODEL=sonnet",
		"COMMAND_GUILDS=g1", "WARM_SESSIONS=0")
	waitFor(t, "the registration", func() bool { return len(f.find("PUT", "applications/app1/guilds/g1/commands")) == 1 })
	var names []string
	for _, c := range f.find("PUT", "applications/app1/guilds/g1/commands")[0].body["list"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "new,stop,backend,model,status,usage,help" {
		t.Errorf("registered %v", names)
	}
	slash := func(user, name string, options ...map[string]any) map[string]any {
		i := interaction(2, "c1", user, map[string]any{"id": "cmd-" + name, "name": name, "type": 1, "options": options})
		f.dispatch("INTERACTION_CREATE", i)
		return i
	}
	private := func(i map[string]any) string {
		t.Helper()
		cb := p.callback(i)
		d, _ := cb["data"].(map[string]any)
		if cb["type"].(float64) != 4 || d["flags"].(float64) != 64 {
			t.Errorf("not a private answer: %v", cb)
		}
		return d["content"].(string)
	}
	if got := private(slash("alice", "status")); !strings.Contains(got, "Status: idle") {
		t.Errorf("/status: %q", got)
	}
	ac := interaction(4, "c1", "alice", map[string]any{"id": "cmd-model", "name": "model", "type": 1,
		"options": []any{map[string]any{"name": "name", "type": 3, "value": "o", "focused": true}}})
	f.dispatch("INTERACTION_CREATE", ac)
	cb := p.callback(ac)
	var choices []string
	for _, c := range cb["data"].(map[string]any)["choices"].([]any) {
		choices = append(choices, c.(map[string]any)["value"].(string))
	}
	if cb["type"].(float64) != 8 || strings.Join(choices, ",") != "sonnet,opus" {
		t.Errorf("autocomplete: %v", cb)
	}
	if got := private(slash("alice", "model", map[string]any{"name": "name", "type": 3, "value": "gpt-9"})); !strings.Contains(got, "Unknown model") {
		t.Errorf("/model gpt-9: %q", got)
	}
	if got := private(slash("alice", "model", map[string]any{"name": "name", "type": 3, "value": "opus"})); !strings.Contains(got, "opus") {
		t.Errorf("/model opus: %q", got)
	}
	slow := p.send("c1", "alice", "slow task")
	waitFor(t, "the slow turn", func() bool { return len(agent.sessionsCopy()["fs-1"]) == 1 })
	if starts := agent.startsCopy(); starts[0].Model != "opus" {
		t.Errorf("the session runs %q, want the conversation's model opus", starts[0].Model)
	}
	if got := private(slash("alice", "new")); !strings.Contains(got, "afresh after the messages already waiting") {
		t.Errorf("/new: %q", got)
	}
	after := p.send("c1", "alice", "after the reset")
	if got := private(slash("bob", "stop")); !strings.Contains(got, "Only <@alice>") {
		t.Errorf("/stop by bob: %q", got)
	}
	if got := private(slash("alice", "stop")); !strings.Contains(got, "Stopping") {
		t.Errorf("/stop: %q", got)
	}
	if got := p.answer(slow); !strings.Contains(got, "Stopped") {
		t.Errorf("the slow task: %q", got)
	}
	p.answer(after)
	s := agent.sessionsCopy()
	if len(s["fs-1"]) != 1 || len(s["fs-2"]) != 1 || body(s["fs-2"][0]) != "after the reset" {
		t.Errorf("sessions %v; /new should have come between the two messages", s)
	}
	if got := private(slash("alice", "backend")); !strings.Contains(got, "fake") || !strings.Contains(got, "opus") {
		t.Errorf("/backend: %q", got) // the model is the conversation's: /new keeps it
	}
}

// TestProgramAttachments: a text file is inlined into the prompt; an image
// on a backend that takes none, a file of another kind, or more text than
// ATTACHMENT_MAX_BYTES, is refused with a reply and never reaches the
// agent. (Images that reach the agent: TestProgramImages.)
func TestProgramAttachments(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	p := startProgram(t, f, agent, "", "THREADS=false", "ATTACHMENT_MAX_BYTES=200")
	withFiles := func(text string, files ...map[string]any) string {
		id := nextSnowflake()
		m := message(id, "c1", "alice", text)
		m["attachments"] = files
		f.dispatch("MESSAGE_CREATE", m)
		return id
	}
	file := func(name, ct string, data []byte) map[string]any {
		return map[string]any{"id": nextSnowflake(), "filename": name, "content_type": ct, "size": len(data),
			"url": f.file(name, data)}
	}
	pasted := "panic: runtime error: index out of range [3] with length 3"
	got := p.answer(withFiles("what is this?", file("message.txt", "text/plain; charset=utf-8", []byte(pasted))))
	if !strings.Contains(got, pasted) || !strings.Contains(got, "message.txt") {
		t.Errorf("the text file did not reach the agent: %q", got)
	}
	for _, tt := range []struct {
		file map[string]any
		want string
	}{
		{file("shot.png", "image/png", []byte("\x89PNG\r\n")), "`shot.png` — the fake agent cannot take images"},
		{file("build.zip", "application/zip", []byte("PK")), "only pass on text files and images"},
		{file("big.log", "text/plain", []byte(strings.Repeat("x", 300))), "too large"},
	} {
		if got := p.answer(withFiles("look", tt.file)); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.file["filename"], got, tt.want)
		}
	}
	agent.mu.Lock()
	turns := agent.turns
	agent.mu.Unlock()
	if turns != 1 {
		t.Errorf("%d turns; refused attachments must not reach the agent", turns)
	}
}

// TestProgramSummaryAndUsage: an answer ends with a line of its duration,
// tokens and cost; /usage sums up the conversation.
func TestProgramSummaryAndUsage(t *testing.T) {
	f := newFakeDiscord(t)
	p := startProgram(t, f, newFakeAgent(), "", "THREADS=false")
	got := p.answer(p.send("c1", "alice", "usage please"))
	if !strings.Contains(got, "\n-# ✅ ") || !strings.Contains(got, "1,234 tokens in, 56 out") || !strings.Contains(got, "$0.0123") {
		t.Errorf("no summary line: %q", got)
	}
	p.answer(p.send("c1", "alice", "usage again"))
	if got := p.answer(p.send("c1", "alice", "/usage")); !strings.Contains(got, "This conversation: 2 answers · 2,468 tokens in, 112 out · $0.0246") {
		t.Errorf("/usage: %q", got)
	}
}

// TestProgramMaxLive: with MAX_LIVE_SESSIONS=2, a third conversation
// closes the least recently used idle session; that conversation's next
// message resumes its session. (Without warm sessions; with them:
// TestProgramWarmCap.)
func TestProgramMaxLive(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	p := startProgram(t, f, agent, "", "THREADS=false", "MAX_LIVE_SESSIONS=2", "WARM_SESSIONS=0")
	for _, c := range []string{"c1", "c2", "c3", "c1"} {
		p.answer(p.send(c, "alice", "hello from "+c))
		if n := agent.openSessions(); n > 2 {
			t.Fatalf("%d live sessions", n)
		}
	}
	starts := agent.startsCopy()
	if len(starts) != 4 || starts[3].SessionID != "fs-1" {
		var ids []string
		for _, s := range starts {
			ids = append(ids, s.SessionID)
		}
		t.Fatalf("starts resuming %q; want c1's session resumed after its eviction", ids)
	}
}
