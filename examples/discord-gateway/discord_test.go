package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// fakeDiscord is enough of Discord on 127.0.0.1 for discordgo: the REST
// routes the gateway uses and the gateway websocket (hello, identify,
// ready, heartbeats, dispatches).
type fakeDiscord struct {
	t   *testing.T
	srv *http.Server
	url string

	events chan []byte // dispatches to send

	mu       sync.Mutex
	reqs     []fakeReq
	nextID   int
	limited  map[string]float64 // "METHOD path-prefix" → retry_after for the next matching request (429 once)
	identify json.RawMessage
}

type fakeReq struct {
	at     time.Time
	method string
	path   string
	body   map[string]any
	status int
	id     string // of the message created
}

func newFakeDiscord(t *testing.T) *fakeDiscord {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeDiscord{t: t, url: "http://" + ln.Addr().String(), events: make(chan []byte, 16), limited: map[string]float64{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws/", f.gateway)
	mux.HandleFunc("/", f.rest)
	f.srv = &http.Server{Handler: mux}
	go f.srv.Serve(ln)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// point sets discordgo's endpoint variables to f until the test ends.
func (f *fakeDiscord) point(t *testing.T) {
	vars := []*string{&discordgo.EndpointDiscord, &discordgo.EndpointAPI, &discordgo.EndpointGuilds,
		&discordgo.EndpointChannels, &discordgo.EndpointUsers, &discordgo.EndpointGateway,
		&discordgo.EndpointGatewayBot, &discordgo.EndpointWebhooks, &discordgo.EndpointApplications}
	saved := make([]string, len(vars))
	for i, v := range vars {
		saved[i] = *v
	}
	t.Cleanup(func() {
		for i, v := range vars {
			*v = saved[i]
		}
	})
	discordgo.EndpointDiscord = f.url + "/"
	discordgo.EndpointAPI = discordgo.EndpointDiscord + "api/v" + discordgo.APIVersion + "/"
	discordgo.EndpointGuilds = discordgo.EndpointAPI + "guilds/"
	discordgo.EndpointChannels = discordgo.EndpointAPI + "channels/"
	discordgo.EndpointUsers = discordgo.EndpointAPI + "users/"
	discordgo.EndpointGateway = discordgo.EndpointAPI + "gateway"
	discordgo.EndpointGatewayBot = discordgo.EndpointGateway + "/bot"
	discordgo.EndpointWebhooks = discordgo.EndpointAPI + "webhooks/"
	discordgo.EndpointApplications = discordgo.EndpointAPI + "applications"
}

// rateLimitNext makes the next request whose method and path start with
// route answer 429 once.
func (f *fakeDiscord) rateLimitNext(route string, retryAfter float64) {
	f.mu.Lock()
	f.limited[route] = retryAfter
	f.mu.Unlock()
}

func (f *fakeDiscord) rest(w http.ResponseWriter, r *http.Request) {
	api := "/api/v" + discordgo.APIVersion + "/"
	path := strings.TrimPrefix(r.URL.Path, api)
	var body map[string]any
	if b, _ := io.ReadAll(r.Body); len(b) > 0 {
		if err := json.Unmarshal(b, &body); err != nil {
			f.t.Errorf("%s %s: body is not JSON: %s", r.Method, path, b)
		}
	}
	if r.Header.Get("Authorization") != "Bot test-token" {
		f.t.Errorf("%s %s: authorization %q", r.Method, path, r.Header.Get("Authorization"))
	}
	route := r.Method + " " + path
	f.mu.Lock()
	req := fakeReq{at: time.Now(), method: r.Method, path: path, body: body, status: 200}
	for prefix, ra := range f.limited {
		if !strings.HasPrefix(route, prefix) {
			continue
		}
		delete(f.limited, prefix)
		req.status = 429
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		fmt.Fprintf(w, `{"message":"You are being rate limited.","retry_after":%g,"global":false}`, ra)
		return
	}
	parts := strings.Split(path, "/")
	if r.Method == "POST" && len(parts) == 3 && parts[2] == "messages" {
		f.nextID++
		req.id = fmt.Sprint(1000 + f.nextID)
	}
	id := req.id
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "GET" && path == "gateway":
		fmt.Fprintf(w, `{"url":"ws://%s/ws"}`, strings.TrimPrefix(f.url, "http://"))
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		json.NewEncoder(w).Encode(map[string]any{"id": id, "channel_id": parts[1], "content": body["content"]})
	case r.Method == "PATCH" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		json.NewEncoder(w).Encode(map[string]any{"id": parts[3], "channel_id": parts[1], "content": body["content"]})
	case r.Method == "POST" && len(parts) == 3 && parts[2] == "typing":
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		w.WriteHeader(http.StatusNoContent)
	default:
		f.t.Errorf("unexpected request %s %s", r.Method, path)
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Unknown","code":0}`)
	}
}

// gateway speaks the websocket gateway: Hello, then Ready for Identify,
// heartbeat acks, and the queued dispatches.
func (f *fakeDiscord) gateway(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		f.t.Errorf("websocket upgrade: %v", err)
		return
	}
	defer c.Close()
	var wmu sync.Mutex
	send := func(v any) error {
		wmu.Lock()
		defer wmu.Unlock()
		return c.WriteJSON(v)
	}
	if err := send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": 45000}}); err != nil {
		return
	}
	var hello struct {
		Op int             `json:"op"`
		D  json.RawMessage `json:"d"`
	}
	if err := c.ReadJSON(&hello); err != nil || hello.Op != 2 {
		f.t.Errorf("expected identify, got op %d: %v", hello.Op, err)
		return
	}
	f.mu.Lock()
	f.identify = hello.D
	f.mu.Unlock()
	seq := 1
	send(map[string]any{"op": 0, "t": "READY", "s": seq, "d": map[string]any{
		"v": 9, "session_id": "fake-session", "user": map[string]any{"id": "bot1", "username": "gateway", "bot": true},
		"guilds": []any{}, "private_channels": []any{}}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var m struct {
				Op int `json:"op"`
			}
			if err := c.ReadJSON(&m); err != nil {
				return
			}
			if m.Op == 1 {
				send(map[string]any{"op": 11})
			}
		}
	}()
	for {
		select {
		case <-done:
			return
		case ev := <-f.events:
			seq++
			var d struct {
				T string          `json:"t"`
				D json.RawMessage `json:"d"`
			}
			json.Unmarshal(ev, &d)
			if err := send(map[string]any{"op": 0, "t": d.T, "s": seq, "d": d.D}); err != nil {
				return
			}
		}
	}
}

