package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The pool's JetStream resources, for a prefix P (upper-cased where
// names must be):
//
//	stream P_WORK          subjects P.work.<backend>, work-queue retention:
//	                       the jobs (runs and live-session starts) waiting
//	                       for a worker; one durable pull consumer per
//	                       backend, "work_<backend>", shared by its workers
//	KV     P_claims        job id → "w:<worker>:<nonce>" or "x" (withdrawn): the
//	                       compare-and-set that makes a job start at most
//	                       once, whatever the redeliveries
//	KV     P_workers       worker id → its registration (backend,
//	                       capabilities, load), refreshed while it lives
//	object P_sessions      "<backend>/<session id>" → the session's
//	                       archive (SessionPorter), kept until deleted;
//	                       its metadata names the worker that saved it,
//	                       the backend and the caller's Dir
//	object P_blobs         job id → a request too large for a message
//
// Core NATS subjects (no JetStream): P.c.<stream> is the caller's end of
// a stream (a run or a turn), P.w.<worker>.<stream> the worker's, and
// P.s.<worker>.<session> a live session's control subject.
type resources struct {
	prefix   string
	workName string
	claims   jetstream.KeyValue
	workers  jetstream.KeyValue
	sessions jetstream.ObjectStore
	blobs    jetstream.ObjectStore
}

// claimTTL is how long claims, registrations and blobs are kept.
const (
	claimTTL    = 24 * time.Hour
	registryTTL = 30 * time.Second
)

func workSubject(prefix, backend string) string { return prefix + ".work." + backend }
func callerSubject(prefix, id string) string    { return prefix + ".c." + id }
func workerSubject(prefix, worker, id string) string {
	return prefix + ".w." + worker + "." + id
}
func sessionSubject(prefix, worker, id string) string {
	return prefix + ".s." + worker + "." + id
}
func consumerName(backend string) string { return "work_" + backend }

// claimValue is a worker's claim of a job in the claims bucket; nonce
// is unique to one attempt.
func claimValue(worker, nonce string) string { return "w:" + worker + ":" + nonce }

// claimWorker returns the worker of a claim value, or "".
func claimWorker(v string) string {
	rest, ok := strings.CutPrefix(v, "w:")
	if !ok {
		return ""
	}
	worker, _, _ := strings.Cut(rest, ":")
	return worker
}

// The metadata of a session's archive in the sessions store: the backend
// and the caller's Dir of the run or turn that saved it.
const (
	metaBackend = "backend"
	metaDir     = "dir"
)

// sessionKey names the archive of a session in the sessions store.
func sessionKey(backend, id string) string { return backend + "/" + id }

// setupResources is ensureResources for NewBackend, within ctx: an
// attempt whose reply has not come in a third of total is abandoned and
// made again (a JetStream reply can be lost, and a stream or bucket that an
// earlier attempt created is then found), as is one that failed for a
// reason other than JetStream refusing the configuration.
func setupResources(ctx context.Context, rc *reconnects, js jetstream.JetStream, total time.Duration, prefix string, replicas int, storage jetstream.StorageType) (*resources, error) {
	var res *resources
	err := rc.retry(ctx, max(total/3, time.Second), func(actx context.Context) error {
		var err error
		res, err = ensureResources(actx, js, prefix, replicas, storage)
		if refused(err) {
			return &permanent{err}
		}
		return err
	})
	return res, err
}

// refused reports whether err is JetStream refusing a request (a 4xx
// other than a timeout): retrying it cannot help.
func refused(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code >= 400 && apiErr.Code < 500 && apiErr.Code != 408
}

// ensureResources opens the pool's streams and buckets, creating those
// that do not exist.
func ensureResources(ctx context.Context, js jetstream.JetStream, prefix string, replicas int, storage jetstream.StorageType) (*resources, error) {
	up := strings.ToUpper(prefix)
	r := &resources{prefix: prefix, workName: up + "_WORK"}
	if _, err := js.Stream(ctx, r.workName); errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name:        r.workName,
			Description: "agentcli worker pool: jobs waiting for a worker",
			Subjects:    []string{prefix + ".work.*"},
			Retention:   jetstream.WorkQueuePolicy,
			Storage:     storage,
			Replicas:    replicas,
			Duplicates:  2 * time.Minute,
		})
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return nil, fmt.Errorf("cluster: creating stream %s: %w", r.workName, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("cluster: stream %s: %w", r.workName, err)
	}
	kv := func(name string, ttl time.Duration) (jetstream.KeyValue, error) {
		b, err := js.KeyValue(ctx, name)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			b, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
				Bucket: name, TTL: ttl, Storage: storage, Replicas: replicas,
			})
			if errors.Is(err, jetstream.ErrBucketExists) {
				b, err = js.KeyValue(ctx, name)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: bucket %s: %w", name, err)
		}
		return b, nil
	}
	obs := func(name string, ttl time.Duration) (jetstream.ObjectStore, error) {
		b, err := js.ObjectStore(ctx, name)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			b, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
				Bucket: name, TTL: ttl, Storage: storage, Replicas: replicas,
			})
			if errors.Is(err, jetstream.ErrBucketExists) {
				b, err = js.ObjectStore(ctx, name)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: object store %s: %w", name, err)
		}
		return b, nil
	}
	var err error
	if r.claims, err = kv(prefix+"_claims", claimTTL); err != nil {
		return nil, err
	}
	if r.workers, err = kv(prefix+"_workers", registryTTL); err != nil {
		return nil, err
	}
	if r.sessions, err = obs(prefix+"_sessions", 0); err != nil {
		return nil, err
	}
	if r.blobs, err = obs(prefix+"_blobs", claimTTL); err != nil {
		return nil, err
	}
	return r, nil
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID returns a random id of 26 characters, safe in a subject token, a
// KV key and a stream message id.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return idEncoding.EncodeToString(b[:])
}
