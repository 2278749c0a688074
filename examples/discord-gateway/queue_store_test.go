package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestMemQueueProperty: against a model, under random puts, takes and
// dones: a channel's messages come out in the order they went in, never
// two of one channel at once, the bounds answer ErrBusy, and after Close
// the messages left still come out, then ErrClosed.
func TestMemQueueProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		per := rapid.IntRange(1, 4).Draw(t, "per")
		total := rapid.IntRange(1, 10).Draw(t, "total")
		q := NewMemQueue(per, total)
		ctx := context.Background()
		waiting := map[string][]int{} // model: per channel, waiting message numbers
		inProgress := map[string]int{}
		var taken []Message
		n := 0
		closed := false
		count := func() int {
			c := 0
			for _, w := range waiting {
				c += len(w)
			}
			return c
		}
		ready := func() bool {
			for ch, w := range waiting {
				if _, busy := inProgress[ch]; len(w) > 0 && !busy {
					return true
				}
			}
			return false
		}
		steps := rapid.IntRange(1, 80).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0: // put
				ch := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "channel")
				n++
				err := q.Put(ctx, Message{Channel: ch, ID: fmt.Sprint(n)})
				switch {
				case closed:
					if !errors.Is(err, ErrClosed) {
						t.Fatalf("put after close: %v", err)
					}
				case len(waiting[ch]) >= per || count() >= total:
					if !errors.Is(err, ErrBusy) {
						t.Fatalf("put over the bounds: %v", err)
					}
				default:
					if err != nil {
						t.Fatalf("put: %v", err)
					}
					waiting[ch] = append(waiting[ch], n)
				}
			case 1: // take
				if !ready() {
					cctx, cancel := context.WithTimeout(ctx, time.Millisecond)
					m, err := q.Take(cctx)
					cancel()
					if closed && count() == 0 && len(inProgress) == 0 {
						if !errors.Is(err, ErrClosed) {
							t.Fatalf("take on a closed, empty queue: %v, %v", m, err)
						}
					} else if err == nil {
						t.Fatalf("took %v while nothing was ready", m)
					}
					continue
				}
				m, err := q.Take(ctx)
				if err != nil {
					t.Fatalf("take: %v", err)
				}
				w := waiting[m.Channel]
				if len(w) == 0 || fmt.Sprint(w[0]) != m.ID {
					t.Fatalf("took %s of %s; the channel's oldest is %v", m.ID, m.Channel, w)
				}
				if _, busy := inProgress[m.Channel]; busy {
					t.Fatalf("took a second message of %s", m.Channel)
				}
				waiting[m.Channel] = w[1:]
				inProgress[m.Channel] = 1
				taken = append(taken, m)
			case 2: // done
				if len(taken) == 0 {
					continue
				}
				i := rapid.IntRange(0, len(taken)-1).Draw(t, "done")
				m := taken[i]
				taken = append(taken[:i], taken[i+1:]...)
				q.Done(m)
				delete(inProgress, m.Channel)
			case 3:
				if rapid.IntRange(0, 5).Draw(t, "close?") == 0 {
					q.Close()
					closed = true
				}
			}
		}
	})
}

func TestMemQueueTakeWakesOnDone(t *testing.T) {
	q := NewMemQueue(5, 10)
	ctx := context.Background()
	q.Put(ctx, Message{Channel: "a", ID: "1"})
	q.Put(ctx, Message{Channel: "a", ID: "2"})
	m, _ := q.Take(ctx)
	got := make(chan Message)
	go func() { m, _ := q.Take(ctx); got <- m }()
	select {
	case m := <-got:
		t.Fatalf("took %s while 1 was in progress", m.ID)
	case <-time.After(20 * time.Millisecond):
	}
	q.Done(m)
	if m := <-got; m.ID != "2" {
		t.Fatalf("took %s", m.ID)
	}
	q.Close()
	q.Done(Message{Channel: "a", ID: "2"})
	if _, err := q.Take(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("take after close: %v", err)
	}
}

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	s, err := NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range []string{"123456", "odd/../name with spaces", ""} {
		if id, err := getSID(s, ch); id != "" || err != nil {
			t.Fatalf("empty store: %q, %v", id, err)
		}
		if err := setSID(s, ch, "sess-"+ch); err != nil {
			t.Fatal(err)
		}
		if err := setSID(s, ch, "sess2-"+ch); err != nil {
			t.Fatal(err)
		}
		if id, err := getSID(s, ch); id != "sess2-"+ch || err != nil {
			t.Fatalf("get %q: %q, %v", ch, id, err)
		}
	}
	// A new store on the same directory (a restart) reads them back.
	s2, _ := NewFileStore(dir)
	if id, _ := getSID(s2, "odd/../name with spaces"); id != "sess2-odd/../name with spaces" {
		t.Fatalf("after restart: %q", id)
	}
	if err := deleteEntry(s2, "123456"); err != nil {
		t.Fatal(err)
	}
	if id, _ := getSID(s2, "123456"); id != "" {
		t.Fatalf("after delete: %q", id)
	}
	if err := deleteEntry(s2, "123456"); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".tmp") || strings.Contains(f.Name(), "/") {
			t.Errorf("left %s", f.Name())
		}
	}
}

