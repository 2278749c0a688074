package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// fakeDiscord is enough of Discord on 127.0.0.1 for the gateway, reached
// through DISCORD_API_URL and DISCORD_GATEWAY_URL: the REST routes it uses
// (messages, edits, typing, threads, channels, interaction callbacks,
// command registration, attachment downloads), with Discord's refusals
// (an empty or over-long message is a 400) and 429s per route or global;
// and the websocket gateway (hello, identify and READY with a guild,
// resume with replay, heartbeats and their acks, dispatches, dropped
// connections).
type fakeDiscord struct {
	t    testing.TB
	srv  *http.Server
	base string // http://127.0.0.1:port
	api  string // base + /api/v9
	ws   string // ws://127.0.0.1:port/ws

	heartbeat time.Duration // the interval announced in Hello
	noAcks    bool          // do not acknowledge heartbeats

	events chan []byte // dispatches to send: {"t":..., "d":...}
	// broadcast sends every dispatch to every connection (see
	// broadcastAll) instead of to one of them.
	broadcast bool
	subs      map[chan []byte]bool

	mu         sync.Mutex
	reqs       []fakeReq
	nextID     int64
	limited    map[string]fakeLimit // "METHOD path-prefix" → the next matching request's 429
	channels   map[string]int       // channel id → type (0 text, 1 DM, 11 thread)
	noThreads  map[string]bool      // text channels where the bot may not start threads
	files      map[string][]byte    // /files/<name>
	downloads  int                  // of files
	commands   map[string][]any     // registration path → commands
	identifies int
	shards     [][]int // the shard of each identify ([id, count], or nil)
	resumes    int
	heartbeats int
	ready      chan struct{} // closed at the first READY
	conn       *websocket.Conn
	seq        int64
	backlog    []sentEvent // dispatches sent, for RESUME
	refused    []string    // requests Discord would refuse (400)
}

type fakeLimit struct {
	retryAfter float64
	global     bool
}

type sentEvent struct {
	seq int64
	t   string
	d   json.RawMessage
}

type fakeReq struct {
	n      int // order of arrival
	at     time.Time
	method string
	path   string // without the /api/v9/ prefix
	body   map[string]any
	status int
	id     string // of the message created
}

