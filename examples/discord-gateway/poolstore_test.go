package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func testBucket(t *testing.T, url, name string, ttl time.Duration) (*nats.Conn, jetstream.KeyValue) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateOrUpdateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: name, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return nc, kv
}

// TestKVStore: concurrent updates of one conversation from several
// stores (replicas) are all applied; a zero entry is deleted; an entry
// that does not parse, or names another conversation, is ErrCorrupt and
// forgotten.
func TestKVStore(t *testing.T) {
	url := startNATS(t)
	ctx := context.Background()
	var stores []*KVStore
	for range 3 {
		_, kv := testBucket(t, url, "conv", 0)
		stores = append(stores, &KVStore{kv: kv, backend: "claude"})
	}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := stores[i%3].Update(ctx, "chan/1", func(e *Entry) { e.Answers++; e.SessionID = "s" }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if e, err := stores[0].Get(ctx, "chan/1"); err != nil || e.Answers != 60 || e.SessionID != "s" {
		t.Fatalf("after 60 concurrent increments: %+v, %v", e, err)
	}
	if _, err := stores[1].Update(ctx, "chan/1", func(e *Entry) { *e = Entry{} }); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[0].kv.Get(ctx, stores[0].key("chan/1")); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("a zero entry was kept: %v", err)
	}
	for _, bad := range []string{"not json", `{"conv":"other","session_id":"x"}`} {
		if _, err := stores[0].kv.Put(ctx, stores[0].key("c2"), []byte(bad)); err != nil {
			t.Fatal(err)
		}
		if _, err := stores[0].Get(ctx, "c2"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", bad, err)
		}
		if e, err := stores[0].Get(ctx, "c2"); err != nil || e != (Entry{}) {
			t.Errorf("%s: after ErrCorrupt: %+v, %v", bad, e, err)
		}
	}
	if stores[0].key("1234") != "claude.c-1234" || stores[0].key("a b") == stores[0].key("a_b") {
		t.Errorf("keys %q %q %q", stores[0].key("1234"), stores[0].key("a b"), stores[0].key("a_b"))
	}
}

// TestKVLocks: a conversation's lock is held by one replica at a time
// (another waits until it is released); a replica cut off from NATS loses
// it (its context ends) and, once its key has aged out, another replica
// takes the conversation.
func TestKVLocks(t *testing.T) {
	url := startNATS(t)
	const ttl = time.Second
	_, kvA := testBucket(t, url, "locks", ttl)
	ncB, kvB := testBucket(t, url, "locks", ttl)
	a := &kvLocks{kv: kvA, holder: "A", ttl: ttl, poll: 10 * time.Millisecond, log: quiet()}
	b := &kvLocks{kv: kvB, holder: "B", ttl: ttl, poll: 10 * time.Millisecond, log: quiet()}
	ctx := context.Background()

	_, unlockA, err := a.Lock(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		_, unlock, err := b.Lock(ctx, "c1")
		if err != nil {
			t.Error(err)
		}
		got <- unlock
	}()
	select {
	case <-got:
		t.Fatal("B took the lock A holds")
	case <-time.After(3 * ttl): // A renews it meanwhile
	}
	// Another conversation is free.
	_, unlockOther, err := b.Lock(ctx, "c2")
	if err != nil {
		t.Fatal(err)
	}
	unlockOther()
	unlockA()
	var unlockB func()
	select {
	case unlockB = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("B did not get the lock A released")
	}

	// B is cut off while it holds c1: it loses it; A gets it once the key
	// aged out.
	ncB.Close()
	heldA := make(chan error, 1)
	start := time.Now()
	go func() {
		_, unlock, err := a.Lock(ctx, "c1")
		if err == nil {
			unlock()
		}
		heldA <- err
	}()
	select {
	case err := <-heldA:
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < ttl/2 {
			t.Errorf("A took the lock after %v, before B's could age out", waited)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("A never got the lock of a replica cut off")
	}
	unlockB() // its delete fails; no harm
}

// TestKVLockLost: a replica that cannot renew its lock sees the context
// of its turn end with errLockLost.
func TestKVLockLost(t *testing.T) {
	url := startNATS(t)
	const ttl = 600 * time.Millisecond
	nc, kv := testBucket(t, url, "locks", ttl)
	l := &kvLocks{kv: kv, holder: "A", ttl: ttl, log: quiet()}
	held, unlock, err := l.Lock(context.Background(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	nc.Close()
	select {
	case <-held.Done():
		if !errors.Is(context.Cause(held), errLockLost) {
			t.Errorf("cause %v", context.Cause(held))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the turn went on without its lock")
	}
}
