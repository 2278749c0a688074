package cluster

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsServer is an embedded NATS server with JetStream, its store in a
// test directory, listening on 127.0.0.1.
type natsServer struct {
	t    testing.TB
	dir  string
	port int
	mu   sync.Mutex
	srv  *server.Server
}

func startNATS(t testing.TB) *natsServer {
	t.Helper()
	n := &natsServer{t: t, dir: t.TempDir(), port: -1}
	n.start()
	n.port = n.srv.Addr().(*net.TCPAddr).Port
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start() {
	n.t.Helper()
	opts := &server.Options{
		Host: "127.0.0.1", Port: n.port, JetStream: true, StoreDir: n.dir,
		NoLog: true, NoSigs: true, MaxPayload: 1 << 20,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		n.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		n.t.Fatal("nats server did not start")
	}
	n.mu.Lock()
	n.srv = s
	n.mu.Unlock()
}

func (n *natsServer) stop() {
	n.mu.Lock()
	s := n.srv
	n.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// restart stops the server and starts it again on the same port and
// store, as an operator's restart does.
func (n *natsServer) restart() {
	n.stop()
	n.start()
}

func (n *natsServer) url() string { return "nats://127.0.0.1:" + itoa(n.port) }

func itoa(i int) string {
	b := []byte{}
	if i == 0 {
		return "0"
	}
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// connect returns a client connection that reconnects forever.
func (n *natsServer) connect(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(n.url(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectJitter(0, 0), nats.NoCallbacksAfterClientClose(),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// looseDeadAfter is the silence after which caller and worker give each
// other up in tests whose work is heavy on a loaded machine under -race
// (a real CLI starting beside the worker, megabytes of attachments):
// testOptions' 600 ms was missed there.
const looseDeadAfter = 5 * time.Second

// looseOptions and looseWorkerOptions are the fast timings with a
// looseDeadAfter silence allowance, for tests whose runs must not be
// given up under load (a call that waits, megabytes of output).
func looseOptions() *Options {
	o := testOptions()
	o.WorkerDeadAfter = looseDeadAfter
	return o
}

func looseWorkerOptions() *WorkerOptions {
	o := testWorkerOptions()
	o.CallerDeadAfter = looseDeadAfter
	return o
}

// Fast timings for tests.
func testOptions() *Options {
	return &Options{Backend: "scripted", Heartbeat: 50 * time.Millisecond, WorkerDeadAfter: 600 * time.Millisecond,
		QueuePoll: 100 * time.Millisecond, Storage: 0}
}

func testWorkerOptions() *WorkerOptions {
	return &WorkerOptions{Heartbeat: 50 * time.Millisecond, CallerDeadAfter: 600 * time.Millisecond,
		AckWait: time.Second, DrainTimeout: 2 * time.Second, MaxRuns: 4}
}

// testWorker is a worker running in the test process on its own
// connection; kill closes that connection, which is what a crash looks
// like from the outside.
type testWorker struct {
	w     *Worker
	nc    *nats.Conn
	local agentcli.Backend
	stop  context.CancelFunc
	done  chan error
}

func startWorker(t testing.TB, n *natsServer, local agentcli.Backend, opts *WorkerOptions) *testWorker {
	t.Helper()
	if opts == nil {
		opts = testWorkerOptions()
	}
	nc := n.connect(t)
	w, err := NewWorker(nc, local, opts)
	if err != nil {
		t.Fatal(err) // options only: no network
	}
	ctx, cancel := context.WithCancel(context.Background())
	tw := &testWorker{w: w, nc: nc, local: local, stop: cancel, done: make(chan error, 1)}
	go func() { tw.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-tw.done:
		case <-time.After(30 * time.Second):
			buf := make([]byte, 1<<22)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("worker did not stop:\n%s", buf)
		}
	})
	waitRegistered(t, n, w.ID())
	return tw
}

// kill closes the worker's connection: it stops its runs without a word
// to their callers.
func (tw *testWorker) kill() error {
	tw.nc.Close()
	select {
	case err := <-tw.done:
		tw.done <- err
		return err
	case <-time.After(30 * time.Second):
		return errors.New("killed worker did not stop")
	}
}

// waitRegistered waits until worker id's registration is in the bucket
// (its consumer exists then).
func waitRegistered(t testing.TB, n *natsServer, id string) {
	t.Helper()
	nc := n.connect(t)
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		kv, err := js.KeyValue(ctx, "agentcli_workers")
		if err == nil {
			_, err = kv.Get(ctx, id)
		}
		cancel()
		if err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("worker %s did not register", id)
}

func newPoolBackend(t testing.TB, n *natsServer, opts *Options) *Backend {
	t.Helper()
	if opts == nil {
		opts = testOptions()
	}
	b, err := NewBackend(n.connect(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// scripted returns a scripted backend named "scripted" answering every
// call with call.
func scripted(call agentclitest.Call, caps agentcli.Capabilities) *agentclitest.Backend {
	b := agentclitest.NewBackend()
	b.Default = &call
	b.Caps = caps
	return b
}

func getenv(k string) string { return os.Getenv(k) }