func TestFileStoreCorrupt(t *testing.T) {
	dir := t.TempDir()
	s, _ := NewFileStore(dir)
	setSID(s, "42", "good")
	setSID(s, "43", "good")
	for ch, junk := range map[string]string{"42": `{"channel":"42","sess`, "43": `{"channel":"99","session_id":"x"}`} {
		if err := os.WriteFile(s.path(ch), []byte(junk), 0o600); err != nil {
			t.Fatal(err)
		}
		id, err := getSID(s, ch)
		if id != "" || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("corrupt %s: %q, %v", ch, id, err)
		}
		if _, err := os.Stat(s.path(ch) + ".corrupt"); err != nil {
			t.Fatalf("not moved aside: %v", err)
		}
		// The channel goes on without a session, and the next Set heals it.
		if id, err := getSID(s, ch); id != "" || err != nil {
			t.Fatalf("after quarantine: %q, %v", id, err)
		}
		setSID(s, ch, "new")
		if id, _ := getSID(s, ch); id != "new" {
			t.Fatalf("after heal: %q", id)
		}
	}
	// Temporary files of a crash are removed at open.
	os.WriteFile(filepath.Join(dir, ".c-42.json-123.tmp"), []byte("half"), 0o600)
	NewFileStore(dir)
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(m) != 0 {
		t.Fatalf("left %v", m)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(m) != 0 {
		t.Fatalf("left %v", m)
	}
}

// TestFileStoreConcurrent: concurrent writers of many channels leave one
// valid file each, holding the last value written.
func TestFileStoreConcurrent(t *testing.T) {
	dir := t.TempDir()
	s, _ := NewFileStore(dir)
	var wg sync.WaitGroup
	for c := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if err := setSID(s, fmt.Sprint(c), fmt.Sprint("s", i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for c := range 20 {
		b, err := os.ReadFile(s.path(fmt.Sprint(c)))
		if err != nil {
			t.Fatal(err)
		}
		var e fileEntry
		if err := json.Unmarshal(b, &e); err != nil || e.SessionID != "s9" {
			t.Fatalf("channel %d: %s, %v", c, b, err)
		}
	}
}

func TestFileJournal(t *testing.T) {
	dir := t.TempDir()
	j, err := NewFileJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := Message{ID: "111", Channel: "c", Text: "a", Seq: 3}
	b := Message{ID: "odd/id", Channel: "c", Text: "b", Seq: 1}
	c := Message{ID: "222", Channel: "c", Text: "c", Seq: 2}
	for _, m := range []Message{a, b, c} {
		if err := j.Queued(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Running(c, "thread", "ph"); err != nil {
		t.Fatal(err)
	}
	if err := j.Done(a); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "m-999.json"), []byte("{half"), 0o600)
	j2, _ := NewFileJournal(dir) // a restart
	got, err := j2.Pending()
	if err == nil || !strings.Contains(err.Error(), "m-999.json") {
		t.Errorf("a corrupt entry is not reported: %v", err)
	}
	if len(got) != 2 || got[0].Message.ID != "odd/id" || got[1].Message.ID != "222" || got[0].Running ||
		!got[1].Running || got[1].Channel != "thread" || got[1].Placeholder != "ph" {
		t.Fatalf("pending %+v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "m-999.json")); err == nil {
		t.Error("the corrupt entry is still there")
	}
}
