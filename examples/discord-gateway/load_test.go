package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// TestLoadWithFaults: 50 channels × 20 messages on a backend that fails
// transiently at random, a global limit of 8 runs, and a restart of the
// gateway in the middle with a corrupt session file and a session the CLI
// no longer knows. Every message is answered exactly once, with its own
// answer; each channel's replies come in the order of its messages; each
// channel's conversation goes on across the restart; the store is intact;
// no goroutine is left.
func TestLoadWithFaults(t *testing.T) {
	const (
		channels = 50
		perChan  = 20
		limit    = 8
		corrupt  = "ch07" // its session file is garbage after the restart
		ghost    = "ch13" // its stored session is unknown to the CLI after the restart
	)
	before := goroutines()
	backend := newEchoBackend(uint64(time.Now().UnixNano()), 0.3, 2) // < 3 attempts: every message succeeds in the end
	backend.delay = 2 * time.Millisecond
	dir := t.TempDir()
	chat := newRecChat()
	start := func() (*Runtime, *FileStore) {
		store, err := NewFileStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		rt := NewRuntime(Options{
			Backend:        agentcli.WithLimit(backend, limit),
			Store:          store,
			Queue:          NewMemQueue(perChan, channels*perChan),
			Chat:           chat,
			Retry:          agentcli.RetryOptions{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond},
			Preview:        true,
			EditInterval:   time.Millisecond,
			TypingInterval: 3 * time.Millisecond,
			MaxLen:         discordMaxLen,
			Logger:         quiet(),
		})
		rt.Start()
		return rt, store
	}
	name := func(c int) string { return fmt.Sprintf("ch%02d", c) }
	prompt := func(c, k int) string { return fmt.Sprintf("%s-m%02d", name(c), k) }
	msgID := func(c, k int) string { return "id-" + prompt(c, k) }
	// send hands messages from..to-1 of every channel to rt, each channel
	// from its own goroutine, in order.
	send := func(rt *Runtime, from, to int) {
		var wg sync.WaitGroup
		for c := range channels {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := from; k < to; k++ {
					rt.Handle(Message{ID: msgID(c, k), Channel: name(c), Author: "u", Text: prompt(c, k)})
				}
			}()
		}
		wg.Wait()
	}
	shutdown := func(rt *Runtime) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		rt.Shutdown(ctx)
	}

	rt, store := start()
	send(rt, 0, perChan/2)
	// Restart while most of the first half still waits: the shutdown
	// drains it.
	shutdown(rt)
	for c := range channels {
		for k := range perChan / 2 {
			if n := len(chat.replies(msgID(c, k))); n != 1 {
				t.Fatalf("%s: %d replies after the first shutdown", prompt(c, k), n)
			}
		}
	}
	if err := os.WriteFile(store.path(corrupt), []byte(`{"channel":"ch07","session_id":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := setSID(store, ghost, "session-the-cli-lost"); err != nil {
		t.Fatal(err)
	}

	rt, store = start()
	send(rt, perChan/2, perChan)
	shutdown(rt)

	// Exactly once, the right answer, in order.
	chat.mu.Lock()
	for _, m := range chat.order {
		if m.replyTo == "" || !strings.HasPrefix(m.replyTo, "id-") {
			t.Errorf("a message that answers nothing: %q", m.texts)
		}
	}
	chat.mu.Unlock()
	for c := range channels {
		prev := 0
		for k := range perChan {
			rs := chat.replies(msgID(c, k))
			if len(rs) != 1 {
				t.Fatalf("%s: %d replies", prompt(c, k), len(rs))
			}
			r := rs[0]
			if got, want := r.final(), "echo: "+prompt(c, k); got != want {
				t.Fatalf("%s: answered %q, want %q", prompt(c, k), got, want)
			}
			if r.posted < prev {
				t.Fatalf("%s: replied before the previous message of its channel was answered", prompt(c, k))
			}
			prev = r.last
		}
	}

	// Conversations: one session per channel across the restart, except
	// the corrupt and the lost one, which start over once.
	backend.mu.Lock()
	faults, notFound := backend.faults, backend.notFound
	backend.mu.Unlock()
	t.Logf("%d transient faults injected and retried; at most %d runs at once", faults, backend.max.Load())
	if faults == 0 {
		t.Fatal("no transient fault was injected")
	}
	if notFound != 1 {
		t.Fatalf("%d session-not-found errors, want 1 (the lost session, retried without it)", notFound)
	}
	if m := backend.max.Load(); m > limit {
		t.Fatalf("%d runs at once, limit %d", m, limit)
	}
	for c := range channels {
		sessions := backend.sessionsOf(name(c) + "-")
		var ids []string
		for id := range sessions {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b string) int { return strings.Compare(sessions[a][0], sessions[b][0]) })
		var all []string
		for k := range perChan {
			all = append(all, prompt(c, k))
		}
		want := [][]string{all}
		if name(c) == corrupt || name(c) == ghost {
			want = [][]string{all[:perChan/2], all[perChan/2:]}
		}
		var got [][]string
		for _, id := range ids {
			got = append(got, sessions[id])
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: sessions heard %v, want %v", name(c), got, want)
		}
		// The store holds the channel's last session.
		sid, err := getSID(store, name(c))
		if err != nil || sid != ids[len(ids)-1] {
			t.Fatalf("%s: store holds %q (%v), want %q", name(c), sid, err, ids[len(ids)-1])
		}
	}

	// The store directory: one valid file per channel, the corrupt one set
	// aside, no temporary file.
	files, _ := os.ReadDir(dir)
	var valid, aside int
	for _, f := range files {
		switch {
		case strings.HasSuffix(f.Name(), ".json"):
			b, _ := os.ReadFile(filepath.Join(dir, f.Name()))
			var e fileEntry
			if err := json.Unmarshal(b, &e); err != nil || e.SessionID == "" {
				t.Errorf("%s: %s", f.Name(), b)
			}
			valid++
		case strings.HasSuffix(f.Name(), ".corrupt"):
			aside++
		default:
			t.Errorf("unexpected file %s", f.Name())
		}
	}
	if valid != channels || aside != 1 {
		t.Fatalf("%d session files and %d set aside, want %d and 1", valid, aside, channels)
	}
	noLeaks(t, before)
}
