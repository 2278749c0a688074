package opencode

// Portable sessions (agentcli.ExportSession, ImportSession), checked
// against opencode 1.18.33: opencode keeps every session in one sqlite
// database ($XDG_DATA_HOME/opencode/opencode.db), so a session moves
// through its own commands rather than its files: `opencode export ID`
// prints the session as JSON (its info, with the directory it ran in, and
// its messages and parts), and `opencode import FILE` writes such a
// document into the database. ImportSession imports the export, its
// directory rewritten to the new one; `opencode run --session=ID` from
// there has the whole history (resumed from another directory opencode
// hangs, so the rewrite matters).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/agentcli/agentcli/driver"
)

// exportName is the one file of an opencode session archive.
const exportName = "export.json"

// moveTimeout bounds opencode's export and import commands.
const moveTimeout = 2 * time.Minute

// exportSession runs `opencode export ID`. opencode takes no "--"
// there (with it, export waits for a pick and import prints its usage);
// the id has the session syntax (validate), which cannot be an option.
func exportSession(ctx context.Context, r *driver.Run, id string) ([]driver.SessionFile, error) {
	out, err := driver.OutputAll(ctx, r, moveTimeout, driver.MaxSessionArchive, "export", id)
	if err != nil {
		if bytes.Contains([]byte(err.Error()), []byte("not found")) || bytes.Contains([]byte(err.Error()), []byte("NotFound")) {
			return nil, driver.SessionNotFound(Name, id)
		}
		return nil, err
	}
	doc, err := exportDocument(out, id)
	if err != nil {
		return nil, err
	}
	return []driver.SessionFile{{Name: exportName, Data: doc}}, nil
}

// exportDocument returns the JSON object of session id in out (what
// opencode printed), or an error when out holds none.
func exportDocument(out []byte, id string) ([]byte, error) {
	i := bytes.IndexByte(out, '{')
	if i < 0 {
		return nil, driver.SessionNotFound(Name, id)
	}
	doc := bytes.TrimSpace(out[i:])
	var v struct {
		Info struct {
			ID string `json:"id"`
		} `json:"info"`
	}
	if err := json.Unmarshal(doc, &v); err != nil || v.Info.ID != id {
		return nil, fmt.Errorf("opencode export printed no export of session %s", id)
	}
	return doc, nil
}

// imported is the line `opencode import` prints.
var imported = regexp.MustCompile(`Imported session: (ses_[0-9A-Za-z]+)`)

// importSession runs `opencode import FILE` on the rewritten export (an
// absolute path: never an option).
func importSession(ctx context.Context, r *driver.Run, _, id string, files []driver.SessionFile) (string, error) {
	if len(files) != 1 || files[0].Name != exportName {
		return "", errors.New("not an opencode session archive (one export)")
	}
	if _, err := exportDocument(files[0].Data, id); err != nil {
		return "", fmt.Errorf("not an opencode session archive: %v", err)
	}
	tmp, err := r.TempDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(tmp, exportName)
	if err := os.WriteFile(p, files[0].Data, 0o600); err != nil {
		return "", err
	}
	out, err := driver.OutputAll(ctx, r, moveTimeout, 1<<20, "import", p)
	if err != nil {
		return "", err
	}
	if m := imported.FindSubmatch(out); m != nil {
		return string(m[1]), nil
	}
	return id, nil
}
