package droid

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestProjectKey: droid's folder name of a directory under sessions/ (the
// expected keys were computed by droid 0.225.2's expression, taken from
// its binary and run under node, for these paths, which do not exist).
func TestProjectKey(t *testing.T) {
	for dir, want := range map[string]string{
		"/home/u/work":       "-home-u-work",
		"/tmp/a b/é😀":        "-tmp-a b-é😀",
		"/srv/my.proj_x//y/": "-srv-my.proj_x-y",
	} {
		if got := projectKey(dir); got != want {
			t.Errorf("projectKey(%q) = %q, want %q", dir, got, want)
		}
	}
	// A symbolic link is keyed by its target.
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	resolved, _ := filepath.EvalSymlinks(real)
	if got, want := projectKey(link), "-"+strings.ReplaceAll(strings.Trim(resolved, "/"), "/", "-"); got != want {
		t.Errorf("projectKey(link) = %q, want %q", got, want)
	}
}

const testID = "a526ef46-8f03-4999-bb64-a829d4d645b8"

// transcriptOf is a transcript as droid 0.225.2 writes it (shortened), of
// session id run in dir.
func transcriptOf(id, dir string) string {
	return `{"type":"session_start","id":"` + id + `","title":"first turn ALPHA","version":2,"cwd":"` + dir + `"}` + "\n" +
		`{"type":"message","id":"m1","message":{"role":"user","content":[{"type":"text","text":"first turn ALPHA"}]}}` + "\n"
}

const settings = `{"model":"custom:agentclitest-0","autonomyMode":"auto-low"}`

func backendIn(home string) agentcli.Backend {
	exe, _ := os.Executable()
	return New(&agentcli.Options{Path: exe, Env: []string{"HOME=" + home, "FACTORY_HOME_OVERRIDE="}})
}

// TestSessionMoves: a transcript and its settings exported from one home
// and directory are imported into another home under the other directory's
// key, the transcript's cwd rewritten; FACTORY_HOME_OVERRIDE moves where
// they go.
func TestSessionMoves(t *testing.T) {
	ctx := context.Background()
	homeA, homeB := t.TempDir(), t.TempDir()
	oldDir, newDir := filepath.Join(homeA, "work"), filepath.Join(homeB, "else where")
	folder := filepath.Join(homeA, ".factory", "sessions", projectKey(oldDir))
	for _, d := range []string{folder, oldDir, newDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(folder, testID+".jsonl"), []byte(transcriptOf(testID, oldDir)), 0o600)
	os.WriteFile(filepath.Join(folder, testID+".settings.json"), []byte(settings), 0o600)
	a := backendIn(homeA)
	archive, err := agentcli.ExportSession(ctx, a, oldDir, testID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agentcli.ExportSession(ctx, a, homeA, testID); err != nil {
		t.Errorf("export from another directory: %v", err)
	}
	id, err := agentcli.ImportSession(ctx, backendIn(homeB), newDir, archive)
	if err != nil || id != testID {
		t.Fatalf("ImportSession = %q, %v", id, err)
	}
	to := filepath.Join(homeB, ".factory", "sessions", projectKey(newDir))
	for name, want := range map[string]string{testID + ".jsonl": transcriptOf(testID, newDir), testID + ".settings.json": settings} {
		if got, err := os.ReadFile(filepath.Join(to, name)); err != nil || string(got) != want {
			t.Errorf("imported %s: %q, %v; want %q", name, got, err, want)
		}
	}
	over := t.TempDir()
	exe, _ := os.Executable()
	b := New(&agentcli.Options{Path: exe, Env: []string{"HOME=" + homeB, "FACTORY_HOME_OVERRIDE=" + over}})
	if _, err := agentcli.ImportSession(ctx, b, newDir, archive); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(over, ".factory", "sessions", projectKey(newDir), testID+".jsonl")); err != nil {
		t.Errorf("FACTORY_HOME_OVERRIDE: %v", err)
	}
}

// TestImportRefuses: an archive from elsewhere that is not one droid
// session of the id it names is refused, and writes nothing.
func TestImportRefuses(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	const old = "/old/work"
	tr := transcriptOf(testID, old)
	other := strings.ReplaceAll(tr, testID, "00000000-0000-4000-8000-000000000000")
	backendtest.RefusesImports(t, backendIn(home), home, dir, map[string][]byte{
		"id not a UUID":     backendtest.SessionArchive(t, Name, "../../x", old, [2]string{transcriptName, tr}),
		"another session":   backendtest.SessionArchive(t, Name, testID, old, [2]string{transcriptName, other}),
		"no session start":  backendtest.SessionArchive(t, Name, testID, old, [2]string{transcriptName, "{}\n"}),
		"other file name":   backendtest.SessionArchive(t, Name, testID, old, [2]string{testID + ".jsonl", tr}),
		"escaping name":     backendtest.SessionArchive(t, Name, testID, old, [2]string{"../" + transcriptName, tr}),
		"settings only":     backendtest.SessionArchive(t, Name, testID, old, [2]string{settingsName, settings}),
		"a third file":      backendtest.SessionArchive(t, Name, testID, old, [2]string{transcriptName, tr}, [2]string{settingsName, settings}, [2]string{"x", ""}),
		"settings misnamed": backendtest.SessionArchive(t, Name, testID, old, [2]string{transcriptName, tr}, [2]string{"../s.json", settings}),
		"another backend's": backendtest.SessionArchive(t, "qwen", testID, old, [2]string{transcriptName, tr}),
		"transcript second": backendtest.SessionArchive(t, Name, testID, old, [2]string{settingsName, settings}, [2]string{transcriptName, tr}),
	})
}