func newFakeDiscord(t testing.TB) *fakeDiscord {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeDiscord{t: t, base: "http://" + ln.Addr().String(), heartbeat: 45 * time.Second,
		events: make(chan []byte, 8192), limited: map[string]fakeLimit{}, channels: map[string]int{},
		files: map[string][]byte{}, noThreads: map[string]bool{}, commands: map[string][]any{}, nextID: 900_000_000, ready: make(chan struct{})}
	f.api = f.base + "/api/v9"
	f.ws = "ws://" + ln.Addr().String() + "/ws"
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", f.gateway)
	mux.HandleFunc("/ws/", f.gateway)
	mux.HandleFunc("/files/", f.serveFile)
	mux.HandleFunc("/", f.rest)
	f.srv = &http.Server{Handler: mux}
	go f.srv.Serve(ln)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// channel declares a channel of the fake guild g1 (type 0 text, 11 thread).
func (f *fakeDiscord) channel(id string, kind int) {
	f.mu.Lock()
	f.channels[id] = kind
	f.mu.Unlock()
}

// file serves data at /files/name and returns its URL.
func (f *fakeDiscord) file(name string, data []byte) string {
	f.mu.Lock()
	f.files[name] = data
	f.mu.Unlock()
	return f.base + "/files/" + name
}

// rateLimitNext makes the next request whose "METHOD path" starts with
// route answer 429 once.
func (f *fakeDiscord) rateLimitNext(route string, retryAfter float64, global bool) {
	f.mu.Lock()
	f.limited[route] = fakeLimit{retryAfter, global}
	f.mu.Unlock()
}

func (f *fakeDiscord) rest(w http.ResponseWriter, r *http.Request) {
	const prefix = "/api/v9/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		f.t.Errorf("request outside the API: %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, prefix)
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	if len(raw) > 0 && json.Unmarshal(raw, &body) != nil {
		var list []any
		if json.Unmarshal(raw, &list) == nil {
			body = map[string]any{"list": list}
		} else {
			f.t.Errorf("%s %s: body is not JSON: %s", r.Method, path, raw)
		}
	}
	if !strings.HasPrefix(path, "interactions/") && r.Header.Get("Authorization") != "Bot test-token" {
		f.t.Errorf("%s %s: authorization %q", r.Method, path, r.Header.Get("Authorization"))
	}
	route := r.Method + " " + path
	parts := strings.Split(path, "/")
	w.Header().Set("Content-Type", "application/json")

	f.mu.Lock()
	req := fakeReq{n: len(f.reqs), at: time.Now(), method: r.Method, path: path, body: body, status: 200}
	for p, l := range f.limited {
		if !strings.HasPrefix(route, p) {
			continue
		}
		delete(f.limited, p)
		req.status = 429
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
		if l.global {
			w.Header().Set("X-RateLimit-Global", "true")
			w.Header().Set("X-RateLimit-Scope", "global")
		} else {
			w.Header().Set("X-RateLimit-Scope", "user")
		}
		w.Header().Set("Retry-After", strconv.FormatFloat(l.retryAfter, 'f', -1, 64))
		w.WriteHeader(429)
		fmt.Fprintf(w, `{"message":"You are being rate limited.","retry_after":%g,"global":%v}`, l.retryAfter, l.global)
		return
	}
	// Discord's refusals of what no client should send.
	refuse := ""
	content, hasContent := body["content"].(string)
	switch {
	case r.Method == "POST" && len(parts) == 3 && parts[2] == "messages" && strings.TrimSpace(content) == "" && body["components"] == nil:
		refuse = "Cannot send an empty message"
	case hasContent && utf8.RuneCountInString(content) > 2000:
		refuse = "content: Must be 2000 or fewer in length."
	case r.Method == "PATCH" && hasContent && strings.TrimSpace(content) == "":
		refuse = "Cannot edit a message to be empty"
	}
	if d, ok := body["data"].(map[string]any); ok {
		if c, ok := d["content"].(string); ok && utf8.RuneCountInString(c) > 2000 {
			refuse = "data.content: Must be 2000 or fewer in length."
		}
		if body["type"] == float64(9) && refuse == "" {
			refuse = badModal(d)
		}
	}
	if rows, ok := body["components"].([]any); ok && refuse == "" {
		refuse = badRows(rows)
	}
	if refuse != "" {
		req.status = 400
		f.refused = append(f.refused, route+": "+refuse)
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"message":%q,"code":50035}`, refuse)
		return
	}
	var out any
	status := 200
	switch {
	case r.Method == "GET" && path == "gateway":
		out = map[string]any{"url": f.ws}
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		f.nextID++
		req.id = strconv.FormatInt(f.nextID, 10)
		out = map[string]any{"id": req.id, "channel_id": parts[1], "content": content, "type": 0,
			"timestamp": "2026-01-01T00:00:00Z", "author": map[string]any{"id": "bot1", "username": "gateway", "bot": true}}
	case r.Method == "PATCH" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		out = map[string]any{"id": parts[3], "channel_id": parts[1], "content": content, "type": 0,
			"timestamp": "2026-01-01T00:00:00Z"}
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "typing":
		status = http.StatusNoContent
	case r.Method == "POST" && len(parts) == 5 && parts[0] == "channels" && parts[2] == "messages" && parts[4] == "threads":
		if f.channels[parts[1]] == 11 {
			status, out = 400, map[string]any{"message": "Cannot start a thread in a thread", "code": 50024}
			break
		}
		if f.noThreads[parts[1]] {
			status, out = 403, map[string]any{"message": "Missing Permissions", "code": 50013}
			break
		}
		f.channels[parts[3]] = 11
		name, _ := body["name"].(string)
		out = map[string]any{"id": parts[3], "type": 11, "parent_id": parts[1], "guild_id": "g1", "name": name}
		b, _ := json.Marshal(map[string]any{"t": "THREAD_CREATE", "d": out})
		select {
		case f.events <- b:
		default:
		}
	case r.Method == "GET" && len(parts) == 2 && parts[0] == "channels":
		kind, ok := f.channels[parts[1]]
		if !ok {
			status, out = 404, map[string]any{"message": "Unknown Channel", "code": 10003}
			break
		}
		out = map[string]any{"id": parts[1], "type": kind, "guild_id": "g1"}
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		status = http.StatusNoContent
	case r.Method == "PUT" && parts[0] == "applications" && parts[len(parts)-1] == "commands":
		list, _ := body["list"].([]any)
		f.commands[path] = list
		out = list
	default:
		f.t.Errorf("unexpected request %s %s", r.Method, path)
		status, out = 404, map[string]any{"message": "Unknown", "code": 0}
	}
	req.status = status
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(out)
}

// serveFile serves the attachments (Discord's CDN).
func (f *fakeDiscord) serveFile(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	data, ok := f.files[strings.TrimPrefix(r.URL.Path, "/files/")]
	f.downloads++
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(data)
}

// gateway speaks the websocket gateway.
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
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		return c.WriteJSON(v)
	}
	if err := send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": f.heartbeat.Milliseconds()}}); err != nil {
		return
	}
	var first struct {
		Op int `json:"op"`
		D  struct {
			Token     string `json:"token"`
			Intents   int    `json:"intents"`
			SessionID string `json:"session_id"`
			Seq       int64  `json:"seq"`
			Shard     []int  `json:"shard"`
		} `json:"d"`
	}
	if err := c.ReadJSON(&first); err != nil {
		return
	}
	if first.D.Token != "Bot test-token" {
		f.t.Errorf("gateway token %q", first.D.Token)
	}
	f.mu.Lock()
	f.conn = c
	var replay []sentEvent
	switch first.Op {
	case 2:
		f.identifies++
		f.shards = append(f.shards, first.D.Shard)
		if first.D.Intents&(1<<0|1<<9|1<<12|1<<15) != 1<<0|1<<9|1<<12|1<<15 {
			f.t.Errorf("identify without the guild and message intents: %d", first.D.Intents)
		}
	case 6:
		f.resumes++
		for _, e := range f.backlog {
			if e.seq > first.D.Seq {
				replay = append(replay, e)
			}
		}
	default:
		f.t.Errorf("expected identify or resume, got op %d", first.Op)
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	dispatch := func(t string, d any) error {
		raw, _ := json.Marshal(d)
		f.mu.Lock()
		f.seq++
		seq := f.seq
		f.backlog = append(f.backlog, sentEvent{seq, t, raw})
		f.mu.Unlock()
		return send(map[string]any{"op": 0, "t": t, "s": seq, "d": json.RawMessage(raw)})
	}
	if first.Op == 2 {
		dispatch("READY", map[string]any{"v": 9, "session_id": "fake-session",
			"user":        map[string]any{"id": "bot1", "username": "gateway", "bot": true},
			"application": map[string]any{"id": "app1"},
			"guilds":      []any{map[string]any{"id": "g1", "unavailable": true}}, "private_channels": []any{}})
		f.mu.Lock()
		var chans, threads []any
		for id, kind := range f.channels {
			ch := map[string]any{"id": id, "type": kind, "guild_id": "g1", "name": id}
			if kind == 11 {
				threads = append(threads, ch)
			} else {
				chans = append(chans, ch)
			}
		}
		f.mu.Unlock()
		dispatch("GUILD_CREATE", map[string]any{"id": "g1", "name": "guild", "channels": chans, "threads": threads,
			"members": []any{}, "roles": []any{}})
		f.mu.Lock()
		select {
		case <-f.ready:
		default:
			close(f.ready)
		}
		f.mu.Unlock()
	} else {
		for _, e := range replay {
			if send(map[string]any{"op": 0, "t": e.t, "s": e.seq, "d": e.d}) != nil {
				return
			}
		}
		dispatch("RESUMED", map[string]any{})
	}
	events := f.events
	f.mu.Lock()
	if f.broadcast {
		mine := make(chan []byte, 8192)
		f.subs[mine] = true
		events = mine
		defer func() {
			f.mu.Lock()
			delete(f.subs, mine)
			f.mu.Unlock()
		}()
	}
	f.mu.Unlock()
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
				f.mu.Lock()
				f.heartbeats++
				noAcks := f.noAcks
				f.mu.Unlock()
				if !noAcks {
					send(map[string]any{"op": 11})
				}
			}
		}
	}()
	for {
		select {
		case <-done:
			return
		case ev := <-events:
			var e struct {
				T string          `json:"t"`
				D json.RawMessage `json:"d"`
			}
			json.Unmarshal(ev, &e)
			if err := dispatch(e.T, e.D); err != nil {
				// Not delivered: Discord would replay it on RESUME.
				return
			}
		}
	}
}

// drop closes the websocket connection abruptly (as a network failure
// would); discordgo reconnects and resumes.
func (f *fakeDiscord) drop() {
	f.mu.Lock()
	c := f.conn
	f.conn = nil
	f.mu.Unlock()
	if c != nil {
		c.UnderlyingConn().Close()
	}
}

// dispatch queues a gateway event.
func (f *fakeDiscord) dispatch(t string, d any) {
	b, _ := json.Marshal(map[string]any{"t": t, "d": d})
	f.mu.Lock()
	if f.broadcast {
		for ch := range f.subs {
			ch <- b
		}
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	f.events <- b
}

// broadcastAll makes every later connection receive every dispatch, as
// several connections of a bot on one shard do; call it before the first
// connection.
func (f *fakeDiscord) broadcastAll() {
	f.mu.Lock()
	f.broadcast = true
	f.subs = map[chan []byte]bool{}
	f.mu.Unlock()
}

func (f *fakeDiscord) requests() []fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeReq(nil), f.reqs...)
}

// find returns the requests of method whose path has the suffix.
func (f *fakeDiscord) find(method, suffix string) []fakeReq {
	var out []fakeReq
	for _, r := range f.requests() {
		if r.method == method && strings.HasSuffix(r.path, suffix) {
			out = append(out, r)
		}
	}
	return out
}

// downloadCount returns how many files were downloaded.
func (f *fakeDiscord) downloadCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.downloads
}

// refusals returns what Discord refused.
func (f *fakeDiscord) refusals() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.refused...)
}

// counts returns identifies, resumes and heartbeats.
func (f *fakeDiscord) counts() (int, int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.identifies, f.resumes, f.heartbeats
}

var snowflake struct {
	sync.Mutex
	n int64
}

// nextSnowflake returns a fresh message id, larger than any before.
func nextSnowflake() string {
	snowflake.Lock()
	defer snowflake.Unlock()
	snowflake.n++
	return strconv.FormatInt(1_300_000_000_000_000_000+snowflake.n, 10)
}

// message is a MESSAGE_CREATE payload of user in channel of guild g1 (a
// DM when channel starts with "dm").
func message(id, channel, user, content string, roles ...string) map[string]any {
	m := map[string]any{"id": id, "channel_id": channel, "content": content,
		"timestamp": "2026-01-01T00:00:00Z", "type": 0,
		"author": map[string]any{"id": user, "username": user}}
	if !strings.HasPrefix(channel, "dm") {
		m["guild_id"] = "g1"
		m["member"] = map[string]any{"roles": roles}
	}
	return m
}

// interaction is an INTERACTION_CREATE payload by user in channel.
func interaction(kind int, channel, user string, data map[string]any, roles ...string) map[string]any {
	id := nextSnowflake()
	return map[string]any{"id": id, "application_id": "app1", "type": kind, "token": "tok-" + id,
		"channel_id": channel, "guild_id": "g1", "version": 1,
		"member": map[string]any{"user": map[string]any{"id": user, "username": user}, "roles": roles},
		"data":   data}
}

// badRows returns Discord's refusal of a message's components, or "": at
// most 5 rows, each of at most 5 buttons or one select menu.
func badRows(rows []any) string {
	if len(rows) > 5 {
		return "components: Must be 5 or fewer in length."
	}
	for _, r := range rows {
		row, _ := r.(map[string]any)
		cs, _ := row["components"].([]any)
		if row["type"] != float64(1) || len(cs) == 0 || len(cs) > 5 {
			return "components: a row of 1 to 5 components"
		}
		for _, c := range cs {
			if c.(map[string]any)["type"] == float64(3) && len(cs) > 1 {
				return "components: a select menu takes a row of its own"
			}
		}
	}
	return ""
}

// badModal returns Discord's refusal of a modal, or "": a custom id, a
// title of 1 to 45 characters, 1 to 5 rows of one text input each, with
// a label of 1 to 45 characters, a placeholder of at most 100 and a
// max_length of at most 4000.
func badModal(d map[string]any) string {
	title, _ := d["title"].(string)
	id, _ := d["custom_id"].(string)
	rows, _ := d["components"].([]any)
	if id == "" || len(id) > 100 || title == "" || utf8.RuneCountInString(title) > 45 || len(rows) == 0 || len(rows) > 5 {
		return "data: a modal's custom_id, title (1-45) and rows (1-5)"
	}
	for _, r := range rows {
		cs, _ := r.(map[string]any)["components"].([]any)
		if len(cs) != 1 {
			return "data.components: one text input a row"
		}
		c := cs[0].(map[string]any)
		label, _ := c["label"].(string)
		ph, _ := c["placeholder"].(string)
		ml, _ := c["max_length"].(float64)
		if c["type"] != float64(4) || label == "" || utf8.RuneCountInString(label) > 45 ||
			utf8.RuneCountInString(ph) > 100 || ml > 4000 {
			return "data.components: a text input within Discord's limits"
		}
	}
	return ""
}
