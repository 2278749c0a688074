package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/cluster"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The pool tests run the program with NATS_URL against an embedded NATS
// server with JetStream on 127.0.0.1 and workers (cluster.Worker) in the
// test process, whose backend is a fake agent shared by the workers (as
// workers sharing one HOME would share the CLI's sessions). The gateway's
// own backend (AGENT_BACKEND=gwfake, registered by program_test.go) is
// another fake agent, which must never run.

// startNATS starts an embedded NATS server with JetStream and returns its
// URL.
func startNATS(t *testing.T) string {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	return srv.ClientURL()
}

// workerAgent is the fake agent as a worker runs it: named as the
// gateway's backend, counting what this worker ran.
type workerAgent struct {
	*fakeAgent
	name string // "" means gwfake
	ran  atomic.Int64
}

func (w *workerAgent) Name() string {
	if w.name == "" {
		return "gwfake"
	}
	return w.name
}

func (w *workerAgent) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	w.ran.Add(1)
	return w.fakeAgent.Stream(ctx, req)
}

func (w *workerAgent) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	w.ran.Add(1)
	return w.fakeAgent.Run(ctx, req)
}

func (w *workerAgent) StartSession(ctx context.Context, req *agentcli.Request) (agentcli.Session, error) {
	w.ran.Add(1)
	return w.fakeAgent.StartSession(ctx, req)
}

// startPoolWorker runs a worker of the pool at url on agent.
func startPoolWorker(t *testing.T, url string, agent *fakeAgent, id string) *workerAgent {
	t.Helper()
	return startNamedWorker(t, url, &workerAgent{fakeAgent: agent}, id)
}

func startNamedWorker(t *testing.T, url string, wa *workerAgent, id string) *workerAgent {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	w, err := cluster.NewWorker(nc, wa, &cluster.WorkerOptions{ID: id, MaxRuns: 4, Heartbeat: 100 * time.Millisecond,
		AckWait: 2 * time.Second, DrainTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("worker %s did not stop", id)
		}
		nc.Close()
	})
	return wa
}

// sendAll sends per messages to each of channels, interleaved, and
// returns their ids per channel.
func sendAll(p *program, channels []string, per int) map[string][]string {
	ids := map[string][]string{}
	for k := range per {
		for _, c := range channels {
			ids[c] = append(ids[c], p.send(c, "alice", fmt.Sprintf("%s-m%02d", c, k)))
		}
	}
	return ids
}