// dispatch queues a gateway event.
func (f *fakeDiscord) dispatch(t string, d any) {
	b, _ := json.Marshal(map[string]any{"t": t, "d": d})
	f.events <- b
}

func (f *fakeDiscord) requests() []fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeReq(nil), f.reqs...)
}

// find returns the requests matching method and a path suffix.
func (f *fakeDiscord) find(method, suffix string) []fakeReq {
	var out []fakeReq
	for _, r := range f.requests() {
		if r.method == method && strings.HasSuffix(r.path, suffix) {
			out = append(out, r)
		}
	}
	return out
}

func message(id, channel, user, content string, roles ...string) map[string]any {
	return map[string]any{"id": id, "channel_id": channel, "guild_id": "g1", "content": content,
		"timestamp": "2026-01-01T00:00:00Z", "type": 0,
		"author": map[string]any{"id": user, "username": user},
		"member": map[string]any{"roles": roles}}
}

// TestDiscordClient runs the real discordgo client against the fake:
// a message in, a placeholder, edits and the final reply out, a 429 with
// retry_after honoured, a button press answering a permission request (and
// one refused), a message from a stranger ignored.
func TestDiscordClient(t *testing.T) {
	f := newFakeDiscord(t)
	f.point(t)

	agent := newFakeAgent()
	agent.textDelay = 1500 * time.Millisecond // room for a preview edit, after the 429, before the answer
	s, err := newDiscordSession("test-token")
	if err != nil {
		t.Fatal(err)
	}
	store, _ := NewFileStore(t.TempDir())
	logger := quiet()
	cfg := Config{AllowedUsers: []string{"alice"}, AllowedRoles: []string{"ops"}}
	rt := NewRuntime(Options{
		Backend: noSessions{agent}, Store: store, Queue: NewMemQueue(5, 50),
		Chat:    &discordChat{s: s, log: logger},
		Request: agentcli.Request{Permission: agentcli.PermissionAsk, PermissionTimeout: time.Minute},
		Preview: true, MaxLen: discordMaxLen, EditInterval: 50 * time.Millisecond, Allowed: cfg.allowed(),
		Logger: logger,
	})
	attachDiscord(s, rt, logger)
	rt.Start()
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rt.Shutdown(ctx)
	}()
	f.mu.Lock()
	ident := string(f.identify)
	f.mu.Unlock()
	if !strings.Contains(ident, `"intents":`+fmt.Sprint(int(discordgo.IntentsGuildMessages|discordgo.IntentsDirectMessages|discordgo.IntentMessageContent))) {
		t.Errorf("identify without the message intents: %s", ident)
	}

	// 1. A message in; the first edit of the placeholder is rate-limited.
	f.rateLimitNext("PATCH channels/c1/messages/", 0.3)
	f.dispatch("MESSAGE_CREATE", message("m1", "c1", "alice", "<@bot1> hello there"))
	waitFor(t, "the placeholder", func() bool { return len(f.find("POST", "channels/c1/messages")) == 1 })
	placeholder := "channels/c1/messages/" + f.find("POST", "channels/c1/messages")[0].id
	waitFor(t, "the final reply", func() bool {
		for _, r := range f.find("PATCH", placeholder) {
			if r.status == 200 && r.body["content"] == "echo: hello there" {
				return true
			}
		}
		return false
	})
	posts := f.find("POST", "channels/c1/messages")
	if len(posts) != 1 {
		t.Fatalf("%d posts, want the placeholder only", len(posts))
	}
	ref, _ := posts[0].body["message_reference"].(map[string]any)
	if ref["message_id"] != "m1" {
		t.Errorf("placeholder does not reply to m1: %v", posts[0].body)
	}
	if am, _ := posts[0].body["allowed_mentions"].(map[string]any); am == nil || len(am["parse"].([]any)) != 0 {
		t.Errorf("placeholder may ping: %v", posts[0].body["allowed_mentions"])
	}
	edits := f.find("PATCH", placeholder)
	if len(edits) < 3 || edits[0].status != 429 {
		t.Fatalf("edits %+v; want a 429, then a preview edit and the final one", edits)
	}
	if gap := edits[1].at.Sub(edits[0].at); gap < 300*time.Millisecond {
		t.Errorf("retried %v after a 429 with retry_after 0.3s", gap)
	}
	if c, _ := edits[1].body["content"].(string); !strings.HasSuffix(c, "▍") {
		t.Errorf("first successful edit is not a preview: %q", c)
	}
	if len(f.find("POST", "channels/c1/typing")) == 0 {
		t.Error("no typing indicator")
	}

	// 2. A stranger is ignored.
	f.dispatch("MESSAGE_CREATE", message("m2", "c1", "mallory", "rm -rf /"))

	// 3. A permission request: buttons; a stranger's press is refused, a
	// press by someone with an allowed role decides.
	f.dispatch("MESSAGE_CREATE", message("m3", "c1", "bob", "ask to clean", "ops"))
	var ask fakeReq
	waitFor(t, "the permission request", func() bool {
		for _, r := range f.find("POST", "channels/c1/messages") {
			if r.body["components"] != nil && len(r.body["components"].([]any)) > 0 {
				ask = r
				return true
			}
		}
		return false
	})
	row := ask.body["components"].([]any)[0].(map[string]any)["components"].([]any)
	var ids []string
	for _, b := range row {
		ids = append(ids, b.(map[string]any)["custom_id"].(string))
	}
	if len(ids) != 3 || !strings.HasSuffix(ids[0], ":allow") || !strings.HasSuffix(ids[2], ":deny") {
		t.Fatalf("buttons %v", ids)
	}
	press := func(iid, user string, roles ...string) map[string]any {
		return map[string]any{"id": iid, "application_id": "app1", "type": 3, "token": "tok-" + iid,
			"channel_id": "c1", "guild_id": "g1", "version": 1,
			"member":  map[string]any{"user": map[string]any{"id": user, "username": user}, "roles": roles},
			"message": map[string]any{"id": "1003", "channel_id": "c1"},
			"data":    map[string]any{"custom_id": ids[0], "component_type": 2}}
	}
	f.dispatch("INTERACTION_CREATE", press("i1", "mallory"))
	waitFor(t, "the refusal", func() bool { return len(f.find("POST", "interactions/i1/tok-i1/callback")) == 1 })
	refusal := f.find("POST", "interactions/i1/tok-i1/callback")[0].body
	if refusal["type"].(float64) != 4 || refusal["data"].(map[string]any)["flags"].(float64) != 64 {
		t.Errorf("refusal is not an ephemeral message: %v", refusal)
	}
	f.dispatch("INTERACTION_CREATE", press("i2", "bob", "ops"))
	waitFor(t, "the decision", func() bool { return len(f.find("POST", "interactions/i2/tok-i2/callback")) == 1 })
	decided := f.find("POST", "interactions/i2/tok-i2/callback")[0].body
	data := decided["data"].(map[string]any)
	if decided["type"].(float64) != 7 || !strings.Contains(data["content"].(string), "Allowed once") ||
		len(data["components"].([]any)) != 0 {
		t.Errorf("decision does not update the request and remove its buttons: %v", decided)
	}
	waitFor(t, "the answer after the permission", func() bool {
		for _, r := range f.requests() {
			if r.method == "PATCH" && r.body["content"] == "decision: allow_once" {
				return true
			}
		}
		return false
	})
	for _, r := range f.requests() {
		if ref, _ := r.body["message_reference"].(map[string]any); ref != nil && ref["message_id"] == "m2" {
			t.Errorf("answered the stranger: %v", r.body)
		}
	}
}

