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

// TestHeadlessAnswer: the lines of copilot 1.0.102's headless output
// (testdata/headless/fork-list.stdout: the answers to sessions.fork and
// session.list as it printed them, Content-Length framed, each body
// followed on its line by the next header) give each request's result,
// with or without carriage returns; answers to other ids (pings),
// notifications and headers are passed over, an error answer is an
// error.
func TestHeadlessAnswer(t *testing.T) {
	out, err := os.ReadFile("testdata/headless/fork-list.stdout")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{string(out), strings.ReplaceAll(string(out), "\r", "")} {
		res := map[int]string{}
		for _, line := range strings.Split(o, "\n") {
			id, r, err := headlessAnswer([]byte(line), 2)
			if err != nil {
				t.Fatal(err)
			}
			if id > 0 {
				res[id] = string(r)
			}
		}
		if len(res) != 2 || !strings.Contains(res[1], `"sessionId":"2d24a5b0-066f-4c95-acc3-4cc014a5cd81"`) || !strings.HasPrefix(res[2], `{"sessions":[`) {
			t.Errorf("results %q", res)
		}
	}
	for line, want := range map[string]int{
		`{"jsonrpc":"2.0","id":3,"result":{"message":"pong"}}Content-Length: 9`: 0, // a ping's
		`{"jsonrpc":"2.0","method":"session.event","id":1,"params":{}}`:         0,
		"Content-Length: 116\r":                  0,
		`{"jsonrpc":"2.0","id":1,"result":null}`: 1,
	} {
		if id, _, err := headlessAnswer([]byte(line), 2); id != want || err != nil {
			t.Errorf("%s: id %d, %v; want %d", line, id, err, want)
		}
	}
	bad := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"SERVER_SHUTTING_DOWN"}}Content-Length: 70`
	if _, _, err := headlessAnswer([]byte(bad), 1); err == nil || !strings.Contains(err.Error(), "SERVER_SHUTTING_DOWN") {
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
