package backendtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli"
)

// SessionArchive returns an archive in the format agentcli.ExportSession
// makes (a manifest naming backend, session id and the directory dir it
// ran in, then each file under "files/"), with files in the order given
// as name, content pairs, for tests that import what another machine
// could send.
func SessionArchive(t testing.TB, backend, id, dir string, files ...[2]string) []byte {
	t.Helper()
	names := []string{}
	for _, f := range files {
		names = append(names, f[0])
	}
	m, err := json.Marshal(map[string]any{"format": "agentcli-session", "version": 1, "backend": backend,
		"session_id": id, "dir": dir, "files": names})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range append([][2]string{{"agentcli-session.json", string(m)}}, prefixed(files)...) {
		if err := tw.WriteHeader(&tar.Header{Name: e[0], Mode: 0o600, Size: int64(len(e[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func prefixed(files [][2]string) [][2]string {
	out := make([][2]string, len(files))
	for i, f := range files {
		out[i] = [2]string{"files/" + f[0], f[1]}
	}
	return out
}

// RefusesImports checks that b's ImportSession refuses each archive (by
// name, for the messages) into dir, and that nothing was written under
// root (b's fresh, empty home) by any of them.
func RefusesImports(t testing.TB, b agentcli.Backend, root, dir string, archives map[string][]byte) {
	t.Helper()
	for name, a := range archives {
		if id, err := agentcli.ImportSession(context.Background(), b, dir, a); err == nil {
			t.Errorf("%s: imported as session %q", name, id)
		}
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("a refused import left %s", p)
		}
		return nil
	})
}
