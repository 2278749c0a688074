package copilot

// Portable sessions (agentcli.ExportSession, ImportSession), checked
// against copilot 1.0.102: copilot keeps a session in a folder of its own,
// COPILOT_HOME/session-state/ID/ (COPILOT_HOME defaults to ~/.copilot):
// events.jsonl (the conversation, whose session.start event names the
// directory the session ran in), workspace.yaml (the session's id, name and
// cwd), and the checkpoints and file snapshots of its edits. Its session
// database (session-store.db) is a search index that a resume does not
// need. ImportSession writes the folder, its files rewritten to the new
// directory, under the other COPILOT_HOME, replacing a folder of that id,
// and `copilot --resume=ID` from the new directory has the whole history.
// Lock files are not moved.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli/driver"
)

// eventsName is the one file every copilot session archive holds.
const eventsName = "events.jsonl"

// stateDir returns COPILOT_HOME/session-state for r.
func stateDir(r *driver.Run) string {
	home := r.Lookup("COPILOT_HOME")
	if !filepath.IsAbs(home) {
		home = filepath.Join(r.Home(), ".copilot")
	}
	return filepath.Join(home, "session-state")
}

// exportSession returns the files of session id's folder, but its locks.
func exportSession(ctx context.Context, r *driver.Run, id string) ([]driver.SessionFile, error) {
	if !driver.IsUUID(id) {
		return nil, driver.SessionNotFound(Name, id) // a name or task names no folder
	}
	dir := filepath.Join(stateDir(r), id)
	if _, err := os.Stat(filepath.Join(dir, eventsName)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, driver.SessionNotFound(Name, id)
		}
		return nil, err
	}
	var files []driver.SessionFile
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), ".lock") {
			return nil // folders, symbolic links, locks
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if total += fi.Size(); total > driver.MaxSessionArchive {
			return fmt.Errorf("session %s holds more than %d bytes", id, driver.MaxSessionArchive)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f, err := driver.ReadSessionFile(p, filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// importSession writes the folder of session id, replacing one of that
// id: the files go to a new folder beside it, which then takes its place.
func importSession(_ context.Context, r *driver.Run, _, id string, files []driver.SessionFile) (string, error) {
	if !driver.IsUUID(id) {
		return "", errors.New("not a copilot session archive (the folder of a session UUID)")
	}
	var events []byte
	for _, f := range files {
		if f.Name == eventsName {
			events = f.Data
		}
	}
	if events == nil {
		return "", errors.New("not a copilot session archive (no events.jsonl)")
	}
	line, _, _ := bytes.Cut(events, []byte("\n"))
	var head struct {
		Type string `json:"type"`
		Data struct {
			SessionID string `json:"sessionId"`
		} `json:"data"`
	}
	if json.Unmarshal(line, &head) != nil || head.Type != "session.start" || head.Data.SessionID != id {
		return "", fmt.Errorf("not a copilot session archive: the events are not session %s's", id)
	}
	root := stateDir(r)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".agentcli-import-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		if err := driver.WriteSessionFile(tmp, f); err != nil {
			return "", err
		}
	}
	dst := filepath.Join(root, id)
	if err := os.RemoveAll(dst); err != nil {
		return "", err
	}
	return id, os.Rename(tmp, dst)
}
