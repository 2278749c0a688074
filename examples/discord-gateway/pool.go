package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// With NATS_URL the gateway sends its runs to a pool of agentcli-worker
// processes (cluster.NewBackend) and shares what it knows of each
// conversation with its other replicas through the pool's JetStream:
//
//	<prefix>_gw_conversations  KV: <backend>.<conversation> → Entry (KVStore)
//	<prefix>_gw_locks          KV, 30 s age limit: <conversation> → the replica answering it (kvLocks)

// pool is the gateway's connection to the pool.
type pool struct {
	nc      *nats.Conn
	backend *cluster.Backend
	store   *KVStore
	locks   *kvLocks
}

// openPool connects to NATS at cfg.NATSURL and opens the pool's backend
// name (with caps, the capabilities of the backend as this build knows
// them: workers may not be up yet), the conversation store and the locks.
func openPool(ctx context.Context, cfg Config, name string, caps agentcli.Capabilities, replica string, log *slog.Logger) (*pool, error) {
	opts := []nats.Option{
		nats.Name("discord-gateway " + replica),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("nats disconnected", "err", err) }),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats reconnected", "url", c.ConnectedUrlRedacted()) }),
	}
	if cfg.NATSCreds != "" {
		opts = append(opts, nats.UserCredentials(cfg.NATSCreds))
	}
	nc, err := nats.Connect(cfg.NATSURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS: %w", err)
	}
	p := &pool{nc: nc}
	fail := func(err error) (*pool, error) {
		p.close()
		return nil, err
	}
	p.backend, err = cluster.NewBackend(nc, &cluster.Options{Backend: name, Prefix: cfg.PoolPrefix,
		Capabilities: &caps, Logger: log})
	if err != nil {
		return fail(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fail(err)
	}
	prefix := cfg.PoolPrefix
	if prefix == "" {
		prefix = "agentcli"
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	convs, err := bucket(sctx, js, jetstream.KeyValueConfig{Bucket: prefix + "_gw_conversations",
		Description: "discord-gateway: what is known of each conversation"})
	if err != nil {
		return fail(fmt.Errorf("the conversations bucket: %w", err))
	}
	locks, err := bucket(sctx, js, jetstream.KeyValueConfig{Bucket: prefix + "_gw_locks",
		Description: "discord-gateway: the replica answering each conversation", TTL: lockTTL})
	if err != nil {
		return fail(fmt.Errorf("the locks bucket: %w", err))
	}
	p.store = &KVStore{kv: convs, backend: name}
	p.locks = &kvLocks{kv: locks, holder: replica, ttl: lockTTL, log: log}
	return p, nil
}

// bucket creates or updates the bucket of cfg within ctx, trying again
// when JetStream does not answer within 3 s (a reply can be lost) or is
// not up yet; any other error (a configuration refused) is returned at
// once.
func bucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		kv, err := js.CreateOrUpdateKeyValue(actx, cfg)
		cancel()
		if err == nil || !notAnswered(err) {
			return kv, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
	}
}

// notAnswered reports whether err says JetStream did not answer a
// request: no reply in time, nobody to answer, or JetStream unavailable
// for now (a 5xx).
func notAnswered(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.As(err, &apiErr) && (apiErr.Code == 408 || apiErr.Code >= 500)
}

func (p *pool) close() {
	if p.backend != nil {
		p.backend.Close()
	}
	p.nc.Close()
}

// convKey turns a conversation id into a key token: itself when it is
// plain (Discord's ids are numbers), a hash otherwise.
func convKey(conv string) string {
	if plainName.MatchString(conv) {
		return "c-" + conv
	}
	h := sha256.Sum256([]byte(conv))
	return "h-" + hex.EncodeToString(h[:20])
}

// KVStore is a SessionStore in a JetStream key-value bucket, shared by the
// replicas of the gateway: one JSON entry per conversation and backend,
// written with compare-and-set, so that concurrent updates of one
// conversation (a /model while an answer is stored) are applied one after
// the other, never lost.
type KVStore struct {
	kv      jetstream.KeyValue
	backend string
}

var _ SessionStore = (*KVStore)(nil)

func (s *KVStore) key(conv string) string { return s.backend + "." + convKey(conv) }

// kvEntry is the stored JSON.
type kvEntry struct {
	Conv    string    `json:"conv"`
	Updated time.Time `json:"updated"`
	Entry
}

// read returns the entry of conv and its revision (0: none).
func (s *KVStore) read(ctx context.Context, conv string) (Entry, uint64, error) {
	kve, err := s.kv.Get(ctx, s.key(conv))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Entry{}, 0, nil
	}
	if err != nil {
		return Entry{}, 0, err
	}
	var e kvEntry
	if err := json.Unmarshal(kve.Value(), &e); err != nil || e.Conv != conv {
		if err == nil {
			err = errors.New("the entry of another conversation")
		}
		return Entry{}, kve.Revision(), fmt.Errorf("%w %s: %v", ErrCorrupt, s.key(conv), err)
	}
	return e.Entry, kve.Revision(), nil
}

