package driver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
)

// SessionFile is one file in which a CLI keeps a session, for
// Spec.ExportSession and Spec.ImportSession.
type SessionFile struct {
	// Name is the file's path, slash-separated and relative to a root
	// the backend knows (its state directory, say); "..", absolute paths
	// and empty elements are refused.
	Name string
	// Data is the file's content.
	Data []byte
}

// The archive of a session (agentcli.ExportSession) is a gzip-compressed
// tar file: first a manifest, sessionManifestName, then every file of the
// session under "files/".
const (
	sessionManifestName = "agentcli-session.json"
	sessionFormat       = "agentcli-session"
	sessionVersion      = 1
)

// Bounds on an archive being imported: it may come from another machine,
// and a hostile one must not fill this one's memory or disk.
const (
	maxSessionFiles = 10000
	// MaxSessionArchive is the most an imported session's files may hold
	// in all, uncompressed: 1 GiB.
	MaxSessionArchive = 1 << 30
)

// sessionManifest describes an archive.
type sessionManifest struct {
	Format    string    `json:"format"`
	Version   int       `json:"version"`
	Backend   string    `json:"backend"`
	SessionID string    `json:"session_id"`
	Dir       string    `json:"dir"`
	Created   time.Time `json:"created"`
	Files     []string  `json:"files"`
}

// ExportSession implements agentcli.ExportSession for the Spec's
// ExportSession.
func (b *Backend) ExportSession(ctx context.Context, dir, id string) ([]byte, error) {
	if b.spec.ExportSession == nil {
		return nil, &agentcli.UnsupportedError{Backend: b.spec.Name, Feature: "portable sessions"}
	}
	if id == "" {
		return nil, &agentcli.RequestError{Backend: b.spec.Name, Field: "SessionID", Reason: "empty"}
	}
	r, err := b.sessionRun(ctx, dir, id)
	if err != nil {
		return nil, err
	}
	defer r.Cleanup()
	files, err := b.spec.ExportSession(ctx, r, id)
	if err != nil {
		return nil, b.sessionErr(err)
	}
	m := sessionManifest{Format: sessionFormat, Version: sessionVersion, Backend: b.spec.Name,
		SessionID: id, Dir: r.Dir, Created: time.Now().UTC()}
	for _, f := range files {
		if err := checkSessionName(f.Name); err != nil {
			return nil, fmt.Errorf("%s: exporting session %s: %w", b.spec.Name, id, err)
		}
		m.Files = append(m.Files, f.Name)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: m.Created, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	mb, _ := json.MarshalIndent(m, "", "  ")
	err = add(sessionManifestName, mb)
	for _, f := range files {
		if err == nil {
			err = add("files/"+f.Name, f.Data)
		}
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ImportSession implements agentcli.ImportSession for the Spec's
// ImportSession: it reads the archive (refusing one of another backend, a
// malformed one, or one over MaxSessionArchive), rewrites the directory
// the session ran in to dir in every file, and hands the files over.
func (b *Backend) ImportSession(ctx context.Context, dir string, archive []byte) (string, error) {
	if b.spec.ImportSession == nil {
		return "", &agentcli.UnsupportedError{Backend: b.spec.Name, Feature: "portable sessions"}
	}
	m, files, err := readSessionArchive(archive)
	if err != nil {
		return "", &agentcli.RequestError{Backend: b.spec.Name, Field: "archive", Reason: err.Error()}
	}
	if m.Backend != b.spec.Name {
		return "", &agentcli.RequestError{Backend: b.spec.Name, Field: "archive",
			Reason: fmt.Sprintf("a session of backend %q, not %q", m.Backend, b.spec.Name)}
	}
	r, err := b.sessionRun(ctx, dir, m.SessionID)
	if err != nil {
		return "", err
	}
	defer r.Cleanup()
	for i := range files {
		files[i].Data = RewriteDir(files[i].Data, m.Dir, r.Dir)
	}
	id, err := b.spec.ImportSession(ctx, r, m.Dir, m.SessionID, files)
	if err != nil {
		return "", b.sessionErr(err)
	}
	return id, nil
}

// sessionRun prepares a Run (environment, directory, binary) for moving
// session id in dir, checked as a live session's request would be.
func (b *Backend) sessionRun(ctx context.Context, dir, id string) (*Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, &agentcli.CanceledError{Backend: b.spec.Name, Err: context.Cause(ctx)}
	}
	return b.prepareRun(&agentcli.Request{Dir: dir, SessionID: id, Permission: agentcli.PermissionBypass}, false, false)
}

// sessionErr returns err as it is when it is one of agentcli's (a
// session the CLI does not have matches agentcli.ErrSessionNotFound), and
// any other with its text redacted.
func (b *Backend) sessionErr(err error) error {
	for _, s := range []error{agentcli.ErrSessionNotFound, agentcli.ErrBadRequest, agentcli.ErrUnsupported, agentcli.ErrCanceled} {
		if errors.Is(err, s) {
			return err
		}
	}
	return fmt.Errorf("%s: %s", b.spec.Name, Redact(err.Error()))
}

// SessionNotFound returns the error of a session id the CLI has no
// files of: it matches agentcli.ErrSessionNotFound.
func SessionNotFound(backend, id string) error {
	return fmt.Errorf("%s: no session %s in the CLI's state: %w", backend, id, agentcli.ErrSessionNotFound)
}

// checkSessionName refuses a file name that could leave its root.
func checkSessionName(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || !utf8.ValidString(name) ||
		path.Clean(name) != name || name == "." || strings.HasPrefix(name, "../") || name == ".." {
		return fmt.Errorf("bad session file name %q", name)
	}
	return nil
}

// readSessionArchive reads an archive made by ExportSession.
func readSessionArchive(archive []byte) (*sessionManifest, []SessionFile, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, nil, fmt.Errorf("not a session archive: %v", err)
	}
	tr := tar.NewReader(zr)
	var m *sessionManifest
	var files []SessionFile
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("not a session archive: %v", err)
		}
		if h.Typeflag != tar.TypeReg {
			return nil, nil, fmt.Errorf("entry %q is not a regular file", h.Name)
		}
		if total += h.Size; h.Size < 0 || total > MaxSessionArchive || len(files) >= maxSessionFiles {
			return nil, nil, fmt.Errorf("more than %d bytes or %d files", MaxSessionArchive, maxSessionFiles)
		}
		data, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return nil, nil, fmt.Errorf("reading %q: %v", h.Name, err)
		}
		switch {
		case m == nil && h.Name == sessionManifestName:
			m = &sessionManifest{}
			if err := json.Unmarshal(data, m); err != nil || m.Format != sessionFormat {
				return nil, nil, errors.New("no agentcli session manifest")
			}
			if m.Version != sessionVersion {
				return nil, nil, fmt.Errorf("session archive version %d; this agentcli reads %d", m.Version, sessionVersion)
			}
		case m != nil && strings.HasPrefix(h.Name, "files/"):
			name := strings.TrimPrefix(h.Name, "files/")
			if err := checkSessionName(name); err != nil {
				return nil, nil, err
			}
			files = append(files, SessionFile{Name: name, Data: data})
		default:
			return nil, nil, fmt.Errorf("unexpected entry %q", h.Name)
		}
	}
	if m == nil {
		return nil, nil, errors.New("no agentcli session manifest")
	}
	if m.SessionID == "" || !filepath.IsAbs(m.Dir) {
		return nil, nil, errors.New("the manifest names no session or no absolute directory")
	}
	return m, files, nil
}

