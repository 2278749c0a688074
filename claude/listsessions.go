package claude

// Listing sessions (agentcli.ListSessions), checked against claude
// 2.1.330, which has no list command in its print mode: the sessions of
// a directory are the transcripts CONFIG/projects/KEY/ID.jsonl (see
// sessions.go). A session's title is the last custom-title line (from
// --name or /rename), else the last ai-title line, else its first prompt
// (the first text of the first user line, leaving out claude's own meta
// and command lines); it was updated when its file was last
// written.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// listSessions lists the transcripts under r.Dir's project key.
func listSessions(ctx context.Context, r *driver.Run) ([]agentcli.SessionInfo, error) {
	root, err := configDir(r)
	if err != nil {
		return nil, err
	}
	return driver.ListJSONL(ctx, filepath.Join(root, "projects", projectKey(r.Dir)), func(path, _ string) (string, bool, error) {
		title, err := transcriptTitle(path)
		return title, true, err
	})
}

// maxTitleLine bounds a transcript line read for a title; longer lines
// (a tool's whole output) are skipped.
const maxTitleLine = 1 << 20

// transcriptTitle returns the title of the transcript in file p.
func transcriptTitle(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var custom, ai, first string
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := readLine(br, maxTitleLine)
		if len(line) > 0 {
			switch {
			case bytes.Contains(line, []byte(`"custom-title"`)):
				var l struct {
					Type        string `json:"type"`
					CustomTitle string `json:"customTitle"`
				}
				if json.Unmarshal(line, &l) == nil && l.Type == "custom-title" && l.CustomTitle != "" {
					custom = l.CustomTitle
				}
			case bytes.Contains(line, []byte(`"ai-title"`)):
				var l struct {
					Type    string `json:"type"`
					AITitle string `json:"aiTitle"`
				}
				if json.Unmarshal(line, &l) == nil && l.Type == "ai-title" && l.AITitle != "" {
					ai = l.AITitle
				}
			case first == "" && bytes.Contains(line, []byte(`"user"`)):
				first = firstPrompt(line)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	switch {
	case custom != "":
		return custom, nil
	case ai != "":
		return ai, nil
	}
	return first, nil
}

// readLine returns the next line of br without its newline, or nil for a
// line longer than limit (which is skipped).
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= limit {
			line = append(line, chunk...)
		} else {
			line = line[:0:0]
			limit = -1 // skip the rest of this line
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

// firstPrompt returns the prompt of a transcript line that is a user's
// message typed (or sent) as text, or "".
func firstPrompt(line []byte) string {
	var l struct {
		Type        string `json:"type"`
		IsMeta      bool   `json:"isMeta"`
		IsSynthetic bool   `json:"isSynthetic"`
		Message     struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &l) != nil || l.Type != "user" || l.IsMeta || l.IsSynthetic || l.Message.Role != "user" {
		return ""
	}
	var text string
	if json.Unmarshal(l.Message.Content, &text) != nil {
		// Content blocks (a prompt with attachments): its first text.
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			return ""
		}
		for _, b := range blocks {
			if b.Type == "text" && b.Text != "" {
				text = b.Text
				break
			}
		}
	}
	t := strings.TrimSpace(text)
	for _, p := range []string{"<command-", "<local-command-", "<system-reminder>"} {
		if strings.HasPrefix(t, p) {
			return ""
		}
	}
	return text
}