// Get implements SessionStore. An entry that does not parse is deleted
// and reported as ErrCorrupt.
func (s *KVStore) Get(ctx context.Context, conv string) (Entry, error) {
	e, rev, err := s.read(ctx, conv)
	if errors.Is(err, ErrCorrupt) {
		_ = s.kv.Delete(ctx, s.key(conv), jetstream.LastRevision(rev))
	}
	return e, err
}

// Update implements SessionStore: it applies fn to the current entry and
// writes the result if nobody wrote in between, else starts over.
func (s *KVStore) Update(ctx context.Context, conv string, fn func(*Entry)) (Entry, error) {
	for attempt := 0; ; attempt++ {
		e, rev, err := s.read(ctx, conv)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			return e, err
		}
		fn(&e)
		switch {
		case e == (Entry{}) && rev == 0:
			return e, nil
		case e == (Entry{}):
			err = s.kv.Delete(ctx, s.key(conv), jetstream.LastRevision(rev))
		default:
			b, merr := json.Marshal(kvEntry{Conv: conv, Updated: time.Now().UTC(), Entry: e})
			if merr != nil {
				return e, merr
			}
			if rev == 0 {
				_, err = s.kv.Create(ctx, s.key(conv), b)
			} else {
				_, err = s.kv.Update(ctx, s.key(conv), b, rev)
			}
		}
		if err == nil {
			return e, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) || attempt >= 50 {
			return e, err
		}
		// Someone wrote first: apply fn to what they wrote.
	}
}

// lockTTL is how long a conversation's lock outlives the replica holding
// it (the bucket's age limit): a replica renews its locks every third of
// it.
const lockTTL = 30 * time.Second

// kvLocks gives a conversation to one replica at a time (ConvLocks): a key
// per conversation, created by the replica that takes it, renewed while
// it answers, deleted when it is done, and gone by itself lockTTL after a
// replica that died last renewed it.
type kvLocks struct {
	kv     jetstream.KeyValue
	holder string
	ttl    time.Duration
	poll   time.Duration // zero means 100 ms
	log    *slog.Logger
}

var _ ConvLocks = (*kvLocks)(nil)

// errLockLost: the conversation's lock could not be renewed in time;
// another replica may be answering it.
var errLockLost = errors.New("the conversation's lock was lost (NATS unreachable); another replica may take it over")

// Lock implements ConvLocks. While the lock is held by another replica it
// looks again every poll; NATS errors are retried for a minute.
func (l *kvLocks) Lock(ctx context.Context, conv string) (context.Context, func(), error) {
	key := convKey(conv)
	poll := l.poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	var rev uint64
	failing := time.Time{}
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r, err := l.kv.Create(actx, key, []byte(l.holder))
		cancel()
		if err == nil {
			rev = r
			break
		}
		if ctx.Err() != nil {
			return nil, nil, context.Cause(ctx)
		}
		if errors.Is(err, jetstream.ErrKeyExists) {
			failing = time.Time{}
		} else {
			if failing.IsZero() {
				failing = time.Now()
			}
			if time.Since(failing) > time.Minute {
				return nil, nil, fmt.Errorf("taking the conversation's lock: %w", err)
			}
		}
		t := time.NewTimer(poll/2 + time.Duration(time.Now().UnixNano()%int64(poll)))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, nil, context.Cause(ctx)
		}
	}
	held, lose := context.WithCancelCause(ctx)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(l.ttl / 3)
		defer tick.Stop()
		renewed := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			actx, cancel := context.WithTimeout(context.Background(), l.ttl/3)
			r, err := l.kv.Update(actx, key, []byte(l.holder), rev)
			cancel()
			switch {
			case err == nil:
				rev, renewed = r, time.Now()
			case errors.Is(err, jetstream.ErrKeyRevisionMismatch), errors.Is(err, jetstream.ErrKeyExists),
				time.Since(renewed) > l.ttl*2/3:
				l.log.Error("lost a conversation's lock", "conversation", conv, "err", err)
				lose(errLockLost)
				return
			}
		}
	}()
	unlock := func() {
		close(stop)
		<-stopped
		lose(nil)
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := l.kv.Delete(dctx, key, jetstream.LastRevision(rev)); err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			// It goes by itself after lockTTL.
			l.log.Warn("releasing a conversation's lock", "conversation", conv, "err", err)
		}
	}
	return held, unlock, nil
}
