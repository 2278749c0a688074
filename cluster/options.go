package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/nats-io/nats.go/jetstream"
)

// SessionPorter moves a CLI's session between machines: Export writes the
// files the CLI keeps for one session into an archive, Import restores
// such an archive on another machine (another HOME, another Dir) so that
// the CLI there can resume the session. A Worker with a SessionPorter
// saves the session of every run and turn to the pool's object store when
// it ends, and restores it before a run or a live session resumes it, so
// that the next turn can run on any worker.
//
// The archive is a byte stream whose format is the porter's own; the
// pool stores it as it is. Implementations must be safe for concurrent
// use. PortableSessions, built on agentcli's portable sessions
// (ExportSession, ImportSession), is the implementation for the CLIs
// agentcli drives.
type SessionPorter interface {
	// Export writes the archive of session id, which backend b ran in
	// directory dir, to w. It blocks until the archive is written.
	Export(ctx context.Context, b agentcli.Backend, dir, id string, w io.Writer) error
	// Import restores the archive read from r so that b, run in
	// directory dir, can resume it, and returns the session id to resume
	// (usually the exported one). It blocks until the files are in place.
	Import(ctx context.Context, b agentcli.Backend, dir string, r io.Reader) (id string, err error)
}

// Options configure a Backend (the caller's side of the pool). A nil
// *Options means defaults everywhere; it is copied by NewBackend.
type Options struct {
	// Backend is the registry name of the backend the workers run, such
	// as "claude"; it is also what Backend.Name reports. Empty means
	// agentcli.DefaultBackend. Workers serve the runs of their own
	// backend's name only. Aliases ("claude-code") resolve only when this
	// process imports the backend's package; otherwise give the name.
	Backend string

	// Prefix starts every subject, stream and bucket name of the pool,
	// so that several pools can share a NATS account. Empty means
	// "agentcli". Letters, digits, "_" and "-" only.
	Prefix string

	// Capabilities, if set, is what Backend.Capabilities reports.
	// Otherwise it reports the capabilities a live worker of the backend
	// registered, or the zero value while none is known.
	Capabilities *agentcli.Capabilities

	// Heartbeat is how often the caller tells a worker it is still
	// there (and acknowledges what it received). Zero means 1 second.
	Heartbeat time.Duration

	// WorkerDeadAfter is how long a worker running a run may stay silent
	// (while this process is connected to NATS) before the run ends with
	// a *WorkerLostError. Zero means 10 seconds. It is raised to three of
	// the worker's heartbeat intervals when that is longer.
	WorkerDeadAfter time.Duration

	// QueuePoll is how often a run waiting for a worker checks whether a
	// worker claimed it and then died before starting it. Zero means 2
	// seconds.
	QueuePoll time.Duration

	// Window is how many frames (events, pieces of large events, wire-log
	// records) a worker may send ahead of what the caller has consumed.
	// With WindowBytes it bounds the memory a run holds on each side, and
	// a slow consumer slows its own run, and only it, when the window is
	// full. Zero means 256 frames.
	Window int
	// WindowBytes bounds the same in bytes (a single frame may exceed
	// it). Zero means 4 MiB.
	WindowBytes int

	// MaxMessageBytes bounds one event or wire-log record reassembled from
	// its pieces; a larger one ends the run with an error. Zero means
	// 128 MiB (twice agentcli's default longest line).
	MaxMessageBytes int

	// Replicas is the replica count of the JetStream streams and buckets
	// the Backend creates when they do not exist yet (existing ones are
	// used as they are). Zero means 1; use 3 on a NATS cluster.
	Replicas int
	// Storage is the storage of the streams and buckets it creates. The
	// zero value is file storage.
	Storage jetstream.StorageType

	// SetupTimeout bounds NewBackend's JetStream set-up. Within it,
	// NewBackend tries again when JetStream does not answer (a reply lost,
	// JetStream not up yet); a configuration JetStream refuses fails at
	// once. Zero means 10 seconds.
	SetupTimeout time.Duration

	// Logger receives the Backend's rare warnings. Nil means none.
	Logger *slog.Logger
}

