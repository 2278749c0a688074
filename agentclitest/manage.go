package agentclitest

import (
	"context"
	"slices"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// ListSessions implements agentcli.ListSessions for a scripted Backend:
// it returns ListedSessions, newest first, whatever dir is, and fails with
// an *agentcli.UnsupportedError when Caps are set and say the backend
// cannot list (Caps.ListSessions false).
func (b *Backend) ListSessions(ctx context.Context, dir string) ([]agentcli.SessionInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, &agentcli.CanceledError{Backend: b.Name(), Err: context.Cause(ctx)}
	}
	if !b.caps().ListSessions {
		return nil, &agentcli.UnsupportedError{Backend: b.Name(), Feature: "listing sessions"}
	}
	return b.listed(), nil
}

// listed returns ListedSessions, newest first.
func (b *Backend) listed() []agentcli.SessionInfo {
	b.mu.Lock()
	list := slices.Clone(b.ListedSessions)
	b.mu.Unlock()
	driver.SortSessions(list)
	return list
}

// continued returns the session Request.Continue resumes, as a real
// backend finds it: the newest of ListedSessions, or an error matching
// agentcli.ErrNoSession when there is none. It returns "" for a request
// without Continue.
func (b *Backend) continued(req *agentcli.Request) (string, error) {
	if !req.Continue {
		return "", nil
	}
	list := b.listed()
	if len(list) == 0 {
		dir := req.Dir
		if dir == "" {
			dir = "."
		}
		return "", driver.NoSession(b.Name(), dir)
	}
	return list[0].ID, nil
}
