package qwen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestProjectKey: qwen's folder name of a directory under projects/ (the
// expected keys were computed by qwen 0.24.4's sanitizeCwd, taken from
// its bundle and run under node, for these paths).
func TestProjectKey(t *testing.T) {
	for dir, want := range map[string]string{
		"/home/u/work":       "-home-u-work",
		"/tmp/a b/é😀":        "-tmp-a-b----",
		"/srv/my.proj_x//y/": "-srv-my-proj-x--y-",
	} {
		if got := projectKey(dir); got != want {
			t.Errorf("projectKey(%q) = %q, want %q", dir, got, want)
		}
	}
}

const testID = "119a4660-80f4-43bb-b03a-27f66869731e"

// chatOf is a chat as qwen 0.24.4 writes it (shortened), of session id run
// in dir.
func chatOf(id, dir string) string {
	return `{"uuid":"a0","parentUuid":null,"sessionId":"` + id + `","type":"user","cwd":"` + dir + `","message":{"role":"user","parts":[{"text":"first turn ALPHA"}]}}` + "\n" +
		`{"uuid":"a1","parentUuid":"a0","sessionId":"` + id + `","type":"assistant","cwd":"` + dir + `","message":{"role":"model","parts":[{"text":"see ` + dir + `/main.go"}]}}` + "\n"
}

// backendIn returns a qwen backend whose home is home.
func backendIn(t *testing.T, home string) agentcli.Backend {
	exe, _ := os.Executable()
	return New(&agentcli.Options{Path: exe, Env: []string{"HOME=" + home, "QWEN_HOME=", "QWEN_RUNTIME_DIR="}})
}

// TestSessionMoves: a chat exported from one home and directory is
// imported into another home under the other directory's key, its cwd
// rewritten; QWEN_RUNTIME_DIR moves where it goes.
func TestSessionMoves(t *testing.T) {
	ctx := context.Background()
	homeA, homeB := t.TempDir(), t.TempDir()
	oldDir, newDir := filepath.Join(homeA, "work"), filepath.Join(homeB, "else where")
	p := filepath.Join(homeA, ".qwen", "projects", projectKey(oldDir), "chats", testID+".jsonl")
	for _, d := range []string{filepath.Dir(p), oldDir, newDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p, []byte(chatOf(testID, oldDir)), 0o600); err != nil {
		t.Fatal(err)
	}
	a := backendIn(t, homeA)
	archive, err := agentcli.ExportSession(ctx, a, oldDir, testID)
	if err != nil {
		t.Fatal(err)
	}
	// Found from another directory too (a session run elsewhere).
	if _, err := agentcli.ExportSession(ctx, a, homeA, testID); err != nil {
		t.Errorf("export from another directory: %v", err)
	}
	id, err := agentcli.ImportSession(ctx, backendIn(t, homeB), newDir, archive)
	if err != nil || id != testID {
		t.Fatalf("ImportSession = %q, %v", id, err)
	}
	got, err := os.ReadFile(filepath.Join(homeB, ".qwen", "projects", projectKey(newDir), "chats", testID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := chatOf(testID, newDir); string(got) != want {
		t.Errorf("imported chat:\n%s\nwant:\n%s", got, want)
	}
	exe, _ := os.Executable()
	rt := filepath.Join(t.TempDir(), "rt")
	b := New(&agentcli.Options{Path: exe, Env: []string{"HOME=" + homeB, "QWEN_RUNTIME_DIR=" + rt}})
	if _, err := agentcli.ImportSession(ctx, b, newDir, archive); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(rt, "projects", projectKey(newDir), "chats", testID+".jsonl")); err != nil {
		t.Errorf("QWEN_RUNTIME_DIR: %v", err)
	}
}

// TestImportRefuses: an archive from elsewhere that is not one qwen chat
// of the session it names is refused, and writes nothing.
func TestImportRefuses(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	const old = "/old/work"
	chat := chatOf(testID, old)
	other := strings.ReplaceAll(chat, testID, "00000000-0000-4000-8000-000000000000")
	backendtest.RefusesImports(t, backendIn(t, home), home, dir, map[string][]byte{
		"id not a UUID":     backendtest.SessionArchive(t, Name, "../../x", old, [2]string{chatName, chat}),
		"another session":   backendtest.SessionArchive(t, Name, testID, old, [2]string{chatName, other}),
		"other file name":   backendtest.SessionArchive(t, Name, testID, old, [2]string{"projects/x/chats/" + testID + ".jsonl", chat}),
		"escaping name":     backendtest.SessionArchive(t, Name, testID, old, [2]string{"../" + chatName, chat}),
		"two files":         backendtest.SessionArchive(t, Name, testID, old, [2]string{chatName, chat}, [2]string{"x", chat}),
		"no files":          backendtest.SessionArchive(t, Name, testID, old),
		"another backend's": backendtest.SessionArchive(t, "claude", testID, old, [2]string{chatName, chat}),
	})
}
