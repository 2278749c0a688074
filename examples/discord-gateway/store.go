package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
)

// SessionStore remembers what the gateway knows of each conversation (its
// agent session, who started it, its model and what it has cost), so that
// a restart resumes every conversation. It is safe for concurrent use.
//
// This is the seam a deployment larger than one host replaces with a
// shared store: KVStore, with NATS_URL (see the README, "On a worker
// pool").
type SessionStore interface {
	// Get returns the conversation's entry; the zero Entry when it has
	// none. A stored entry that cannot be read is reported as an error
	// (and forgotten): the caller goes on without it.
	Get(ctx context.Context, conv string) (Entry, error)
	// Update applies fn to the conversation's entry (the zero Entry when
	// it has none or it cannot be read) and stores the result, durably
	// when Update returns; a zero result deletes the entry. Updates of one
	// conversation are serialized. It returns the stored entry.
	Update(ctx context.Context, conv string, fn func(*Entry)) (Entry, error)
}

// Entry is what is stored of one conversation.
type Entry struct {
	// SessionID is the agent session; the next message resumes it.
	SessionID string `json:"session_id,omitempty"`
	// Owner is the user who started the conversation: with the approvers,
	// the one who may stop or reset it.
	Owner string `json:"owner,omitempty"`
	// Model is the conversation's model (/model); "" is the default.
	Model string `json:"model,omitempty"`
	// Usage, CostUSD and Answers sum up the conversation's runs (/usage).
	Usage   agentcli.Usage `json:"usage,omitzero"`
	CostUSD float64        `json:"cost_usd,omitempty"`
	Answers int            `json:"answers,omitempty"`
	// Last is the message last claimed, Replica the replica that claimed it,
	// when several replicas share the conversations (Options.Locks).
	Last    string `json:"last,omitempty"`
	Replica string `json:"replica,omitempty"`
}

// ErrCorrupt reports a stored session entry that could not be read.
var ErrCorrupt = errors.New("corrupt session entry")

// FileStore is a SessionStore with one small JSON file per conversation in a
// directory. Every write goes to a temporary file that is synced and then
// renamed over the old one, so a crash leaves either the old or the new
// entry, never a torn one.
type FileStore struct {
	dir string

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// fileEntry is the content of one file.
type fileEntry struct {
	Channel string    `json:"channel"`
	Updated time.Time `json:"updated"`
	Entry
}

// NewFileStore opens (creating it if needed) a FileStore in dir and
// removes temporary files a crash left behind.
func NewFileStore(dir string) (*FileStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	stale, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	for _, f := range stale {
		os.Remove(f)
	}
	return &FileStore{dir: dir, locks: map[string]*sync.Mutex{}}, nil
}

var plainName = regexp.MustCompile(`^[0-9A-Za-z_-]{1,64}$`)

// path returns the file of channel: its id when that is a safe file name
// (Discord's are numbers), a hash of it otherwise.
func (s *FileStore) path(channel string) string {
	if plainName.MatchString(channel) {
		return filepath.Join(s.dir, "c-"+channel+".json")
	}
	h := sha256.Sum256([]byte(channel))
	return filepath.Join(s.dir, "h-"+hex.EncodeToString(h[:20])+".json")
}

// lock serializes the writes of one channel.
func (s *FileStore) lock(channel string) func() {
	s.mu.Lock()
	l := s.locks[channel]
	if l == nil {
		l = &sync.Mutex{}
		s.locks[channel] = l
	}
	s.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// Get implements SessionStore. A file that does not parse, or belongs to
// another conversation, is renamed to *.corrupt and reported as
// ErrCorrupt.
func (s *FileStore) Get(ctx context.Context, conv string) (Entry, error) {
	defer s.lock(conv)()
	return s.read(conv)
}

// read returns the entry of conv; its lock is held.
func (s *FileStore) read(conv string) (Entry, error) {
	p := s.path(conv)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, nil
	}
	if err != nil {
		return Entry{}, err
	}
	var e fileEntry
	if err := json.Unmarshal(b, &e); err != nil || e.Channel != conv || e.Entry == (Entry{}) {
		os.Rename(p, p+".corrupt")
		if err == nil {
			err = errors.New("wrong conversation or empty entry")
		}
		return Entry{}, fmt.Errorf("%w %s (moved aside to %s.corrupt): %v", ErrCorrupt, p, filepath.Base(p), err)
	}
	return e.Entry, nil
}

// Update implements SessionStore.
func (s *FileStore) Update(ctx context.Context, conv string, fn func(*Entry)) (Entry, error) {
	defer s.lock(conv)()
	e, _ := s.read(conv) // a corrupt entry was moved aside: start from zero
	fn(&e)
	if e == (Entry{}) {
		err := os.Remove(s.path(conv))
		if errors.Is(err, fs.ErrNotExist) {
			return e, nil
		}
		if err != nil {
			return e, err
		}
		return e, syncDir(s.dir)
	}
	b, err := json.Marshal(fileEntry{Channel: conv, Updated: time.Now().UTC(), Entry: e})
	if err != nil {
		return e, err
	}
	return e, writeAtomic(s.path(conv), b, true)
}

// writeAtomic replaces the file at path with data: a temporary file in
// the same directory, renamed over path. With durable, the file and then
// the directory are synced too, so that the new content survives a crash
// of the machine; without it, only a crash of the process.
func writeAtomic(path string, data []byte, durable bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if !durable {
		return nil
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
