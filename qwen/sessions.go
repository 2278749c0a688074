package qwen

// Portable sessions (agentcli.ExportSession, ImportSession), checked
// against qwen 0.24.4: qwen keeps a session in one chat file,
// BASE/projects/KEY/chats/ID.jsonl, where BASE is $QWEN_RUNTIME_DIR, else
// $QWEN_HOME, else $HOME/.qwen (a settings file's
// advanced.runtimeOutputDir, which moves it too, is not read), and KEY the
// directory the session ran in with every character but ASCII letters and
// digits made "-". Every record of the chat names that directory (its
// cwd), and qwen resumes a chat only when its first record's cwd is the
// directory it runs in; ImportSession writes the chat, rewritten to the
// new directory, under the new directory's KEY, and `qwen --resume=ID`
// from there has the whole history. Sidecars of a chat (a worktree's or
// a pull request's state) and archived chats are not moved.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli/driver"
)

// chatName is the one file of a qwen session archive.
const chatName = "chat.jsonl"

// runtimeDir returns the directory under which qwen keeps its sessions
// for r.
func runtimeDir(r *driver.Run) string {
	for _, k := range []string{"QWEN_RUNTIME_DIR", "QWEN_HOME"} {
		d := r.Lookup(k)
		switch {
		case d == "":
			continue
		case d == "~":
			return r.Home()
		case strings.HasPrefix(d, "~/"):
			return filepath.Join(r.Home(), d[2:])
		case !filepath.IsAbs(d):
			return filepath.Join(r.Dir, d) // qwen resolves it against its working directory
		}
		return filepath.Clean(d)
	}
	return filepath.Join(r.Home(), ".qwen")
}

// projectKey returns the name of dir's folder under projects/, as qwen
// computes it (on UTF-16 code units, as JavaScript strings are: a
// character outside the BMP is two dashes).
func projectKey(dir string) string {
	var b strings.Builder
	for _, c := range dir {
		switch {
		case c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'):
			b.WriteRune(c)
		case c > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// exportSession returns the chat of session id: the one under r.Dir's
// key, or else the one of that id under any key.
func exportSession(_ context.Context, r *driver.Run, id string) ([]driver.SessionFile, error) {
	if !driver.IsUUID(id) {
		return nil, driver.SessionNotFound(Name, id)
	}
	base := runtimeDir(r)
	p := filepath.Join(base, "projects", projectKey(r.Dir), "chats", id+".jsonl")
	if _, err := os.Stat(p); err != nil {
		matches, _ := filepath.Glob(filepath.Join(base, "projects", "*", "chats", id+".jsonl"))
		if len(matches) == 0 {
			return nil, driver.SessionNotFound(Name, id)
		}
		p = matches[0]
	}
	f, err := driver.ReadSessionFile(p, chatName)
	if err != nil {
		return nil, err
	}
	return []driver.SessionFile{f}, nil
}

// importSession writes the chat under r.Dir's key.
func importSession(_ context.Context, r *driver.Run, _, id string, files []driver.SessionFile) (string, error) {
	if !driver.IsUUID(id) || len(files) != 1 || files[0].Name != chatName {
		return "", errors.New("not a qwen session archive (one chat of a session UUID)")
	}
	line, _, _ := bytes.Cut(files[0].Data, []byte("\n"))
	var head struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(line, &head) != nil || head.SessionID != id {
		return "", fmt.Errorf("not a qwen session archive: the chat is not session %s's", id)
	}
	f := files[0]
	f.Name = "projects/" + projectKey(r.Dir) + "/chats/" + id + ".jsonl"
	return id, driver.WriteSessionFile(runtimeDir(r), f)
}