// checkAnsweredInOrder waits until every message is answered, then
// checks that each got exactly one reply, with its own echo, and that
// each channel's session heard its messages once each, in order.
func checkAnsweredInOrder(t *testing.T, f *fakeDiscord, agent *fakeAgent, ids map[string][]string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for c, list := range ids {
		for k, id := range list {
			want := fmt.Sprintf("%s-m%02d", c, k)
			for {
				if r, ok := f.placeholder(id); ok {
					channel := strings.TrimSuffix(strings.TrimPrefix(r.path, "channels/"), "/messages")
					if got := f.shows(channel, r.id); strings.Contains(got, "echo: ") {
						if !strings.Contains(got, want) || strings.Count(got, "echo:") != 1 {
							t.Fatalf("%s answered %q", want, got)
						}
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: no answer", want)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	time.Sleep(200 * time.Millisecond) // a second answer would show by now
	replies := map[string]int{}
	for _, r := range f.find("POST", "/messages") {
		if ref, _ := r.body["message_reference"].(map[string]any); ref != nil {
			replies[ref["message_id"].(string)]++
		}
	}
	sessions := agent.sessionsCopy()
	for c, list := range ids {
		for k, id := range list {
			if replies[id] != 1 {
				t.Errorf("%s-m%02d: %d replies", c, k, replies[id])
			}
		}
		var heard []string
		for _, prompts := range sessions {
			if len(prompts) > 0 && strings.HasPrefix(body(prompts[0]), c+"-") {
				if heard != nil {
					t.Errorf("%s: two sessions", c)
				}
				for _, pr := range prompts {
					heard = append(heard, body(pr))
				}
			}
		}
		var want []string
		for k := range list {
			want = append(want, fmt.Sprintf("%s-m%02d", c, k))
		}
		if !slices.Equal(heard, want) {
			t.Errorf("%s: the agent heard %v, want %v", c, heard, want)
		}
	}
}

// TestProgramPool: with NATS_URL the program sends every run to the pool:
// 12 conversations × 8 messages (live sessions and, beyond
// MAX_LIVE_SESSIONS, runs of their own) are answered once each, in order
// per conversation, by both workers; the gateway's own backend never
// runs; the CLI gets the operator's AGENT_ENV additions and nothing of
// the gateway's environment; a permission request and a question cross
// the wire and are answered with the buttons by their requester; /new and the stored
// session live in the pool's key-value store.
func TestProgramPool(t *testing.T) {
	url := startNATS(t)
	agent := newFakeAgent()
	agent.turnDelay = 20 * time.Millisecond
	w1 := startPoolWorker(t, url, agent, "w1")
	w2 := startPoolWorker(t, url, agent, "w2")
	local := newFakeAgent()
	f := newFakeDiscord(t)
	var channels []string
	for c := range 12 {
		channels = append(channels, fmt.Sprintf("pc%02d", c))
		f.channel(channels[c], 0)
	}
	f.channel("c-ask", 0)
	f.channel("c-q", 0)
	p := startProgram(t, f, local, "", "NATS_URL="+url, "THREADS=false", "QUEUE_DEPTH=20",
		"MAX_LIVE_SESSIONS=4", "MAX_CONCURRENT_RUNS=8", "AGENT_ENV=SET_HERE=1")

	ids := sendAll(p, channels, 8)
	checkAnsweredInOrder(t, f, agent, ids)
	if n1, n2 := w1.ran.Load(), w2.ran.Load(); n1 == 0 || n2 == 0 {
		t.Errorf("the workers ran %d and %d runs and sessions; want both", n1, n2)
	} else {
		t.Logf("runs and live sessions: worker 1 %d, worker 2 %d", n1, n2)
	}
	local.mu.Lock()
	if len(local.runs)+len(local.starts) > 0 {
		t.Errorf("the gateway's own backend ran %d runs and %d sessions", len(local.runs), len(local.starts))
	}
	local.mu.Unlock()
	agent.mu.Lock()
	reqs := append(slices.Clone(agent.runs), agent.starts...)
	agent.mu.Unlock()
	if len(reqs) == 0 {
		t.Fatal("no request reached the workers")
	}
	for _, r := range reqs {
		if r.ReplaceEnv || !slices.Equal(r.Env, []string{"SET_HERE=1"}) {
			t.Fatalf("a request reached the worker with ReplaceEnv %v and Env %q; want the additions only", r.ReplaceEnv, r.Env)
		}
	}

	// A permission request, answered across the wire.
	m := p.send("c-ask", "alice", "ask to clean up")
	var card fakeReq
	waitFor(t, "the permission request", func() bool {
		for _, r := range f.find("POST", "channels/c-ask/messages") {
			if r.body["components"] != nil {
				card = r
				return true
			}
		}
		return false
	})
	if content := card.body["content"].(string); !strings.HasPrefix(content, "<@alice>") || !strings.Contains(content, "rm -rf build") {
		t.Errorf("the permission request: %q", content)
	}
	row := card.body["components"].([]any)[0].(map[string]any)["components"].([]any)
	i := interaction(3, "c-ask", "alice", map[string]any{"custom_id": row[0].(map[string]any)["custom_id"], "component_type": 2})
	i["message"] = map[string]any{"id": card.id, "channel_id": "c-ask"}
	f.dispatch("INTERACTION_CREATE", i)
	if cb := p.callback(i); cb["type"].(float64) != 7 {
		t.Errorf("the press: %v", cb)
	}
	if got := p.answer(m); !strings.Contains(got, "decision: allow_once") {
		t.Errorf("answer %q, want the agent to have been allowed", got)
	}

	// The agent's question, answered across the wire with the card's
	// buttons.
	qm := p.send("c-q", "alice", "question please")
	qcard := p.card("c-q", 0)
	if buttons := components(qcard); len(buttons) < 2 || buttons[1]["label"] != "Blue" {
		t.Errorf("the question's card: %v", qcard.body["components"])
	} else if cb := p.click("c-q", qcard, buttons[1]["custom_id"].(string), nil, "alice"); cb["type"].(float64) != 7 {
		t.Errorf("the press: %v", cb)
	}
	if got := p.answer(qm); !strings.Contains(got, `answers: [["Blue"]]`) {
		t.Errorf("answer %q, want the agent to have had alice's answer", got)
	}

	// The conversations are in the pool's store.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(context.Background(), "agentcli_gw_conversations")
	if err != nil {
		t.Fatal(err)
	}
	store := &KVStore{kv: kv, backend: "gwfake"}
	e, err := store.Get(context.Background(), "c-ask")
	if err != nil || e.SessionID == "" || e.Owner != "alice" || e.Last != m {
		t.Errorf("the stored conversation: %+v, %v", e, err)
	}
	p.answer(p.send("c-ask", "alice", "/new"))
	if e, err := store.Get(context.Background(), "c-ask"); err != nil || e.SessionID != "" {
		t.Errorf("after /new: %+v, %v", e, err)
	}
}

// TestProgramPoolReplicas: two replicas of the program on one bot
// connection's events (as two connections of one shard get them: every
// message reaches both), one pool, two workers. 20 conversations × 6
// messages: each message is claimed by exactly one replica (seen in the
// pool's store) and answered once; each conversation's messages are
// answered in the order they were sent; both replicas answer.
func TestProgramPoolReplicas(t *testing.T) {
	url := startNATS(t)
	agent := newFakeAgent()
	agent.turnDelay = 5 * time.Millisecond
	startPoolWorker(t, url, agent, "w1")
	startPoolWorker(t, url, agent, "w2")
	f := newFakeDiscord(t)
	f.broadcastAll()
	var channels []string
	for c := range 20 {
		channels = append(channels, fmt.Sprintf("rc%02d", c))
		f.channel(channels[c], 0)
	}
	local := newFakeAgent()

	// Every claim, as the replicas write them.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "agentcli_gw_conversations"})
	if err != nil {
		t.Fatal(err)
	}
	watch, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	claims := map[string]map[string]bool{} // message → replicas
	go func() {
		for u := range watch.Updates() {
			if u == nil || u.Operation() != jetstream.KeyValuePut {
				continue
			}
			var e kvEntry
			if json.Unmarshal(u.Value(), &e) == nil && e.Last != "" {
				mu.Lock()
				if claims[e.Last] == nil {
					claims[e.Last] = map[string]bool{}
				}
				claims[e.Last][e.Replica] = true
				mu.Unlock()
			}
		}
	}()

	env := []string{"NATS_URL=" + url, "THREADS=false", "QUEUE_DEPTH=20", "MAX_LIVE_SESSIONS=2", "MAX_CONCURRENT_RUNS=4"}
	p1 := startProgram(t, f, local, "", env...)
	startProgram(t, f, local, "", env...)
	ids := sendAll(p1, channels, 6)
	checkAnsweredInOrder(t, f, agent, ids)

	// A permission request: both replicas get the press; the one that
	// asked answers it, the other stays silent.
	f.channel("rc-ask", 0)
	m := p1.send("rc-ask", "alice", "ask to clean up")
	var card fakeReq
	waitFor(t, "the permission request", func() bool {
		for _, r := range f.find("POST", "channels/rc-ask/messages") {
			if r.body["components"] != nil {
				card = r
				return true
			}
		}
		return false
	})
	row := card.body["components"].([]any)[0].(map[string]any)["components"].([]any)
	i := interaction(3, "rc-ask", "alice", map[string]any{"custom_id": row[0].(map[string]any)["custom_id"], "component_type": 2})
	i["message"] = map[string]any{"id": card.id, "channel_id": "rc-ask"}
	f.dispatch("INTERACTION_CREATE", i)
	if got := p1.answer(m); !strings.Contains(got, "decision: allow_once") {
		t.Errorf("answer %q, want the agent to have been allowed", got)
	}
	time.Sleep(200 * time.Millisecond)
	if cbs := f.callbacks(i); len(cbs) != 1 || cbs[0].body["type"].(float64) != 7 {
		var bodies []any
		for _, cb := range cbs {
			bodies = append(bodies, cb.body)
		}
		t.Errorf("the press was answered %d times: %v; want once, by the card's replica", len(cbs), bodies)
	}

	mu.Lock()
	defer mu.Unlock()
	replicas := map[string]int{}
	ids["rc-ask"] = []string{m}
	for c, list := range ids {
		for k, id := range list {
			if len(claims[id]) != 1 {
				t.Errorf("%s-m%02d claimed by %d replicas: %v", c, k, len(claims[id]), claims[id])
			}
			for r := range claims[id] {
				replicas[r]++
			}
		}
	}
	if len(replicas) != 2 {
		t.Errorf("messages answered per replica: %v; want both replicas", replicas)
	} else {
		t.Logf("messages answered per replica: %v", replicas)
	}
	local.mu.Lock()
	defer local.mu.Unlock()
	if len(local.runs)+len(local.starts) > 0 {
		t.Errorf("the gateway's own backend ran")
	}
}

// TestProgramPoolStartup: with NATS_URL the program needs no CLI on its
// host (here claude's binary does not exist) and answers through the
// pool, in console mode too; a pool it cannot reach, or -offline (which
// runs a CLI here), stops it with exit status 1.
func TestProgramPoolStartup(t *testing.T) {
	url := startNATS(t)
	startNamedWorker(t, url, &workerAgent{fakeAgent: newFakeAgent(), name: "claude"}, "w1")
	base := []string{"AGENT_BACKEND=claude", "BACKEND_CLI_PATH=/nonexistent/claude", "STATE_DIR=" + t.TempDir()}
	var stdout, stderr syncBuffer
	code := run(context.Background(), []string{"-console"}, append(base, "NATS_URL="+url), strings.NewReader("hello pool\n"), &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "echo: hello pool") {
		t.Errorf("console on the pool: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, tc := range []struct {
		args []string
		env  string
		log  string
	}{
		{[]string{"-console"}, "NATS_URL=nats://127.0.0.1:1", "the worker pool"},
		{[]string{"-console", "-offline"}, "NATS_URL=" + url, "-offline"},
	} {
		var stdout, stderr syncBuffer
		code := run(context.Background(), tc.args, append(base, tc.env), strings.NewReader(""), &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), tc.log) {
			t.Errorf("%v %s: exit %d, want 1 and a log naming %q:\n%s", tc.args, tc.env, code, tc.log, stderr.String())
		}
	}
}

// TestProgramShard: DISCORD_SHARD_ID and DISCORD_SHARD_COUNT go into the
// identify; without them the bot identifies unsharded.
func TestProgramShard(t *testing.T) {
	f := newFakeDiscord(t)
	startProgram(t, f, newFakeAgent(), "").stop()
	startProgram(t, f, newFakeAgent(), "", "DISCORD_SHARD_ID=1", "DISCORD_SHARD_COUNT=3")
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.shards) != 2 || f.shards[0] != nil || !slices.Equal(f.shards[1], []int{1, 3}) {
		t.Errorf("identified with shards %v, want none then [1 3]", f.shards)
	}
}
