package droid

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// TestListSessions: the transcripts of the directory's folder, newest
// first, titled by their session_start record; a transcript of another
// directory with the same key, a settings file, a file whose first record
// is not its session's start and an empty directory are not listed.
func TestListSessions(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	dir := filepath.Join(home, "a-b")
	other := filepath.Join(home, "a", "b") // the same key
	if projectKey(dir) != projectKey(other) {
		t.Fatal("the directories should share a key")
	}
	folder := filepath.Join(home, ".factory", "sessions", projectKey(dir))
	for _, d := range []string{folder, dir, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ids := []string{"11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444"}
	files := map[string]string{
		ids[0] + ".jsonl":         transcriptOf(ids[0], dir),
		ids[1] + ".jsonl":         `{"type":"session_start","id":"` + ids[1] + `","title":"Renamed","cwd":"` + dir + `/","parent":"` + ids[0] + `"}` + "\n",
		ids[2] + ".jsonl":         transcriptOf(ids[2], other),
		ids[3] + ".jsonl":         transcriptOf(ids[0], dir), // not its own
		ids[0] + ".settings.json": settings,
	}
	now := time.Now()
	for name, data := range files {
		p := filepath.Join(folder, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		age := time.Hour
		if name == ids[1]+".jsonl" {
			age = time.Minute
		}
		os.Chtimes(p, now.Add(-age), now.Add(-age))
	}
	b := backendIn(home)
	list, err := agentcli.ListSessions(ctx, b, dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range list {
		got = append(got, s.ID+" "+s.Title)
	}
	want := []string{ids[1] + " Renamed", ids[0] + " first turn ALPHA"}
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

// TestManageRouting: a fork is exec --fork=ID (one-shot), a resumed or
// continued session or one with a chosen id a live one; a fork to a chosen
// id is refused.
func TestManageRouting(t *testing.T) {
	args := buildArgs(&agentcli.Request{SessionID: testID, ForkSession: true}, "", "")
	if !slices.Contains(args, "--fork="+testID) {
		t.Errorf("fork: %q", args)
	}
	if slices.Contains(buildArgs(&agentcli.Request{SessionID: testID}, "", ""), "--fork="+testID) {
		t.Error("a resume forks")
	}
	for _, c := range []struct {
		req  agentcli.Request
		live bool
	}{
		{agentcli.Request{SessionID: testID}, true},
		{agentcli.Request{Continue: true}, true},
		{agentcli.Request{SessionID: testID, ForkSession: true}, false},
		{agentcli.Request{Continue: true, ForkSession: true}, false},
		{agentcli.Request{NewSessionID: "8b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d5e"}, true},
		{agentcli.Request{}, false},
	} {
		if got := spec.LiveRun(&c.req); got != c.live {
			t.Errorf("LiveRun(%+v) = %v, want %v", c.req, got, c.live)
		}
	}
	if err := validate(&agentcli.Request{SessionID: testID, ForkSession: true, NewSessionID: "8b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d5e"}); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("a fork to a chosen id: %v", err)
	}
}

// TestForkUnknown: a fork of a session droid does not keep is
// agentcli.ErrSessionNotFound before droid starts (droid 0.225.2 would
// exit 1 and print nothing), in a run and a live session.
func TestForkUnknown(t *testing.T) {
	home := t.TempDir()
	exe, _ := os.Executable()
	b := New(&agentcli.Options{Path: exe, Env: []string{"HOME=" + home, "FACTORY_HOME_OVERRIDE=", "FACTORY_API_KEY=x"}})
	req := &agentcli.Request{Prompt: "p", Dir: t.TempDir(), SessionID: testID, ForkSession: true, Permission: agentcli.PermissionBypass}
	if _, err := b.Run(context.Background(), req); !errors.Is(err, agentcli.ErrSessionNotFound) {
		t.Errorf("Run: %v", err)
	}
	live := *req
	live.Prompt = ""
	if s, err := agentcli.StartSession(context.Background(), b, &live); !errors.Is(err, agentcli.ErrSessionNotFound) {
		t.Errorf("StartSession: %v", err)
		if s != nil {
			s.Close()
		}
	}
}

// TestChosenIDTaken: a chosen id of a session droid keeps is a
// *RequestError before droid starts (droid.initialize_session would be
// given an id in use).
func TestChosenIDTaken(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	folder := filepath.Join(home, ".factory", "sessions", projectKey(dir))
	if err := os.MkdirAll(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, testID+".jsonl"), []byte(transcriptOf(testID, dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	b := New(&agentcli.Options{Path: exe, Env: []string{"HOME=" + home, "FACTORY_HOME_OVERRIDE=", "FACTORY_API_KEY=x"}})
	_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p", Dir: dir, NewSessionID: testID, Permission: agentcli.PermissionBypass})
	var re *agentcli.RequestError
	if !errors.As(err, &re) || re.Field != "NewSessionID" {
		t.Errorf("Run: %v", err)
	}
}
