package driver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
)

// checkManage checks the session-management fields of req
// (ForkSession, Continue, NewSessionID) for a backend named backend with
// capabilities caps, in a live session (live) or a one-shot run: fields
// that contradict each other are an *agentcli.RequestError, a feature the
// backend lacks in that mode an *agentcli.UnsupportedError.
func checkManage(backend string, caps agentcli.Capabilities, req *agentcli.Request, live bool) error {
	bad := func(field, reason string) error {
		return &agentcli.RequestError{Backend: backend, Field: field, Reason: reason}
	}
	switch {
	case req.Continue && req.SessionID != "":
		return bad("Continue", "conflicts with SessionID: continue the newest session of Dir, or resume SessionID, not both")
	case req.ForkSession && req.SessionID == "" && !req.Continue:
		return bad("ForkSession", "needs the session to fork: SessionID or Continue")
	case req.NewSessionID != "" && (req.SessionID != "" || req.Continue) && !req.ForkSession:
		return bad("NewSessionID", "names a new session; a resumed one (SessionID, Continue) keeps its id unless ForkSession forks it")
	case req.NewSessionID != "" && !IsUUID(req.NewSessionID):
		return bad("NewSessionID", "not a UUID (8-4-4-4-12 hexadecimal digits)")
	}
	in := func(m agentcli.SessionModes) bool {
		if live {
			return m.Live
		}
		return m.OneShot
	}
	mode := "one-shot runs"
	if live {
		mode = "live sessions"
	}
	unsup := func(feature string) error {
		return &agentcli.UnsupportedError{Backend: backend, Feature: feature + " in " + mode}
	}
	switch {
	case req.ForkSession && !in(caps.ForkSession):
		return unsup("forking a session")
	case req.Continue && !in(caps.ContinueSession):
		return unsup("continuing the newest session")
	case req.NewSessionID != "" && !in(caps.NewSessionID):
		return unsup("a caller-chosen session id")
	}
	return nil
}

// CheckLiveManage is checkManage for a one-shot run that goes through a
// live session: the session-management features must work there.
func CheckLiveManage(backend string, caps agentcli.Capabilities, req *agentcli.Request) error {
	return checkManage(backend, caps, req, true)
}

// ListSessions implements agentcli.ListSessions for the Spec's
// ListSessions: the sessions of dir, newest first.
func (b *Backend) ListSessions(ctx context.Context, dir string) ([]agentcli.SessionInfo, error) {
	if b.spec.ListSessions == nil {
		return nil, &agentcli.UnsupportedError{Backend: b.spec.Name, Feature: "listing sessions"}
	}
	if err := ctx.Err(); err != nil {
		return nil, &agentcli.CanceledError{Backend: b.spec.Name, Err: context.Cause(ctx)}
	}
	r, err := b.prepareRun(&agentcli.Request{Dir: dir, Permission: agentcli.PermissionBypass}, false, false)
	if err != nil {
		return nil, err
	}
	defer r.Cleanup()
	return b.listSessions(ctx, r)
}

// listSessions lists the sessions of r.Dir, newest first (ties by id).
func (b *Backend) listSessions(ctx context.Context, r *Run) ([]agentcli.SessionInfo, error) {
	list, err := b.spec.ListSessions(ctx, r)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &agentcli.CanceledError{Backend: b.spec.Name, Err: context.Cause(ctx)}
		}
		return nil, b.sessionErr(err)
	}
	SortSessions(list)
	return list, nil
}

// SortSessions sorts list newest first, sessions updated at the same
// time by id.
func SortSessions(list []agentcli.SessionInfo) {
	slices.SortStableFunc(list, func(a, b agentcli.SessionInfo) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// NoSession returns the error of Request.Continue in a directory with no
// session: it matches agentcli.ErrNoSession and ErrSessionNotFound.
func NoSession(backend, dir string) error {
	return fmt.Errorf("%s: no session in %s: %w (%w)", backend, dir, agentcli.ErrNoSession, agentcli.ErrSessionNotFound)
}

// resolveContinue turns Request.Continue into the SessionID of the newest
// session of r.Dir (ListSessions), so that the backend resumes (or forks)
// exactly that session, and fails with NoSession when there is none. Each
// CLI's own "continue" would silently start a new session then, and a
// session made between a check and the CLI's own choice could be picked
// instead of the one listed: resolving the id here leaves neither gap.
func (b *Backend) resolveContinue(ctx context.Context, r *Run) error {
	if !r.Req.Continue {
		return nil
	}
	if b.spec.ListSessions == nil {
		return &agentcli.UnsupportedError{Backend: b.spec.Name, Feature: "continuing the newest session"}
	}
	list, err := b.listSessions(ctx, r)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return NoSession(b.spec.Name, r.Dir)
	}
	c := *r.Req
	c.Continue = false
	c.SessionID = list[0].ID
	r.Req = &c
	return nil
}

// interactiveManage refuses the session-management fields in the CLI's
// own interactive UI, which agentcli does not carry them to.
func interactiveManage(backend string, req *agentcli.Request) error {
	if req.ForkSession || req.Continue || req.NewSessionID != "" {
		return &agentcli.UnsupportedError{Backend: backend, Feature: "ForkSession, Continue and NewSessionID in the interactive UI"}
	}
	return nil
}

// ListJSONL lists the sessions kept as dir/ID.jsonl (ID a UUID), as
// claude, qwen and droid keep theirs: read returns what a session's file
// (path) says of it, and false for a file that is not one of the
// directory's sessions (another directory's of the same key, a file of
// another kind); a file removed meanwhile is passed over, and a directory
// that does not exist has none. Updated is the file's modification time.
// The list is in the directory's order (see SortSessions).
func ListJSONL(ctx context.Context, dir string, read func(path, id string) (title string, ok bool, err error)) ([]agentcli.SessionInfo, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []agentcli.SessionInfo
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() || !IsUUID(id) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		title, ok, err := read(filepath.Join(dir, e.Name()), id)
		if errors.Is(err, fs.ErrNotExist) || err == nil && !ok {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, agentcli.SessionInfo{ID: id, Title: title, Updated: fi.ModTime()})
	}
	return out, nil
}
