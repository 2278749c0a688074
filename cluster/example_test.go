package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/cluster"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// A worker and a caller on one embedded NATS server. In production the
// worker is the agentcli-worker command on another machine, running a
// real CLI (agentcli.Open("claude", nil)); here it runs a scripted
// backend.
func Example() {
	dir, _ := os.MkdirTemp("", "nats")
	defer os.RemoveAll(dir)
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		panic(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		panic("nats did not start")
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The worker's side.
	wnc, _ := nats.Connect(srv.ClientURL(), nats.MaxReconnects(-1))
	defer wnc.Close()
	local := agentclitest.NewBackend(agentclitest.Reply("Hello from a worker!", "session-1"))
	w, err := cluster.NewWorker(wnc, local, nil)
	if err != nil {
		panic(err)
	}
	stopped := make(chan error)
	go func() { stopped <- w.Run(ctx) }()

	// The caller's side: an agentcli.Backend like any other.
	nc, _ := nats.Connect(srv.ClientURL(), nats.MaxReconnects(-1))
	defer nc.Close()
	b, err := cluster.NewBackend(nc, &cluster.Options{Backend: local.Name()})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	res, err := b.Run(ctx, &agentcli.Request{Prompt: "Hi"})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text, res.SessionID)

	cancel()
	fmt.Println("worker stopped:", <-stopped)
	// Output:
	// Hello from a worker! session-1
	// worker stopped: <nil>
}

// A worker whose sessions move: every run's session is saved to the
// pool's object store and imported by whichever worker resumes it. The
// archive is read whole into memory, so its size is bounded; and a
// backend without portable sessions cannot take one.
func ExamplePortableSessions() {
	// On a worker machine:
	//
	//	b, _ := agentcli.Open("claude", nil)
	//	w, _ := cluster.NewWorker(nc, b, &cluster.WorkerOptions{Sessions: cluster.PortableSessions{}})
	ctx := context.Background()
	p := cluster.PortableSessions{MaxArchiveBytes: 16}
	_, err := p.Import(ctx, agentclitest.NewBackend(), "/work/repo", strings.NewReader("an archive over sixteen bytes"))
	fmt.Println(errors.Is(err, cluster.ErrArchiveTooLarge))
	_, err = p.Import(ctx, agentclitest.NewBackend(), "/work/repo", strings.NewReader("short"))
	var ue *agentcli.UnsupportedError
	fmt.Println(errors.As(err, &ue))
	// Output:
	// true
	// true
}
