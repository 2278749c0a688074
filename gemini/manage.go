package gemini

// Session management, checked against gemini 0.61.0: a caller-chosen id
// is `--session-id=ID` (one-shot only: over ACP gemini ignores both the
// flag and session/new's _meta, and makes up its own); a fork of a session
// is `--session-file=CHAT`, which loads the history of the session's chat
// file into a new session; in a live session (ACP has no session/fork)
// the chat file is copied under a new id, named with the minute before
// the current one (see waitLoadable), and session/load loads the copy.
// ListSessions reads the chat files of the directory's project folder as
// `gemini --list-sessions` does: sessions with a message, but sub-agents',
// titled by gemini's summary or else the first prompt, updated at their
// lastUpdated time.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// findChat returns the chat file of session id: in r.Dir's project
// folder, or else in any; the newest when several name it.
func findChat(r *driver.Run, id string) (string, error) {
	if !driver.IsUUID(id) {
		return "", &agentcli.RequestError{Backend: Name, Field: "SessionID",
			Reason: "ForkSession forks a session named by its UUID (or the newest one, with Continue)"}
	}
	root, err := geminiRoot(r)
	if err != nil {
		return "", err
	}
	pattern := "session-*-" + strings.ToLower(id[:8]) + ".jsonl"
	var candidates []string
	if slug := projectSlugs(root)[r.Dir]; slug != "" {
		candidates, _ = filepath.Glob(filepath.Join(root, "tmp", slug, "chats", pattern))
	}
	if len(candidates) == 0 {
		candidates, _ = filepath.Glob(filepath.Join(root, "tmp", "*", "chats", pattern))
	}
	var best string
	var bestTime time.Time
	for _, p := range candidates {
		c, err := readChat(p)
		if err != nil || !strings.EqualFold(c.id, id) {
			continue
		}
		if best == "" || c.updated.After(bestTime) {
			best, bestTime = p, c.updated
		}
	}
	if best == "" {
		return "", driver.SessionNotFound(Name, id)
	}
	return best, nil
}

// forkFile returns the chat file a one-shot fork of session id loads.
func forkFile(r *driver.Run, id string) (string, error) { return findChat(r, id) }

// forkChat copies the chat of session id to a new session of a random id,
// in the same folder, and returns the new id.
func forkChat(r *driver.Run, id string) (string, error) {
	p, err := findChat(r, id)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	nid := newUUID()
	data = bytes.ReplaceAll(data, []byte(strings.ToLower(id)), []byte(nid))
	// A chat loaded in the minute its name says has its history wiped
	// (see waitLoadable): the copy is named with the minute before.
	minute := time.Now().UTC().Add(-time.Minute).Format("2006-01-02T15-04")
	np := filepath.Join(filepath.Dir(p), "session-"+minute+"-"+nid[:8]+".jsonl")
	f, err := os.OpenFile(np, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(np)
		return "", err
	}
	return nid, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// listSessions reads the chats of r.Dir's project folder.
func listSessions(ctx context.Context, r *driver.Run) ([]agentcli.SessionInfo, error) {
	root, err := geminiRoot(r)
	if err != nil {
		return nil, err
	}
	slug := projectSlugs(root)[r.Dir]
	if slug == "" {
		return nil, nil // gemini never ran there
	}
	files, _ := filepath.Glob(filepath.Join(root, "tmp", slug, "chats", "session-*.jsonl"))
	seen := map[string]int{}
	var out []agentcli.SessionInfo
	for _, p := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := readChat(p)
		if err != nil || c.id == "" || !c.resumable || c.kind == "subagent" {
			continue
		}
		title := c.summary
		if title == "" {
			title = c.first
		}
		s := agentcli.SessionInfo{ID: c.id, Title: strings.TrimSpace(title), Updated: c.updated}
		if i, ok := seen[c.id]; ok { // a session gemini keeps in two files: the newer
			if s.Updated.After(out[i].Updated) {
				out[i] = s
			}
			continue
		}
		seen[c.id] = len(out)
		out = append(out, s)
	}
	return out, nil
}

// chat is what listSessions reads of a chat file.
type chat struct {
	id, kind, summary, first string
	updated                  time.Time
	resumable                bool
}

// maxChatLine bounds a chat line read; longer lines are skipped.
const maxChatLine = 4 << 20

// readChat reads the chat file at p: its header line, the metadata
// updates ({"$set": ...}) and the messages.
func readChat(p string) (*chat, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &chat{}
	var updated string
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 0; ; n++ {
		line, err := chatLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			var rec struct {
				SessionID   string          `json:"sessionId"`
				Kind        string          `json:"kind"`
				Summary     string          `json:"summary"`
				LastUpdated string          `json:"lastUpdated"`
				Set         json.RawMessage `json:"$set"`
				Type        string          `json:"type"`
				Content     json.RawMessage `json:"content"`
			}
			if json.Unmarshal(line, &rec) == nil {
				if len(rec.Set) > 0 {
					var set struct {
						Summary     *string `json:"summary"`
						LastUpdated *string `json:"lastUpdated"`
					}
					if json.Unmarshal(rec.Set, &set) == nil {
						if set.Summary != nil {
							c.summary = *set.Summary
						}
						if set.LastUpdated != nil {
							updated = *set.LastUpdated
						}
					}
				}
				if c.id == "" && rec.SessionID != "" {
					c.id, c.kind, c.summary = rec.SessionID, rec.Kind, rec.Summary
				}
				if rec.LastUpdated != "" {
					updated = rec.LastUpdated
				}
				switch rec.Type {
				case "user":
					// gemini's own context and commands are not the
					// user's messages (isIgnoredUserContent).
					text := contentText(rec.Content)
					if t := strings.TrimSpace(text); t != "" && !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "?") &&
						!strings.HasPrefix(t, "<session_context>") && !strings.HasPrefix(t, "<hook_context>") {
						c.resumable = true
						if c.first == "" {
							c.first = text
						}
					}
				case "gemini":
					c.resumable = true
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, updated); err == nil {
		c.updated = t
	} else if fi, err := f.Stat(); err == nil {
		c.updated = fi.ModTime()
	}
	return c, nil
}

// chatLine returns the next line of br, or nil for one longer than
// maxChatLine (skipped).
func chatLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	skip := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !skip && len(line)+len(chunk) <= maxChatLine {
			line = append(line, chunk...)
		} else {
			skip, line = true, nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

// contentText returns the text of a message's content: a string, or the
// text parts of a list.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
