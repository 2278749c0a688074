package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// archiveBackend is a scripted backend with agentcli's portable sessions
// (the ExportSession and ImportSession methods agentcli.ExportSession and
// ImportSession look for): its "archive" of a session is fixed bytes, and
// it records what it was asked to import.
type archiveBackend struct {
	*agentclitest.Backend
	archive []byte // what ExportSession returns

	mu       sync.Mutex
	exported []string // "dir|id"
	imported []string // "dir|archive"
}

func newArchiveBackend(archive []byte) *archiveBackend {
	return &archiveBackend{Backend: scripted(agentclitest.Reply("ok", "sess-1"), agentcli.Capabilities{PortableSessions: true}), archive: archive}
}

func (a *archiveBackend) ExportSession(ctx context.Context, dir, id string) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.exported = append(a.exported, dir+"|"+id)
	if id == "unknown" {
		return nil, &agentcli.ExitError{Backend: a.Name(), Kind: agentcli.ErrSessionNotFound}
	}
	return bytes.Clone(a.archive), nil
}

func (a *archiveBackend) ImportSession(ctx context.Context, dir string, archive []byte) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.imported = append(a.imported, dir+"|"+string(archive))
	return "imported-" + string(archive[:min(len(archive), 4)]), nil
}

func (a *archiveBackend) calls() (exported, imported []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.exported...), append([]string(nil), a.imported...)
}

