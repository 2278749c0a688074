package qwen

// Session management, checked against qwen 0.24.4: a fork is
// `--resume=ID --fork-session` (a new session id, the history copied, the
// original left as it was), a caller-chosen id for a new session is
// `--session-id=ID` (a UUID; qwen refuses one that exists: "Session Id
// ... already exists"; agentcli refuses it first, an
// *agentcli.RequestError), in a run and a live session alike (both take
// buildArgs). Qwen refuses --session-id with --resume or --continue
// ("Cannot use --session-id with --continue or --resume"), so a fork
// cannot be given an id. Request.Continue is agentcli's (the newest
// session ListSessions finds, resumed by id), never qwen's --continue,
// which starts a new session where there is none.
//
// ListSessions reads the chats of the directory's project folder,
// BASE/projects/KEY/chats/ID.jsonl (see sessions.go), as qwen's own
// session list does: those whose first record names the directory as its
// cwd (two directories may share a KEY), titled by the last custom_title
// record (/rename, or qwen's own title) or else the first prompt, updated
// when the chat was last written.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// validateManage refuses what qwen's command line cannot combine.
func validateManage(req *agentcli.Request) error {
	if req.NewSessionID != "" && req.ForkSession {
		return &agentcli.UnsupportedError{Backend: Name, Feature: "a caller-chosen id for a fork",
			Reason: "qwen 0.24.4 refuses --session-id with --resume (\"Cannot use --session-id with --continue or --resume\")"}
	}
	return nil
}

// checkNewID refuses a caller-chosen id that names a chat qwen keeps (qwen
// would exit 1: "Session Id ... already exists"), before qwen starts.
func checkNewID(r *driver.Run) error {
	id := r.Req.NewSessionID
	if id == "" {
		return nil
	}
	if m, _ := filepath.Glob(filepath.Join(runtimeDir(r), "projects", "*", "chats", id+".jsonl")); len(m) > 0 {
		return &agentcli.RequestError{Backend: Name, Field: "NewSessionID", Reason: "names a session qwen already keeps"}
	}
	return nil
}

// listSessions lists the chats of r.Dir.
func listSessions(ctx context.Context, r *driver.Run) ([]agentcli.SessionInfo, error) {
	dir := filepath.Join(runtimeDir(r), "projects", projectKey(r.Dir), "chats")
	return driver.ListJSONL(ctx, dir, func(path, _ string) (string, bool, error) {
		c, err := readChat(path)
		if err != nil || filepath.Clean(c.cwd) != filepath.Clean(r.Dir) {
			return "", false, err // or another directory's of the same key
		}
		if c.custom != "" {
			return c.custom, true, nil
		}
		return c.first, true, nil
	})
}

// chatInfo is what ListSessions reads of a chat.
type chatInfo struct {
	cwd    string // the first record's
	first  string // the first prompt
	custom string // the last custom title
}

// maxChatLine bounds a chat line read for a title; longer lines (a tool's
// whole output) are skipped.
const maxChatLine = 1 << 20

// readChat reads the chat file p for ListSessions.
func readChat(p string) (chatInfo, error) {
	var c chatInfo
	f, err := os.Open(p)
	if err != nil {
		return c, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 0; ; n++ {
		line, err := readLine(br, maxChatLine)
		if len(line) > 0 && (n == 0 || c.first == "" || bytes.Contains(line, []byte(`"custom_title"`))) {
			var rec struct {
				Type       string `json:"type"`
				Subtype    string `json:"subtype"`
				Provenance string `json:"provenance"`
				Cwd        string `json:"cwd"`
				Message    struct {
					Role  string `json:"role"`
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"message"`
				Payload struct {
					CustomTitle string `json:"customTitle"`
				} `json:"systemPayload"`
			}
			if json.Unmarshal(line, &rec) == nil {
				if c.cwd == "" {
					c.cwd = rec.Cwd
				}
				switch {
				case rec.Type == "system" && rec.Subtype == "custom_title" && rec.Payload.CustomTitle != "":
					c.custom = rec.Payload.CustomTitle
				case c.first == "" && rec.Type == "user" && rec.Message.Role == "user" &&
					(rec.Provenance == "" || rec.Provenance == "real_user"):
					for _, p := range rec.Message.Parts {
						if p.Text != "" {
							c.first = p.Text
							break
						}
					}
				}
			}
		}
		if err == io.EOF {
			return c, nil
		}
		if err != nil {
			return c, err
		}
	}
}

// readLine returns the next line of br without its newline, or nil for a
// line longer than limit (which is skipped).
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if limit >= 0 && len(line)+len(chunk) <= limit {
			line = append(line, chunk...)
		} else {
			line, limit = nil, -1 // skip the rest of this line
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if limit < 0 {
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}
