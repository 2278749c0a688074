package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/cluster"
	"github.com/agentcli/agentcli/driver"
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

// BenchmarkIdleWorkerRSS builds the command, starts it against an
// embedded NATS server, waits until it has joined the pool, and reports
// its resident memory while idle (Linux only: /proc):
//
//	cd cluster && go test -run '^$' -bench IdleWorkerRSS ./cmd/agentcli-worker
func BenchmarkIdleWorkerRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	bin := filepath.Join(b.TempDir(), "agentcli-worker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: b.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		b.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		b.Fatal("nats server did not start")
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	pool, err := cluster.NewBackend(nc, &cluster.Options{Backend: "claude"})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	for b.Loop() {
		cmd := exec.Command(bin, "-nats", srv.ClientURL(), "-backend", "claude", "-cli-path", "/nonexistent/claude")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); errors.Is(pool.Check(context.Background()), cluster.ErrNoWorkers); {
			if time.Now().After(deadline) {
				b.Fatal("the worker did not join")
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(time.Second) // idle
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
				b.ReportMetric(float64(kb), "KiB-RSS")
			}
		}
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
}

// portableBackend is a scripted backend registered as "scripted", with
// agentcli's portable sessions: its archive names the instance that
// exported it, and each instance records the archives it imported.
type portableBackend struct {
	*agentclitest.Backend
	n int // instance number
}

var portables struct {
	mu       sync.Mutex
	n        int
	imported []string // "instance<-archive"
}

func init() {
	driver.Register("scripted", func(*agentcli.Options) agentcli.Backend {
		sb := agentclitest.NewBackend()
		call := agentclitest.Reply("ok", "sess-1")
		sb.Default = &call
		sb.Caps = agentcli.Capabilities{PortableSessions: true, Resume: true}
		portables.mu.Lock()
		defer portables.mu.Unlock()
		portables.n++
		return &portableBackend{Backend: sb, n: portables.n}
	})
}

func (p *portableBackend) ExportSession(ctx context.Context, dir, id string) ([]byte, error) {
	return fmt.Appendf(nil, "archive of %s by %d", id, p.n), nil
}

func (p *portableBackend) ImportSession(ctx context.Context, dir string, archive []byte) (string, error) {
	portables.mu.Lock()
	defer portables.mu.Unlock()
	portables.imported = append(portables.imported, fmt.Sprintf("%d<-%s", p.n, archive))
	return "sess-1", nil
}

// TestWorkerCommandMovesSessions: by default the command saves every
// session with cluster.PortableSessions, so that a second worker, started
// after the first one stopped, imports the first one's archive to resume
// the session; -portable-sessions=false (or PORTABLE_SESSIONS=false)
// saves nothing.
func TestWorkerCommandMovesSessions(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want string // the imports of the second worker
	}{
		{name: "default", want: "<-archive of sess-1 by "},
		{name: "flag off", args: []string{"-portable-sessions=false"}},
		{name: "env off", env: "false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
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
			env := map[string]string{"NATS_URL": srv.ClientURL(), "WORKER_MAX_RUNS": "1"}
			if tc.env != "" {
				env["PORTABLE_SESSIONS"] = tc.env
			}
			lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			start := func(id string) (stop func()) {
				ctx, cancel := context.WithCancel(context.Background())
				var stderr syncBuffer
				code := make(chan int, 1)
				go func() {
					code <- run(ctx, append([]string{"-backend", "scripted", "-id", id}, tc.args...), lookup, &stderr)
				}()
				return func() {
					cancel()
					if c := <-code; c != 0 {
						t.Errorf("worker %s: exit status %d; stderr:\n%s", id, c, stderr.String())
					}
				}
			}
			nc, err := nats.Connect(srv.ClientURL())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			pool, err := cluster.NewBackend(nc, &cluster.Options{Backend: "scripted"})
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			portables.mu.Lock()
			portables.imported = nil
			portables.mu.Unlock()

			stopA := start("worker-a")
			res, err := pool.Run(ctx, &agentcli.Request{Prompt: "one"})
			if err != nil {
				t.Fatal(err)
			}
			stopA()
			stopB := start("worker-b")
			defer stopB()
			if _, err := pool.Run(ctx, &agentcli.Request{Prompt: "two", SessionID: res.SessionID}); err != nil {
				t.Fatal(err)
			}
			portables.mu.Lock()
			imported := strings.Join(portables.imported, " ")
			portables.mu.Unlock()
			if tc.want == "" && imported != "" {
				t.Errorf("imported %q with portable sessions off", imported)
			}
			if tc.want != "" && (!strings.Contains(imported, tc.want) || strings.Count(imported, "<-") != 1) {
				t.Errorf("imported %q, want one archive %q...", imported, tc.want)
			}
		})
	}
}