// WorkerOptions configure a Worker. A nil *WorkerOptions means defaults
// everywhere; it is copied by NewWorker.
type WorkerOptions struct {
	// ID names the worker in the pool; it must be unique among live
	// workers. Empty means a random id.
	ID string

	// Prefix is the pool's prefix (see Options.Prefix).
	Prefix string

	// MaxRuns bounds the CLI processes the worker runs at once: one-shot
	// runs and live sessions (which hold theirs until they close or stay
	// idle for SessionIdle). The worker takes no more work while full.
	// Zero means the number of CPUs.
	MaxRuns int

	// Sessions, if set, makes sessions portable: the session of every
	// run and turn is saved to the pool's object store when it ends and
	// restored before a run or live session resumes it, so that it can
	// continue on any worker. Nil means sessions stay in the files of the
	// worker that ran them (fine when the workers share HOME).
	Sessions SessionPorter

	// MapDir, if set, turns a Request.Dir from the caller into the
	// directory used on this worker (for example a per-session
	// directory under a root, or a refusal of paths outside it). An error
	// fails the run with a *agentcli.RequestError. Nil uses Request.Dir as
	// it is.
	MapDir func(dir string) (string, error)

	// SessionIdle closes a live session that has had no turn for this
	// long, freeing its slot; its next turn moves it to any worker (with
	// Sessions set) or fails. Zero means 10 minutes.
	SessionIdle time.Duration

	// Heartbeat is how often the worker tells its callers it is alive
	// and retransmits what they did not acknowledge. Zero means 1 second.
	Heartbeat time.Duration

	// CallerDeadAfter is how long a caller may stay silent (while the
	// worker is connected) before the worker stops its run. Zero means 10
	// seconds; it is raised to three of the caller's heartbeat intervals.
	CallerDeadAfter time.Duration

	// ChunkBytes is the largest frame the worker publishes; larger events
	// travel in pieces. Zero means 128 KiB; it is lowered to fit the
	// server's max_payload.
	ChunkBytes int

	// AckWait is how long the work queue waits for a worker that fetched
	// a job before giving it to another one. Zero means 30 seconds.
	AckWait time.Duration

	// DrainTimeout is how long Run waits, once its context is done, for
	// the runs in progress to end before it stops them. Zero means 30
	// seconds.
	DrainTimeout time.Duration

	// MaxArchiveBytes bounds one session archive, saved or restored: a
	// larger one fails with an error matching ErrArchiveTooLarge. Zero
	// means 1 GiB.
	MaxArchiveBytes int64

	// Replicas is as Options.Replicas.
	Replicas int
	// Storage is as Options.Storage.
	Storage jetstream.StorageType
	// SetupTimeout bounds each attempt of the worker's JetStream set-up
	// (Run retries until its context ends). Zero means 10 seconds.
	SetupTimeout time.Duration

	// Logger receives the worker's log. Nil means none.
	Logger *slog.Logger
}

const defaultPrefix = "agentcli"

func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	if name, err := agentcli.Resolve(r.Backend); err == nil {
		r.Backend = name // an alias, when this process registered the backend
	}
	r.Backend = strings.ToLower(strings.TrimSpace(r.Backend))
	if r.Backend == "" {
		r.Backend = agentcli.DefaultBackend
	}
	if !validToken(r.Backend) {
		return r, fmt.Errorf("cluster: invalid backend name %q", r.Backend)
	}
	if err := checkPrefix(&r.Prefix); err != nil {
		return r, err
	}
	if r.Capabilities != nil {
		c := *r.Capabilities
		r.Capabilities = &c
	}
	r.Heartbeat = orDuration(r.Heartbeat, time.Second)
	r.WorkerDeadAfter = orDuration(r.WorkerDeadAfter, 10*time.Second)
	r.QueuePoll = orDuration(r.QueuePoll, 2*time.Second)
	r.Window = orInt(r.Window, 256)
	r.WindowBytes = orInt(r.WindowBytes, 4<<20)
	r.MaxMessageBytes = orInt(r.MaxMessageBytes, 128<<20)
	r.Replicas = orInt(r.Replicas, 1)
	r.SetupTimeout = orDuration(r.SetupTimeout, 10*time.Second)
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// checkPrefix sets an empty *p to the default subject prefix and fails on
// one that is not a subject token.
func checkPrefix(p *string) error {
	if *p == "" {
		*p = defaultPrefix
	}
	if !validToken(*p) {
		return fmt.Errorf("cluster: invalid prefix %q: letters, digits, _ and - only", *p)
	}
	return nil
}

func (o *WorkerOptions) withDefaults() (WorkerOptions, error) {
	var r WorkerOptions
	if o != nil {
		r = *o
	}
	if r.ID == "" {
		r.ID = newID()
	}
	if !validToken(r.ID) {
		return r, fmt.Errorf("cluster: invalid worker id %q: letters, digits, _ and - only", r.ID)
	}
	if err := checkPrefix(&r.Prefix); err != nil {
		return r, err
	}
	r.MaxRuns = orInt(r.MaxRuns, runtime.NumCPU())
	r.SessionIdle = orDuration(r.SessionIdle, 10*time.Minute)
	r.Heartbeat = orDuration(r.Heartbeat, time.Second)
	r.CallerDeadAfter = orDuration(r.CallerDeadAfter, 10*time.Second)
	r.ChunkBytes = orInt(r.ChunkBytes, 128<<10)
	r.AckWait = orDuration(r.AckWait, 30*time.Second)
	r.DrainTimeout = orDuration(r.DrainTimeout, 30*time.Second)
	if r.MaxArchiveBytes <= 0 {
		r.MaxArchiveBytes = 1 << 30
	}
	r.Replicas = orInt(r.Replicas, 1)
	r.SetupTimeout = orDuration(r.SetupTimeout, 10*time.Second)
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func orInt(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// validToken reports whether s can be one token of a subject and part
// of a stream or bucket name.
func validToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

// ErrUnavailable: the pool could not be reached (NATS or JetStream is
// down or refuses): the run was not submitted, or its state could not
// be read.
var ErrUnavailable = errors.New("worker pool unavailable")
