// Command agentcli-worker runs one worker of an agentcli pool: it takes
// the runs and live sessions of one backend (claude, codex, gemini or
// opencode) from a NATS JetStream work queue and runs them on this
// machine's CLI.
//
//	agentcli-worker -nats nats://nats:4222 -backend claude -max-runs 4
//
// Flags fall back to the environment: NATS_URL, NATS_CREDS,
// AGENT_BACKEND, BACKEND_CLI_PATH, WORKER_ID, WORKER_MAX_RUNS,
// POOL_PREFIX, PORTABLE_SESSIONS. SIGINT or SIGTERM drains the worker: it
// takes no more work, lets the runs in progress finish (up to -drain),
// and exits.
//
// Sessions are portable by default (cluster.PortableSessions): the
// session of every run and turn is saved to the pool's object store, and
// a run resuming a session imports it first, so the next turn of a
// conversation can run on any worker. -portable-sessions=false keeps the
// sessions in this worker's files (workers sharing one HOME, or a single
// worker).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/agentcli/agentcli"
	_ "github.com/agentcli/agentcli/claude"
	"github.com/agentcli/agentcli/cluster"
	_ "github.com/agentcli/agentcli/codex"
	_ "github.com/agentcli/agentcli/gemini"
	_ "github.com/agentcli/agentcli/opencode"
	"github.com/nats-io/nats.go"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.LookupEnv, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program; it returns the exit status.
func run(ctx context.Context, args []string, lookup func(string) (string, bool), stderr io.Writer) int {
	env := func(k, def string) string {
		if v, ok := lookup(k); ok && v != "" {
			return v
		}
		return def
	}
	maxRuns, _ := strconv.Atoi(env("WORKER_MAX_RUNS", "0"))
	portable, err := strconv.ParseBool(env("PORTABLE_SESSIONS", "true"))
	if err != nil {
		fmt.Fprintf(stderr, "PORTABLE_SESSIONS=%q: want true or false\n", env("PORTABLE_SESSIONS", ""))
		return 2
	}
	fs := flag.NewFlagSet("agentcli-worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("nats", env("NATS_URL", nats.DefaultURL), "NATS server URL(s), comma-separated")
	creds := fs.String("creds", env("NATS_CREDS", ""), "NATS credentials file")
	backend := fs.String("backend", env("AGENT_BACKEND", agentcli.DefaultBackend), "backend to run: "+fmt.Sprint(agentcli.Backends()))
	cliPath := fs.String("cli-path", env("BACKEND_CLI_PATH", ""), "the CLI binary (default: the backend's name on PATH)")
	id := fs.String("id", env("WORKER_ID", ""), "worker id, unique in the pool (default: random)")
	prefix := fs.String("prefix", env("POOL_PREFIX", ""), "subject and stream prefix of the pool (default agentcli)")
	runs := fs.Int("max-runs", maxRuns, "most CLI processes at once, live sessions included (default: CPUs)")
	idle := fs.Duration("session-idle", 0, "close a live session idle this long (default 10m)")
	drain := fs.Duration("drain", 0, "on SIGTERM, how long runs in progress may finish (default 30s)")
	sessions := fs.Bool("portable-sessions", portable, "save every session to the pool so that any worker can resume it")
	verbose := fs.Bool("v", false, "log at debug level")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	b, err := agentcli.Open(*backend, &agentcli.Options{Path: *cliPath, Logger: logger})
	if err != nil {
		logger.Error("backend", "err", err)
		return 2
	}
	nc, err := connect(*url, *creds, logger)
	if err != nil {
		logger.Error("nats", "err", err)
		return 1
	}
	defer nc.Close()
	if err := b.Check(ctx); err != nil {
		// Registered anyway: Backend.Check on the callers' side reports it.
		logger.Warn("the CLI is not reachable", "err", err)
	}
	wo := &cluster.WorkerOptions{
		ID: *id, Prefix: *prefix, MaxRuns: *runs, SessionIdle: *idle, DrainTimeout: *drain, Logger: logger,
	}
	switch {
	case *sessions && b.Capabilities().PortableSessions:
		wo.Sessions = cluster.PortableSessions{}
	case *sessions:
		logger.Warn("this backend cannot move sessions between workers: a session resumes only on a worker that has its files",
			"backend", b.Name())
	}
	w, err := cluster.NewWorker(nc, b, wo)
	if err != nil {
		logger.Error("worker", "err", err)
		return 2
	}
	if err := w.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		logger.Error("worker stopped", "err", err)
		return 1
	}
	return 0
}

// connect connects to the NATS servers at url (with the credentials file
// creds, if set), reconnecting for ever and logging each disconnection.
func connect(url, creds string, logger *slog.Logger) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name("agentcli-worker"),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { logger.Warn("nats disconnected", "err", err) }),
		nats.ReconnectHandler(func(c *nats.Conn) { logger.Info("nats reconnected", "url", c.ConnectedUrlRedacted()) }),
	}
	if creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	return nats.Connect(url, opts...)
}
