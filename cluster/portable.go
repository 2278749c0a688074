package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentcli/agentcli"
)

// PortableSessions is the SessionPorter built on agentcli's portable
// sessions: Export writes agentcli.ExportSession's archive, Import hands
// the archive it reads to agentcli.ImportSession. Both find the CLI's
// files in the CLI's home as a run of the worker's backend would use it:
// the backend's Options.Env over the worker's environment (a
// Request.Env that moves the CLI's home elsewhere is not seen). Import
// rewrites the directory the session ran in to the directory of the run
// that resumes it (Request.Dir, after WorkerOptions.MapDir), so workers
// need not mount the work at the same path.
//
// The zero value is ready to use; it is safe for concurrent use. The
// backend must have Capabilities().PortableSessions; with one that does
// not, every save fails with an *agentcli.UnsupportedError (reported to
// the caller as a *SessionNotSavedError).
//
//	w, _ := cluster.NewWorker(nc, b, &cluster.WorkerOptions{Sessions: cluster.PortableSessions{}})
type PortableSessions struct {
	// MaxArchiveBytes bounds one archive, compressed: Export refuses to
	// write a larger one and Import to read one, with an error matching
	// ErrArchiveTooLarge. Each archive is held in memory while it is
	// exported or imported, once per run doing so. Zero means 256 MiB.
	// (agentcli.ImportSession bounds what the archive unpacks to on its
	// own: 1 GiB of files.)
	MaxArchiveBytes int64
}

var _ SessionPorter = PortableSessions{}

// ErrArchiveTooLarge: a session archive is larger than the bound of
// WorkerOptions.MaxArchiveBytes or PortableSessions.MaxArchiveBytes.
var ErrArchiveTooLarge = errors.New("session archive too large")

func (p PortableSessions) limit() int64 {
	if p.MaxArchiveBytes <= 0 {
		return 256 << 20
	}
	return p.MaxArchiveBytes
}

// Export implements SessionPorter: it writes the archive of session id,
// which b ran in dir, to w. A session b's CLI has no files of fails with
// an error matching agentcli.ErrSessionNotFound. It blocks until the
// archive is written.
func (p PortableSessions) Export(ctx context.Context, b agentcli.Backend, dir, id string, w io.Writer) error {
	archive, err := agentcli.ExportSession(ctx, b, dir, id)
	if err != nil {
		return err
	}
	if n := int64(len(archive)); n > p.limit() {
		return fmt.Errorf("exporting session %s: %w: %d bytes, over %d", id, ErrArchiveTooLarge, n, p.limit())
	}
	_, err = w.Write(archive)
	return err
}

// Import implements SessionPorter: it reads an archive from r, at most
// MaxArchiveBytes of it, and restores it so that b, run in dir, resumes
// the session; it returns the session id to resume. An archive that is not
// one of b's backend is an *agentcli.RequestError naming "archive". It
// blocks until the files are in place.
func (p PortableSessions) Import(ctx context.Context, b agentcli.Backend, dir string, r io.Reader) (string, error) {
	limit := p.limit()
	archive, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return "", fmt.Errorf("reading the session archive: %w", err)
	}
	if int64(len(archive)) > limit {
		return "", fmt.Errorf("importing a session: %w: over %d bytes", ErrArchiveTooLarge, limit)
	}
	return agentcli.ImportSession(ctx, b, dir, archive)
}
