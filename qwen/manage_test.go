package qwen

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// TestListSessions: the chats of the directory's project folder, newest
// first, titled by the last custom_title record or else the first prompt
// (qwen's own meta records and an overlong line are skipped); a chat of
// another directory with the same key, a file that is no chat and an
// empty directory are not listed.
func TestListSessions(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	dir := filepath.Join(home, "a-b")
	other := filepath.Join(home, "a", "b") // the same key
	if projectKey(dir) != projectKey(other) {
		t.Fatal("the directories should share a key")
	}
	chats := filepath.Join(home, ".qwen", "projects", projectKey(dir), "chats")
	for _, d := range []string{chats, dir, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ids := []string{"11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"}
	long := `{"type":"system","cwd":"` + dir + `","subtype":"ui_telemetry","systemPayload":{"x":"` + strings.Repeat("x", maxChatLine) + `"}}` + "\n"
	retitled := chatOf(ids[1], dir) +
		`{"uuid":"t1","sessionId":"` + ids[1] + `","type":"system","subtype":"custom_title","cwd":"` + dir + `","systemPayload":{"customTitle":"old title"}}` + "\n" +
		`{"uuid":"t2","sessionId":"` + ids[1] + `","type":"system","subtype":"custom_title","cwd":"` + dir + `","systemPayload":{"customTitle":"My title","titleSource":"user"}}` + "\n"
	meta := `{"uuid":"m0","sessionId":"` + ids[0] + `","type":"user","provenance":"system","cwd":"` + dir + `","message":{"role":"user","parts":[{"text":"<system-reminder>"}]}}` + "\n"
	files := map[string]string{
		ids[0] + ".jsonl":    meta + long + chatOf(ids[0], dir),
		ids[1] + ".jsonl":    retitled,
		ids[2] + ".jsonl":    chatOf(ids[2], other),
		"notes.jsonl":        chatOf(ids[0], dir),
		ids[0] + ".jsonl.gz": "",
	}
	now := time.Now()
	for name, data := range files {
		p := filepath.Join(chats, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		age := time.Hour
		if name == ids[1]+".jsonl" {
			age = time.Minute
		}
		os.Chtimes(p, now.Add(-age), now.Add(-age))
	}
	b := backendIn(t, home)
	list, err := agentcli.ListSessions(ctx, b, dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range list {
		got = append(got, s.ID+" "+s.Title)
	}
	want := []string{ids[1] + " My title", ids[0] + " first turn ALPHA"}
	if !slices.Equal(got, want) {
		t.Errorf("ListSessions = %q, want %q", got, want)
	}
	if list, err := agentcli.ListSessions(ctx, b, other); err != nil || len(list) != 1 || list[0].ID != ids[2] {
		t.Errorf("the other directory of the key: %v, %v", list, err)
	}
	if list, err := agentcli.ListSessions(ctx, b, t.TempDir()); err != nil || len(list) != 0 {
		t.Errorf("an empty directory: %v, %v", list, err)
	}
}

// TestManageArgs: a fork is --resume=ID --fork-session, a chosen id
// --session-id=ID; a fork to a chosen id is refused (qwen refuses
// --session-id with --resume).
func TestManageArgs(t *testing.T) {
	const id, nid = testID, "8b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d5e"
	args := buildArgs(&agentcli.Request{SessionID: id, ForkSession: true}, false, "")
	if i := slices.Index(args, "--resume="+id); i < 0 || !slices.Contains(args, "--fork-session") || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--session-id") }) {
		t.Errorf("fork: %q", args)
	}
	args = buildArgs(&agentcli.Request{NewSessionID: nid}, false, "")
	if !slices.Contains(args, "--session-id="+nid) || slices.Contains(args, "--fork-session") {
		t.Errorf("chosen id: %q", args)
	}
	if err := validate(&agentcli.Request{SessionID: id, ForkSession: true, NewSessionID: nid}); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("a fork to a chosen id: %v", err)
	}
}

// TestChosenIDTaken: a chosen id of a chat qwen keeps is a *RequestError
// before qwen starts, in a run and a live session.
func TestChosenIDTaken(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	chats := filepath.Join(home, ".qwen", "projects", projectKey("/else/where"), "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chats, testID+".jsonl"), []byte(chatOf(testID, "/else/where")), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	b := New(&agentcli.Options{Path: exe, Env: []string{"HOME=" + home, "QWEN_HOME=", "QWEN_RUNTIME_DIR=", "OPENAI_API_KEY=x"}})
	for _, mode := range []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionDeny} { // a plain run, a live turn
		_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p", Dir: dir, NewSessionID: testID, Permission: mode})
		var re *agentcli.RequestError
		if !errors.As(err, &re) || re.Field != "NewSessionID" {
			t.Errorf("%s: %v", mode, err)
		}
	}
}
