package droid

// Portable sessions (agentcli.ExportSession, ImportSession), checked
// against droid 0.225.2: droid keeps a session in two files,
// FACTORY/sessions/KEY/ID.jsonl (the transcript, whose first record names
// the directory the session ran in, its cwd) and ID.settings.json beside it
// (the session's model, autonomy and token counts), where FACTORY is
// $FACTORY_HOME_OVERRIDE/.factory, else $HOME/.factory, and KEY the real
// path of the directory with its slashes made "-" and a "-" in front.
// Its session index (cache/session-discovery-index.json and a database)
// is rebuilt from these files. ImportSession writes them, the transcript
// rewritten to the new directory, under the new directory's KEY, and
// `droid exec --session-id=ID` from there has the whole history.

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

// The files of a droid session archive.
const (
	transcriptName = "transcript.jsonl"
	settingsName   = "settings.json"
)

// sessionsDir returns the directory under which droid keeps its sessions
// for r.
func sessionsDir(r *driver.Run) string {
	home := r.Home()
	if d := r.Lookup("FACTORY_HOME_OVERRIDE"); d != "" {
		home = d
	}
	return filepath.Join(home, ".factory", "sessions")
}

// projectKey returns the name of dir's folder under sessions/, as droid
// computes it: the real path (when it exists) without its leading and
// trailing slashes, runs of slashes made one "-", after a "-".
func projectKey(dir string) string {
	if p, err := filepath.EvalSymlinks(dir); err == nil {
		dir = p
	}
	dir = strings.Trim(filepath.ToSlash(dir), "/")
	var b strings.Builder
	b.WriteByte('-')
	slash := false
	for _, c := range dir {
		if c == '/' {
			if !slash {
				b.WriteByte('-')
			}
			slash = true
			continue
		}
		slash = false
		b.WriteRune(c)
	}
	return b.String()
}

// exportSession returns the transcript and settings of session id: the
// ones under r.Dir's key, or else those of that id under any key.
func exportSession(_ context.Context, r *driver.Run, id string) ([]driver.SessionFile, error) {
	if !driver.IsUUID(id) {
		return nil, driver.SessionNotFound(Name, id)
	}
	root := sessionsDir(r)
	p := filepath.Join(root, projectKey(r.Dir), id+".jsonl")
	if _, err := os.Stat(p); err != nil {
		matches, _ := filepath.Glob(filepath.Join(root, "*", id+".jsonl"))
		if len(matches) == 0 {
			return nil, driver.SessionNotFound(Name, id)
		}
		p = matches[0]
	}
	t, err := driver.ReadSessionFile(p, transcriptName)
	if err != nil {
		return nil, err
	}
	files := []driver.SessionFile{t}
	s, err := driver.ReadSessionFile(strings.TrimSuffix(p, ".jsonl")+".settings.json", settingsName)
	if err == nil {
		files = append(files, s)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return files, nil
}

// importSession writes the transcript and settings under r.Dir's key.
func importSession(_ context.Context, r *driver.Run, _, id string, files []driver.SessionFile) (string, error) {
	bad := !driver.IsUUID(id) || len(files) == 0 || len(files) > 2 || files[0].Name != transcriptName ||
		len(files) == 2 && files[1].Name != settingsName
	if bad {
		return "", errors.New("not a droid session archive (a transcript of a session UUID and its settings)")
	}
	line, _, _ := bytes.Cut(files[0].Data, []byte("\n"))
	var head struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if json.Unmarshal(line, &head) != nil || head.Type != "session_start" || head.ID != id {
		return "", fmt.Errorf("not a droid session archive: the transcript is not session %s's", id)
	}
	root := sessionsDir(r)
	key := projectKey(r.Dir)
	names := map[string]string{transcriptName: id + ".jsonl", settingsName: id + ".settings.json"}
	// The settings first: droid's index notices a session by its
	// transcript.
	for i := len(files) - 1; i >= 0; i-- {
		f := driver.SessionFile{Name: key + "/" + names[files[i].Name], Data: files[i].Data}
		if err := driver.WriteSessionFile(root, f); err != nil {
			return "", err
		}
	}
	return id, nil
}
