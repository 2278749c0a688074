package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestNewBackendWaitsForJetStream: NewBackend started while the server's
// JetStream is not up yet (a cluster electing its leader answers "not
// enabled" or "temporarily unavailable" for a while) keeps trying within
// SetupTimeout, and a server whose JetStream never comes up fails it
// when SetupTimeout ends, saying why.
func TestNewBackendWaitsForJetStream(t *testing.T) {
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

	opts := testOptions()
	opts.SetupTimeout = time.Second
	start := time.Now()
	_, err = NewBackend(nc, opts)
	if d := time.Since(start); err == nil || d < opts.SetupTimeout/2 {
		t.Fatalf("NewBackend on a server without JetStream: %v after %v; want an error after about %v", err, d, opts.SetupTimeout)
	}
	if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, jetstream.ErrJetStreamNotEnabled) {
		t.Errorf("NewBackend on a server without JetStream: %v; want the reason (no JetStream responds)", err)
	}

	go func() {
		time.Sleep(time.Second)
		if err := srv.EnableJetStream(&server.JetStreamConfig{StoreDir: t.TempDir()}); err != nil {
			t.Error(err)
		}
	}()
	opts.SetupTimeout = 20 * time.Second
	b, err := NewBackend(nc, opts)
	if err != nil {
		t.Fatalf("NewBackend while JetStream came up: %v", err)
	}
	defer b.Close()
	if _, err := b.js.Stream(t.Context(), b.res.workName); err != nil {
		t.Errorf("the work stream after set-up: %v", err)
	}
}
