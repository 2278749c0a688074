package claude

// Portable sessions (agentcli.ExportSession, ImportSession), checked
// against claude 2.1.330: claude keeps a session in one file,
// CONFIG/projects/KEY/ID.jsonl, where CONFIG is $CLAUDE_CONFIG_DIR (else
// $HOME/.claude) and KEY the directory the session ran in with every
// character but ASCII letters and digits made "-" (cut to 200 characters
// and followed by "-" and a hash of the directory when longer). The file
// names that directory on every message (its cwd); ImportSession writes
// it, rewritten to the new directory, under the new directory's KEY, and
// `claude --resume=ID` from there has the whole history. Edit
// checkpoints (file-history) and pasted images are not moved: a resume
// does not need them.

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"unicode/utf16"

	"github.com/agentcli/agentcli/driver"
)

// configDir returns the directory where claude keeps its state for r.
func configDir(r *driver.Run) (string, error) {
	if d := r.Lookup("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Abs(d)
	}
	home := r.Lookup("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", err
		}
	}
	return filepath.Join(home, ".claude"), nil
}

// maxKeyLen is how much of a project key claude keeps before it adds a
// hash.
const maxKeyLen = 200

// projectKey returns the name of dir's folder under projects/, as claude
// computes it (on UTF-16 code units, as JavaScript strings are).
func projectKey(dir string) string {
	units := utf16.Encode([]rune(dir))
	key := make([]byte, len(units))
	var h int32
	for i, u := range units {
		h = h<<5 - h + int32(u)
		if u < 128 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			key[i] = byte(u)
		} else {
			key[i] = '-'
		}
	}
	if len(key) <= maxKeyLen {
		return string(key)
	}
	return string(key[:maxKeyLen]) + "-" + strconv.FormatInt(abs64(int64(h)), 36)
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// exportSession returns the transcript of session id: the one under
// r.Dir's key, or else the one of that id under any key (a session claude
// moved, or ran from a directory of another name).
func exportSession(_ context.Context, r *driver.Run, id string) ([]driver.SessionFile, error) {
	if !driver.IsUUID(id) {
		return nil, driver.SessionNotFound(Name, id) // a title names no file
	}
	root, err := configDir(r)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(root, "projects", projectKey(r.Dir), id+".jsonl")
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		matches, _ := filepath.Glob(filepath.Join(root, "projects", "*", id+".jsonl"))
		if len(matches) == 0 {
			return nil, driver.SessionNotFound(Name, id)
		}
		p = matches[0]
	}
	f, err := driver.ReadSessionFile(p, "transcript.jsonl")
	if err != nil {
		return nil, err
	}
	return []driver.SessionFile{f}, nil
}

// importSession writes the transcript under r.Dir's key.
func importSession(_ context.Context, r *driver.Run, _, id string, files []driver.SessionFile) (string, error) {
	if !driver.IsUUID(id) || len(files) != 1 || files[0].Name != "transcript.jsonl" {
		return "", errors.New("not a claude session archive (one transcript of a session UUID)")
	}
	root, err := configDir(r)
	if err != nil {
		return "", err
	}
	f := files[0]
	f.Name = "projects/" + projectKey(r.Dir) + "/" + id + ".jsonl"
	return id, driver.WriteSessionFile(root, f)
}