// TestDiscordgo429Handling pins down what discordgo does with a 429 by
// default, and what the gateway does instead: discordgo sleeps for
// retry_after whatever the request's context says, then retries; the
// gateway's wait ends with the context.
func TestDiscordgo429Handling(t *testing.T) {
	f := newFakeDiscord(t)
	f.point(t)
	s, err := newDiscordSession("test-token")
	if err != nil {
		t.Fatal(err)
	}

	f.rateLimitNext("POST channels/c9/messages", 1.5)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	start := time.Now()
	_, err = s.ChannelMessageSend("c9", "hi", discordgo.WithContext(ctx))
	cancel()
	if took := time.Since(start); took < 1400*time.Millisecond || err == nil {
		t.Fatalf("discordgo default: returned after %v with %v; expected it to sleep out retry_after (1.5s) despite the context", took, err)
	}
	if n := len(f.find("POST", "channels/c9/messages")); n != 1 {
		t.Fatalf("discordgo default: %d requests (the retry runs on the expired context)", n)
	}

	d := &discordChat{s: s, log: quiet()}
	f.rateLimitNext("POST channels/c8/messages", 1.5)
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = d.Post(ctx, "c8", "", "hi")
	if took := time.Since(start); took > time.Second || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("gateway: returned after %v with %v; want the context's end", took, err)
	}
	// Without a deadline it waits retry_after, then delivers, once.
	f.rateLimitNext("POST channels/c7/messages", 0.2)
	if _, err := d.Post(context.Background(), "c7", "", "hi"); err != nil {
		t.Fatal(err)
	}
	reqs := f.find("POST", "channels/c7/messages")
	if len(reqs) != 2 || reqs[0].status != 429 || reqs[1].status != 200 || reqs[1].at.Sub(reqs[0].at) < 200*time.Millisecond {
		t.Fatalf("gateway: requests %+v", reqs)
	}
}
