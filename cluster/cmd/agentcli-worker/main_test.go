package main

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/cluster"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

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

// TestWorkerCommand: the command joins the pool with the backend named
// on its command line (here claude with a binary that does not exist):
// callers see its CLI check fail, a run sent to it fails with the
// backend's own *BinaryError, and a cancelled context drains it to exit
// status 0.
func TestWorkerCommand(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	defer srv.Shutdown()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	env := map[string]string{"NATS_URL": srv.ClientURL(), "WORKER_MAX_RUNS": "1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-backend", "claude", "-cli-path", "/nonexistent/claude", "-id", "cmd-test"}, lookup, &stderr)
	}()

	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	b, err := cluster.NewBackend(nc, &cluster.Options{Backend: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var checkErr error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		checkErr = b.Check(ctx)
		if !errors.Is(checkErr, cluster.ErrNoWorkers) {
			break
		}
	}
	var be *agentcli.BinaryError
	if !errors.As(checkErr, &be) || be.Path != "/nonexistent/claude" || !errors.Is(checkErr, agentcli.ErrNotFound) {
		t.Fatalf("Check = %v, want the worker's missing binary", checkErr)
	}
	rctx, rcancel := context.WithTimeout(ctx, 20*time.Second)
	defer rcancel()
	_, err = b.Run(rctx, &agentcli.Request{Prompt: "hello"})
	if !errors.As(err, &be) || !errors.Is(err, agentcli.ErrNotFound) {
		t.Fatalf("Run = %v (%T), want a *BinaryError", err, err)
	}

	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit status %d; stderr:\n%s", c, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not drain")
	}
}
