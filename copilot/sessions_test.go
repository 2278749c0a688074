package copilot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
)

const testID = "6bfbdfe8-d5f3-491a-801a-5675c6e26107"

// eventsOf is an events.jsonl as copilot 1.0.102 writes it (shortened),
// of session id run in dir.
func eventsOf(id, dir string) string {
	return `{"type":"session.start","data":{"sessionId":"` + id + `","version":1,"context":{"cwd":"` + dir + `"}},"id":"e0"}` + "\n" +
		`{"type":"user.message","data":{"content":"first turn ALPHA"},"id":"e1"}` + "\n"
}

func workspaceOf(id, dir string) string {
	return "id: " + id + "\ncwd: " + dir + "\nname: first turn ALPHA\n"
}

func backendIn(home string) agentcli.Backend {
	exe, _ := os.Executable()
	return New(&agentcli.Options{Path: exe, Env: []string{"HOME=" + home, "COPILOT_HOME="}})
}

// TestSessionMoves: a session's folder exported from one home and
// directory (without its locks) is imported into another COPILOT_HOME, its
// files rewritten to the other directory, replacing a folder of that id.
func TestSessionMoves(t *testing.T) {
	ctx := context.Background()
	homeA, homeB := t.TempDir(), t.TempDir()
	oldDir, newDir := filepath.Join(homeA, "work"), filepath.Join(homeB, "else where")
	folder := filepath.Join(homeA, ".copilot", "session-state", testID)
	files := map[string]string{
		"events.jsonl":                        eventsOf(testID, oldDir),
		"workspace.yaml":                      workspaceOf(testID, oldDir),
		"checkpoints/index.md":                "# Checkpoint History\n",
		"rewind-file-snapshots/tracking.json": `{"schema":1,"tracking":true}`,
		".workspace-fork.lock":                "",
	}
	for _, d := range []string{oldDir, newDir} {
		os.MkdirAll(d, 0o700)
	}
	for name, data := range files {
		p := filepath.Join(folder, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	archive, err := agentcli.ExportSession(ctx, backendIn(homeA), oldDir, testID)
	if err != nil {
		t.Fatal(err)
	}
	// A stale folder of that id in the other home is replaced.
	stale := filepath.Join(homeB, "ch", "session-state", testID, "stale.txt")
	os.MkdirAll(filepath.Dir(stale), 0o700)
	os.WriteFile(stale, nil, 0o600)
	exe, _ := os.Executable()
	b := New(&agentcli.Options{Path: exe, Env: []string{"HOME=" + homeB, "COPILOT_HOME=" + filepath.Join(homeB, "ch")}})
	id, err := agentcli.ImportSession(ctx, b, newDir, archive)
	if err != nil || id != testID {
		t.Fatalf("ImportSession = %q, %v", id, err)
	}
	to := filepath.Join(homeB, "ch", "session-state", testID)
	files["events.jsonl"] = eventsOf(testID, newDir)
	files["workspace.yaml"] = workspaceOf(testID, newDir)
	delete(files, ".workspace-fork.lock")
	var got []string
	filepath.WalkDir(filepath.Join(homeB, "ch"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(to, p)
			got = append(got, rel)
		}
		return nil
	})
	if len(got) != len(files) {
		t.Errorf("imported files %q, want those of %v", got, files)
	}
	for name, want := range files {
		if data, err := os.ReadFile(filepath.Join(to, name)); err != nil || string(data) != want {
			t.Errorf("imported %s: %q, %v; want %q", name, data, err, want)
		}
	}
}

// TestImportRefuses: an archive from elsewhere that is not a copilot
// session folder of the id it names is refused, and writes nothing.
func TestImportRefuses(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	const old = "/old/work"
	ev := eventsOf(testID, old)
	other := strings.ReplaceAll(ev, testID, "00000000-0000-4000-8000-000000000000")
	backendtest.RefusesImports(t, backendIn(home), home, dir, map[string][]byte{
		"id not a UUID":     backendtest.SessionArchive(t, Name, "../../x", old, [2]string{eventsName, ev}),
		"another session":   backendtest.SessionArchive(t, Name, testID, old, [2]string{eventsName, other}),
		"no session start":  backendtest.SessionArchive(t, Name, testID, old, [2]string{eventsName, "{}\n"}),
		"no events":         backendtest.SessionArchive(t, Name, testID, old, [2]string{"workspace.yaml", workspaceOf(testID, old)}),
		"escaping name":     backendtest.SessionArchive(t, Name, testID, old, [2]string{eventsName, ev}, [2]string{"../../x", "x"}),
		"absolute name":     backendtest.SessionArchive(t, Name, testID, old, [2]string{eventsName, ev}, [2]string{"/tmp/x", "x"}),
		"another backend's": backendtest.SessionArchive(t, "droid", testID, old, [2]string{eventsName, ev}),
	})
}