// TestPortableSessionsPorter: PortableSessions hands agentcli's archive
// over as it is, both ways, with the directory and session; refuses an
// archive over its bound both ways (without calling ImportSession on a
// partial one); passes on a read error; and reports a backend without
// portable sessions as unsupported.
func TestPortableSessionsPorter(t *testing.T) {
	ctx := context.Background()
	b := newArchiveBackend([]byte("0123456789"))
	p := PortableSessions{MaxArchiveBytes: 10}

	var buf bytes.Buffer
	if err := p.Export(ctx, b, "/w/a", "s1", &buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "0123456789" {
		t.Errorf("exported %q", buf.String())
	}
	id, err := p.Import(ctx, b, "/w/b", strings.NewReader("0123456789"))
	if err != nil || id != "imported-0123" {
		t.Fatalf("Import = %q, %v", id, err)
	}
	if err := p.Export(ctx, b, "/w/a", "unknown", io.Discard); !errors.Is(err, agentcli.ErrSessionNotFound) {
		t.Errorf("Export of an unknown session: %v", err)
	}

	// One byte over, both ways.
	big := newArchiveBackend([]byte("0123456789X"))
	if err := p.Export(ctx, big, "/w/a", "s1", io.Discard); !errors.Is(err, ErrArchiveTooLarge) {
		t.Errorf("Export of 11 bytes with a bound of 10: %v", err)
	}
	if _, err := p.Import(ctx, b, "/w/b", strings.NewReader("0123456789X")); !errors.Is(err, ErrArchiveTooLarge) {
		t.Errorf("Import of 11 bytes with a bound of 10: %v", err)
	}
	broken := errors.New("store read failed")
	if _, err := p.Import(ctx, b, "/w/b", iotest.ErrReader(broken)); !errors.Is(err, broken) {
		t.Errorf("Import from a failing reader: %v", err)
	}
	exported, imported := b.calls()
	if want := []string{"/w/a|s1", "/w/a|unknown"}; strings.Join(exported, " ") != strings.Join(want, " ") {
		t.Errorf("ExportSession calls %q, want %q", exported, want)
	}
	if want := []string{"/w/b|0123456789"}; strings.Join(imported, " ") != strings.Join(want, " ") {
		t.Errorf("ImportSession calls %q, want %q", imported, want)
	}

	// The default bound takes a large archive.
	large := bytes.Repeat([]byte("x"), 1<<20)
	if id, err := (PortableSessions{}).Import(ctx, newArchiveBackend(nil), "", bytes.NewReader(large)); err != nil || id != "imported-xxxx" {
		t.Errorf("Import of 1 MiB with the default bound: %q, %v", id, err)
	}

	var ue *agentcli.UnsupportedError
	plain := scripted(agentclitest.Reply("ok", "s"), agentcli.Capabilities{})
	if err := p.Export(ctx, plain, "", "s1", io.Discard); !errors.As(err, &ue) {
		t.Errorf("Export on a backend without portable sessions: %v", err)
	}
	if _, err := p.Import(ctx, plain, "", strings.NewReader("x")); !errors.As(err, &ue) {
		t.Errorf("Import on a backend without portable sessions: %v", err)
	}
}

// TestLimitReader: the worker's reader of an archive passes an archive
// of exactly its bound and fails, instead of truncating, one byte more;
// it remembers the store's own read errors (retried) apart from that.
func TestLimitReader(t *testing.T) {
	got, err := io.ReadAll(&limitReader{r: strings.NewReader("12345"), n: 5})
	if err != nil || string(got) != "12345" {
		t.Errorf("at the bound: %q, %v", got, err)
	}
	lr := &limitReader{r: strings.NewReader("123456"), n: 5}
	if _, err := io.ReadAll(lr); !errors.Is(err, ErrArchiveTooLarge) || lr.err != nil {
		t.Errorf("over the bound: %v (store error %v)", err, lr.err)
	}
	broken := errors.New("connection lost")
	lr = &limitReader{r: io.MultiReader(strings.NewReader("12"), iotest.ErrReader(broken)), n: 5}
	if _, err := io.ReadAll(lr); !errors.Is(err, broken) || !errors.Is(lr.err, broken) {
		t.Errorf("a failing store: %v (store error %v)", err, lr.err)
	}
}

// TestPortableSessionsThroughThePool: a worker with PortableSessions saves
// each run's session to the object store as agentcli.ExportSession
// archived it, and another worker resuming it imports those bytes, in its
// own directory. An archive already in the store over a worker's
// WorkerOptions.MaxArchiveBytes is refused whole (the run fails with
// ErrArchiveTooLarge), never handed to ImportSession truncated; one over
// it is not saved (the run's caller gets a *SessionNotSavedError matching
// ErrArchiveTooLarge).
func TestPortableSessionsThroughThePool(t *testing.T) {
	n := startNATS(t)
	ctx := context.Background()
	dirs := map[string]string{"A": t.TempDir(), "B": t.TempDir(), "C": t.TempDir()}
	wo := func(id string, max int64) *WorkerOptions {
		o := testWorkerOptions()
		o.ID, o.Sessions, o.MaxArchiveBytes = id, PortableSessions{}, max
		o.MapDir = func(string) (string, error) { return dirs[id], nil }
		return o
	}
	pool := newPoolBackend(t, n, nil)
	a := newArchiveBackend([]byte("ARCHIVE-OF-A"))
	wa := startWorker(t, n, a, wo("A", 0))
	res, err := pool.Run(ctx, &agentcli.Request{Prompt: "one"})
	if err != nil || res.SessionID != "sess-1" {
		t.Fatalf("run on A: %+v, %v", res, err)
	}
	if err := wa.kill(); err == nil {
		t.Fatal("killed worker returned nil")
	}

	b := newArchiveBackend([]byte("ARCHIVE-OF-B"))
	wb := startWorker(t, n, b, wo("B", 12))
	if _, err := pool.Run(ctx, &agentcli.Request{Prompt: "two", SessionID: res.SessionID}); err != nil {
		t.Fatalf("run on B: %v", err)
	}
	if exported, _ := a.calls(); strings.Join(exported, " ") != dirs["A"]+"|sess-1" {
		t.Errorf("A exported %q", exported)
	}
	exported, imported := b.calls()
	if strings.Join(imported, " ") != dirs["B"]+"|ARCHIVE-OF-A" {
		t.Errorf("B imported %q, want A's archive in B's directory", imported)
	}
	// B saved the session its run reported.
	if strings.Join(exported, " ") != dirs["B"]+"|sess-1" {
		t.Errorf("B exported %q", exported)
	}
	if err := wb.kill(); err == nil {
		t.Fatal("killed worker returned nil")
	}

	c := newArchiveBackend([]byte("ARCHIVE-OF-C"))
	startWorker(t, n, c, wo("C", 11))
	_, err = pool.Run(ctx, &agentcli.Request{Prompt: "three", SessionID: res.SessionID})
	if !errors.Is(err, ErrArchiveTooLarge) {
		t.Errorf("resuming a 12-byte archive on a worker bound to 11: %v, want ErrArchiveTooLarge", err)
	}
	if _, imported := c.calls(); len(imported) != 0 {
		t.Errorf("C imported %q, an archive over its bound", imported)
	}
	_, err = pool.Run(ctx, &agentcli.Request{Prompt: "four"})
	var nse *SessionNotSavedError
	if !errors.As(err, &nse) || !errors.Is(err, ErrArchiveTooLarge) {
		t.Errorf("saving a 12-byte archive on a worker bound to 11: %v, want a *SessionNotSavedError matching ErrArchiveTooLarge", err)
	}
}
