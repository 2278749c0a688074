package agentcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ExportSession returns an archive of session id of b's CLI, run in dir
// ("" for the current directory): the files in which the CLI keeps the
// session (claude's project transcript, codex's rollout, gemini's chat,
// opencode's export, copilot's session folder, qwen's chat, droid's
// transcript and settings), found in the CLI's home as a run of b would use it
// (b's Options.Env over this process's environment), with a manifest
// naming the backend, the session and dir. ImportSession restores it on
// another machine, in another home and another directory, so that a run
// there resumes the session with its whole history. The archive is a
// gzip-compressed tar file; it holds the conversation as the CLI stored
// it, tool output included: store it accordingly.
//
// ExportSession starts no model call (opencode's is its own export
// command). A session the CLI has no files of fails with an error
// matching ErrSessionNotFound; a backend that cannot move sessions
// (Capabilities().PortableSessions) with an *UnsupportedError. It blocks
// until the files are read.
func ExportSession(ctx context.Context, b Backend, dir, id string) ([]byte, error) {
	if p, ok := find[sessionPorter](b); ok {
		return p.ExportSession(ctx, dir, id)
	}
	return nil, &UnsupportedError{Backend: nameOf(b), Feature: "portable sessions"}
}

// ImportSession writes the session in archive (from ExportSession of the
// same backend) where b's CLI looks for it when it runs in dir ("" for the
// current directory), rewriting the directory the session ran in to dir
// in its files, and returns the session id to resume it by
// (Request.SessionID, with Dir set to dir). A session of that id already
// there is replaced. An archive of another backend, or one that is not an
// archive, is an *RequestError naming "archive"; one whose files hold more
// than 1 GiB is refused. It blocks until the files are written.
func ImportSession(ctx context.Context, b Backend, dir string, archive []byte) (string, error) {
	if p, ok := find[sessionPorter](b); ok {
		return p.ImportSession(ctx, dir, archive)
	}
	return "", &UnsupportedError{Backend: nameOf(b), Feature: "portable sessions"}
}

// sessionPorter is what ExportSession and ImportSession look for.
type sessionPorter interface {
	ExportSession(ctx context.Context, dir, id string) ([]byte, error)
	ImportSession(ctx context.Context, dir string, archive []byte) (string, error)
}

// SessionStore keeps session archives (ExportSession) by key, so that a
// session can move between machines: a worker exports a session after a
// turn and Puts it; the next turn, anywhere, Gets it and imports it. Keys
// are SessionKey values. Implementations are safe for concurrent use.
type SessionStore interface {
	// Put stores archive under key, replacing what the key held.
	Put(ctx context.Context, key string, archive []byte) error
	// Get returns the archive stored under key; a key with none fails
	// with an error matching ErrSessionNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Delete removes the archive stored under key; a key with none is no
	// error.
	Delete(ctx context.Context, key string) error
	// List returns the keys that start with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
}

// SessionKey returns the key under which a SessionStore keeps session id
// of backend: "BACKEND/ID".
func SessionKey(backend, id string) string { return backend + "/" + id }

// DirStore is a SessionStore that keeps each archive in a file under Dir,
// written atomically (a temporary file renamed over the old one). Keys
// may hold letters, digits, "-", "_", "." and "/" (separating
// directories); anything else, and ".." elements, are refused.
type DirStore struct {
	// Dir is the directory the archives live in; it is created when
	// needed (0700).
	Dir string
}

var _ SessionStore = DirStore{}

// path returns the file of key, or an error for a key that is not safe
// as a path.
func (s DirStore) path(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
		return "", fmt.Errorf("agentcli: bad session key %q", key)
	}
	for _, el := range strings.Split(key, "/") {
		if el == "" || el == "." || el == ".." {
			return "", fmt.Errorf("agentcli: bad session key %q", key)
		}
		for _, c := range el {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.", c)) {
				return "", fmt.Errorf("agentcli: bad session key %q", key)
			}
		}
	}
	return filepath.Join(s.Dir, filepath.FromSlash(key)+".session"), nil
}

// Put implements SessionStore.
func (s DirStore) Put(ctx context.Context, key string, archive []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return err
	}
	_, err = f.Write(archive)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Get implements SessionStore.
func (s DirStore) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("agentcli: no session archive %q: %w", key, ErrSessionNotFound)
	}
	return b, err
}

// Delete implements SessionStore.
func (s DirStore) Delete(ctx context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// List implements SessionStore.
func (s DirStore) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	err := filepath.WalkDir(s.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && p == s.Dir {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".session") {
			return nil
		}
		rel, err := filepath.Rel(s.Dir, p)
		if err != nil {
			return err
		}
		key := strings.TrimSuffix(filepath.ToSlash(rel), ".session")
		if strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	slices.Sort(keys)
	return keys, err
}
