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
	"strings"
	"sync"
	"time"
)

// SessionStore remembers the agent session of each channel, so that a
// restart resumes every conversation. It is safe for concurrent use.
//
// This is the seam a deployment larger than one host replaces with a
// shared store (see the README, "Beyond one machine").
type SessionStore interface {
	// Get returns the channel's session id, or "" when it has none. A
	// stored entry that cannot be read is reported as an error (and
	// forgotten): the caller goes on without a session.
	Get(ctx context.Context, channel string) (string, error)
	// Set stores the channel's session id; it is durable when Set
	// returns.
	Set(ctx context.Context, channel, sessionID string) error
	// Delete forgets the channel's session.
	Delete(ctx context.Context, channel string) error
}

// ErrCorrupt reports a stored session entry that could not be read.
var ErrCorrupt = errors.New("corrupt session entry")

// FileStore is a SessionStore with one small JSON file per channel in a
// directory. Every write goes to a temporary file that is synced and then
// renamed over the old one, so a crash leaves either the old or the new
// entry, never a torn one.
type FileStore struct {
	dir string

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// entry is the content of one file.
type entry struct {
	Channel   string    `json:"channel"`
	SessionID string    `json:"session_id"`
	Updated   time.Time `json:"updated"`
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
// another channel, is renamed to *.corrupt and reported as ErrCorrupt.
func (s *FileStore) Get(ctx context.Context, channel string) (string, error) {
	defer s.lock(channel)()
	p := s.path(channel)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var e entry
	if err := json.Unmarshal(b, &e); err != nil || e.Channel != channel || strings.TrimSpace(e.SessionID) == "" {
		os.Rename(p, p+".corrupt")
		if err == nil {
			err = errors.New("wrong channel or empty session id")
		}
		return "", fmt.Errorf("%w %s (moved aside to %s.corrupt): %v", ErrCorrupt, p, filepath.Base(p), err)
	}
	return e.SessionID, nil
}

// Set implements SessionStore.
func (s *FileStore) Set(ctx context.Context, channel, sessionID string) error {
	defer s.lock(channel)()
	b, err := json.Marshal(entry{Channel: channel, SessionID: sessionID, Updated: time.Now().UTC()})
	if err != nil {
		return err
	}
	return writeAtomic(s.path(channel), b)
}

// Delete implements SessionStore.
func (s *FileStore) Delete(ctx context.Context, channel string) error {
	defer s.lock(channel)()
	err := os.Remove(s.path(channel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(s.dir)
}

// writeAtomic replaces the file at path with data: a temporary file in
// the same directory, synced, renamed over path, and the directory synced.
func writeAtomic(path string, data []byte) error {
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
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
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
