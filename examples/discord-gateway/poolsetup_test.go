package main

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestBucketWaitsForJetStream: the gateway's buckets are created once
// JetStream answers, as long as that is within the set-up's time (a
// server whose JetStream is still starting, or a reply lost), and a
// bucket JetStream refuses fails at once.
func TestBucketWaitsForJetStream(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(time.Second)
		if err := srv.EnableJetStream(&server.JetStreamConfig{StoreDir: t.TempDir()}); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	kv, err := bucket(ctx, js, jetstream.KeyValueConfig{Bucket: "gw_test"})
	if err != nil {
		t.Fatalf("a bucket while JetStream came up: %v", err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Errorf("the bucket's first Put: %v", err)
	}

	start := time.Now()
	_, err = bucket(ctx, js, jetstream.KeyValueConfig{Bucket: "gw_test", History: 200})
	if err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("a bucket JetStream refuses (history over 64): %v after %v; want its error at once", err, time.Since(start))
	}
}
