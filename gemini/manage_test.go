package gemini

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

func TestManageArgs(t *testing.T) {
	const id, nid = "e2c8fac2-f081-44dd-abf3-8a1134ee1a4f", "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	args := buildArgsFile(&agentcli.Request{SessionID: id, ForkSession: true}, formatJSON, "/h/chat.jsonl")
	if !slices.Contains(args, "--session-file=/h/chat.jsonl") || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--resume") }) {
		t.Errorf("fork args %q; want --session-file and no --resume", args)
	}
	args = buildArgs(&agentcli.Request{NewSessionID: nid}, formatJSON)
	if !slices.Contains(args, "--session-id="+nid) {
		t.Errorf("new id args %q", args)
	}
	var ue *agentcli.UnsupportedError
	if err := validate(&agentcli.Request{SessionID: id, ForkSession: true, NewSessionID: nid}); !errors.As(err, &ue) {
		t.Errorf("fork to a chosen id: %v; want an *UnsupportedError (gemini refuses --session-id with --session-file)", err)
	}
}

func TestListAndForkChats(t *testing.T) {
	home, dir := t.TempDir(), "/w/proj"
	root := filepath.Join(home, ".gemini")
	chats := filepath.Join(root, "tmp", "proj", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "projects.json"), []byte(`{"projects":{"/w/proj":"proj"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const a, b, c = "aaaaaaaa-f081-44dd-abf3-8a1134ee1a4f", "bbbbbbbb-f081-44dd-abf3-8a1134ee1a4f", "cccccccc-f081-44dd-abf3-8a1134ee1a4f"
	files := map[string]string{
		"session-2026-11-26T03-20-aaaaaaaa.jsonl": `{"sessionId":"` + a + `","startTime":"2026-11-26T03:20:00.000Z","lastUpdated":"2026-11-26T03:20:01.000Z","kind":"main"}
{"id":"1","type":"user","content":[{"text":"<session_context>ctx</session_context>"}]}
{"id":"2","type":"user","content":[{"text":"first A"}]}
{"id":"3","type":"gemini","content":"answer"}
{"$set":{"lastUpdated":"2026-11-26T03:25:00.000Z"}}
`,
		"session-2026-11-26T03-21-bbbbbbbb.jsonl": `{"sessionId":"` + b + `","lastUpdated":"2026-11-26T03:21:00.000Z"}
{"id":"1","type":"user","content":"first B"}
{"$set":{"summary":"Summary B","lastUpdated":"2026-11-26T03:22:00.000Z"}}
`,
		"session-1795663251455-bbbbbbbb.jsonl": `{"sessionId":"` + b + `","lastUpdated":"2026-11-26T03:10:00.000Z"}
{"id":"1","type":"user","content":"older copy"}
`,
		"session-2026-11-26T03-22-cccccccc.jsonl": `{"sessionId":"` + c + `","lastUpdated":"2026-11-26T03:30:00.000Z"}
{"id":"1","type":"user","content":"/help"}
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(chats, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := &driver.Run{Req: &agentcli.Request{}, Dir: dir, Env: []string{"GEMINI_CLI_HOME=" + home}, Options: &agentcli.Options{}}
	list, err := listSessions(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	driver.SortSessions(list)
	var got []string
	for _, s := range list {
		got = append(got, s.ID+" "+s.Title+" "+s.Updated.UTC().Format("15:04"))
	}
	// c has no message of the user's (a command only): not resumable.
	want := []string{a + " first A 03:25", b + " Summary B 03:22"}
	if !slices.Equal(got, want) {
		t.Errorf("list %q; want %q", got, want)
	}

	nid, err := forkChat(r, a)
	if err != nil {
		t.Fatal(err)
	}
	p, err := findChat(r, nid)
	if err != nil {
		t.Fatalf("the fork's chat: %v", err)
	}
	data, _ := os.ReadFile(p)
	if strings.Contains(string(data), a) || !strings.Contains(string(data), "first A") {
		t.Errorf("the fork's chat still names %s or lacks the history:\n%s", a, data)
	}
	if _, err := findChat(r, "dddddddd-f081-44dd-abf3-8a1134ee1a4f"); !errors.Is(err, agentcli.ErrSessionNotFound) {
		t.Errorf("an unknown session: %v", err)
	}
}
