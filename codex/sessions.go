package codex

// Portable sessions (agentcli.ExportSession, ImportSession), checked
// against codex 0.169.0: codex keeps a thread in one rollout file,
// CODEX_HOME/sessions/YYYY/MM/DD/rollout-DATE-ID.jsonl (its sqlite
// indexes are rebuilt from the rollouts; a resume by id finds the file
// wherever it is under sessions/). The file names the directory the thread
// ran in (its cwd); ImportSession writes it, rewritten to the new
// directory, to the same place under the other CODEX_HOME, which must
// exist (agentcli never creates it), and `codex exec resume ID` has the
// whole history.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentcli/agentcli/driver"
)

// rolloutName is a rollout's path under CODEX_HOME.
var rolloutName = regexp.MustCompile(`^sessions/(\d{4}/\d{2}/\d{2}/)?rollout-[0-9T:-]+-([0-9a-fA-F-]{36})\.jsonl$`)

// exportSession returns the rollout of thread id.
func exportSession(_ context.Context, r *driver.Run, id string) ([]driver.SessionFile, error) {
	home, err := codexHome(r.Env, r.Dir)
	if err != nil {
		return nil, err
	}
	var found string
	err = filepath.WalkDir(filepath.Join(home, "sessions"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), "-"+id+".jsonl") && strings.HasPrefix(d.Name(), "rollout-") {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found == "" {
		return nil, driver.SessionNotFound(Name, id)
	}
	rel, err := filepath.Rel(home, found)
	if err != nil {
		return nil, err
	}
	f, err := driver.ReadSessionFile(found, filepath.ToSlash(rel))
	if err != nil {
		return nil, err
	}
	return []driver.SessionFile{f}, nil
}

// importSession writes the rollout into CODEX_HOME.
func importSession(_ context.Context, r *driver.Run, _, id string, files []driver.SessionFile) (string, error) {
	if len(files) != 1 {
		return "", errors.New("not a codex session archive (one rollout)")
	}
	m := rolloutName.FindStringSubmatch(files[0].Name)
	if m == nil || !strings.EqualFold(m[2], id) {
		return "", fmt.Errorf("not a codex session archive: %q is not the rollout of thread %s", files[0].Name, id)
	}
	home, err := codexHome(r.Env, r.Dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("CODEX_HOME %s does not exist", home)
	}
	return id, driver.WriteSessionFile(home, files[0])
}
