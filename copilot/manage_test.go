package copilot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// TestHeadlessResults: the answers of copilot 1.0.102's headless server
// (testdata/headless/fork-list.out: sessions.fork, then session.list, as
// it printed them, Content-Length framed) are split into their results,
// with or without carriage returns; an error answer, or none, is an
// error.
func TestHeadlessResults(t *testing.T) {
	out, err := os.ReadFile("testdata/headless/fork-list.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{string(out), strings.ReplaceAll(string(out), "\r", "")} {
		res, err := headlessResults([]byte(o), 2)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(res[0]), `"sessionId":"2d24a5b0-066f-4c95-acc3-4cc014a5cd81"`) || !strings.Contains(string(res[1]), `"sessions":[`) {
			t.Errorf("results %s", res)
		}
	}
	if _, err := headlessResults(out, 3); err == nil {
		t.Error("a request without an answer: no error")
	}
	notif := `Content-Length: 40` + "\r\n\r\n" + `{"jsonrpc":"2.0","method":"x","id":1}`
	bad := notif + `Content-Length: 70` + "\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no such session"}}`
	if _, err := headlessResults([]byte(bad), 1); err == nil || !strings.Contains(err.Error(), "no such session") {
		t.Errorf("an error answer: %v", err)
	}
}

// TestParseSessionList: session.list's sessions of the directory only
// (not a remote one), titled by name, else summary.
func TestParseSessionList(t *testing.T) {
	res := `{"sessions":[
	 {"sessionId":"a","modifiedTime":"2026-11-26T11:30:44.354Z","summary":"S","name":"first (fork)","context":{"cwd":"/w/d"}},
	 {"sessionId":"b","modifiedTime":"2026-11-26T11:30:28.854Z","summary":"only summary","context":{"cwd":"/w/d/"}},
	 {"sessionId":"c","modifiedTime":"2026-11-26T11:30:28.854Z","name":"elsewhere","context":{"cwd":"/w/e"}},
	 {"sessionId":"d","modifiedTime":"2026-11-26T11:30:28.854Z","name":"remote","isRemote":true,"context":{"cwd":"/w/d"}},
	 {"sessionId":"e","modifiedTime":"2026-11-26T11:30:28.854Z","name":"no cwd"}]}`
	got, err := parseSessionList([]byte(res), "/w/d")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "a" || got[0].Title != "first (fork)" || got[1].ID != "b" || got[1].Title != "only summary" {
		t.Fatalf("got %+v", got)
	}
	if want := time.Date(2026, 11, 26, 11, 30, 44, 354e6, time.UTC); !got[0].Updated.Equal(want) {
		t.Errorf("Updated %v, want %v", got[0].Updated, want)
	}
	if _, err := parseSessionList([]byte(`{"sessions":{}}`), "/w/d"); err == nil {
		t.Error("a malformed list: no error")
	}
}

// TestManageRefusals: a fork to a chosen id is an *UnsupportedError, and
// a chosen id that names an existing session (which copilot's
// --session-id would resume) a *RequestError, both before copilot starts.
func TestManageRefusals(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".copilot", "session-state", testID), 0o700); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := New(&agentcli.Options{Path: "/nonexistent/copilot-must-not-start", Env: []string{"HOME=" + home, "COPILOT_HOME=", "COPILOT_GITHUB_TOKEN=x"}})
	exe, _ := os.Executable()
	b2 := New(&agentcli.Options{Path: exe, Env: []string{"HOME=" + home, "COPILOT_HOME=", "COPILOT_GITHUB_TOKEN=x"}})
	ctx := context.Background()
	_, err := b.Run(ctx, &agentcli.Request{Prompt: "p", Dir: dir, SessionID: testID, ForkSession: true, NewSessionID: "8b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d5e", Permission: agentcli.PermissionBypass})
	if !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("fork to a chosen id: %v", err)
	}
	_, err = b2.Run(ctx, &agentcli.Request{Prompt: "p", Dir: dir, NewSessionID: testID, Permission: agentcli.PermissionBypass})
	var re *agentcli.RequestError
	if !errors.As(err, &re) || re.Field != "NewSessionID" {
		t.Errorf("a chosen id of an existing session: %v", err)
	}
	if _, err := agentcli.StartSession(ctx, b2, &agentcli.Request{Dir: dir, NewSessionID: "8b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d5e"}); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("a chosen id in a live session: %v", err)
	}
}
