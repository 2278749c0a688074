package codex

// Listing sessions (agentcli.ListSessions), checked against codex
// 0.169.0: a short-lived `codex app-server` answers thread/list with the
// directory as its cwd filter, every source kind but sub-agents' (without
// sourceKinds codex lists only its interactive threads, leaving out those
// of `codex exec` and of app-server clients) and every model provider,
// sorted by update time, page by page. A thread's title is its name when
// it has one, else its preview (the first user message).

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
)

// listSourceKinds are the thread sources ListSessions lists: every kind
// codex 0.169.0 has but its sub-agents' threads.
var listSourceKinds = []string{"cli", "vscode", "exec", "appServer", "unknown"}

// maxListPages bounds the pages of thread/list read (of listPageSize
// threads each).
const (
	maxListPages = 100
	listPageSize = 100
)

// listSessions asks a short-lived app-server for r.Dir's threads.
func listSessions(ctx context.Context, r *driver.Run) ([]agentcli.SessionInfo, error) {
	var out []agentcli.SessionInfo
	err := live.Query(ctx, live.Config{
		Backend: Name,
		Path:    r.Path,
		Options: *r.Options,
		Logger:  r.Logger,
		Args:    []string{"app-server"},
		Env:     r.Env,
		Dir:     r.Dir,
		Errors:  r.Errors(),
	}, true, func(ctx context.Context, rpc *live.RPC) error {
		if _, err := rpc.Call(ctx, "initialize", map[string]any{
			"clientInfo": map[string]string{"name": "agentcli", "title": "agentcli", "version": "0"},
		}); err != nil {
			return err
		}
		if err := rpc.Notify(ctx, "initialized", nil); err != nil {
			return err
		}
		var cursor *string
		for range maxListPages {
			params := map[string]any{"cwd": r.Dir, "sourceKinds": listSourceKinds, "modelProviders": []string{},
				"sortKey": "updated_at", "limit": listPageSize}
			if cursor != nil {
				params["cursor"] = *cursor
			}
			raw, err := rpc.Call(ctx, "thread/list", params)
			if err != nil {
				return err
			}
			var page struct {
				Data []struct {
					ID        string  `json:"id"`
					Name      *string `json:"name"`
					Preview   string  `json:"preview"`
					UpdatedAt int64   `json:"updatedAt"`
				} `json:"data"`
				NextCursor *string `json:"nextCursor"`
			}
			if err := json.Unmarshal(raw, &page); err != nil {
				return &agentcli.ProtocolError{Backend: Name, Method: "thread/list", Message: "an answer that is not a thread list"}
			}
			for _, t := range page.Data {
				if t.ID == "" {
					continue
				}
				title := t.Preview
				if t.Name != nil && *t.Name != "" {
					title = *t.Name
				}
				out = append(out, agentcli.SessionInfo{ID: t.ID, Title: title, Updated: time.Unix(t.UpdatedAt, 0)})
			}
			if page.NextCursor == nil || *page.NextCursor == "" || len(page.Data) == 0 {
				return nil
			}
			cursor = page.NextCursor
		}
		return nil
	})
	return out, err
}
