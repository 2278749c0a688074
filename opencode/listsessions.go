package opencode

// Listing sessions (agentcli.ListSessions), checked against opencode
// 1.18.33: `opencode session list --format json` prints every session of
// the database as [{id, title, updated, created, projectId, directory}]
// (times in milliseconds), newest first; the directory's are those whose
// directory is it. opencode titles a session itself (a short summary
// its title model writes, or the prompt cut short).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// listTimeout bounds opencode's session list command.
const listTimeout = 2 * time.Minute

// maxListOutput bounds what the list command may print: 64 MiB.
const maxListOutput = 64 << 20

// listSessions runs `opencode session list --format json` and keeps
// r.Dir's sessions.
func listSessions(ctx context.Context, r *driver.Run) ([]agentcli.SessionInfo, error) {
	out, err := driver.OutputAll(ctx, r, listTimeout, maxListOutput, "session", "list", "--format", "json")
	if err != nil {
		return nil, err
	}
	return parseSessionList(out, r.Dir)
}

// parseSessionList reads the output of `opencode session list --format
// json` and returns the sessions whose directory is dir.
func parseSessionList(out []byte, dir string) ([]agentcli.SessionInfo, error) {
	// The list starts a line (opencode may print notes, with colour
	// codes, before it).
	i, pos := -1, 0
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '[' {
			i = pos + len(line) - len(t)
			break
		}
		pos += len(line)
	}
	if i < 0 {
		if len(bytes.TrimSpace(out)) == 0 {
			return nil, nil // no session at all
		}
		return nil, fmt.Errorf("opencode session list printed no JSON list")
	}
	var list []struct {
		ID        string `json:"id"`
		Title     string `json:"title"`
		Updated   int64  `json:"updated"`
		Directory string `json:"directory"`
	}
	if err := json.NewDecoder(bytes.NewReader(out[i:])).Decode(&list); err != nil {
		return nil, fmt.Errorf("opencode session list: %v", err)
	}
	var res []agentcli.SessionInfo
	for _, s := range list {
		if s.ID == "" || filepath.Clean(s.Directory) != filepath.Clean(dir) {
			continue
		}
		res = append(res, agentcli.SessionInfo{ID: s.ID, Title: s.Title, Updated: time.UnixMilli(s.Updated)})
	}
	return res, nil
}