// RewriteDir returns data with every occurrence of the absolute path old
// (as a whole path: not followed by a character that would continue a file
// name) replaced by new, also in its JSON-escaped form. A session's files
// name the directory it ran in (each message's cwd, say); moved to
// another directory, they must name that one.
func RewriteDir(data []byte, old, new string) []byte {
	if old == "" || old == new {
		return data
	}
	data = replacePath(data, old, new)
	jo, _ := json.Marshal(old)
	jn, _ := json.Marshal(new)
	if eo := string(jo[1 : len(jo)-1]); eo != old {
		data = replacePath(data, eo, string(jn[1:len(jn)-1]))
	}
	return data
}

// replacePath replaces old by new in data where old is not followed by a
// character that continues a path element.
func replacePath(data []byte, old, new string) []byte {
	var out []byte
	rest := data
	for {
		i := bytes.Index(rest, []byte(old))
		if i < 0 {
			break
		}
		end := i + len(old)
		if end < len(rest) && continuesName(rest[end]) {
			out = append(out, rest[:end]...)
			rest = rest[end:]
			continue
		}
		out = append(out, rest[:i]...)
		out = append(out, new...)
		rest = rest[end:]
	}
	if out == nil {
		return data
	}
	return append(out, rest...)
}

// continuesName reports whether c after a path would make it a longer
// file name.
func continuesName(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c >= 0x80
}

// ReadSessionFile reads the file path as a SessionFile named name.
func ReadSessionFile(path, name string) (SessionFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return SessionFile{}, err
	}
	return SessionFile{Name: name, Data: data}, nil
}

// WriteSessionFile writes f under root, creating its directories (0700),
// private to the user (0600), replacing a file of that name.
func WriteSessionFile(root string, f SessionFile) error {
	if err := checkSessionName(f.Name); err != nil {
		return err
	}
	p := filepath.Join(root, filepath.FromSlash(f.Name))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp := p + ".agentcli-import"
	if err := os.WriteFile(tmp, f.Data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}
