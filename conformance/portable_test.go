//go:build unix

package conformance

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// TestPortableSessions: a session run in one home and directory, exported
// (agentcli.ExportSession), imported into a fresh home under another
// absolute directory (agentcli.ImportSession) and resumed there: the
// model's request carries the first turn. Also: an unknown session is
// ErrSessionNotFound, and another backend's archive is refused.
func TestPortableSessions(t *testing.T) {
	for _, cli := range []string{"opencode", "gemini", "claude", "codex", "copilot", "qwen", "droid"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t, cli, agentclitest.Turn{Text: "turn one done"}, agentclitest.Turn{Text: "turn two done"})
			path := cliPath(t, cli)
			// The backends of the two homes: their environments are the
			// wirings', as a worker's would be.
			open := func(env []string) agentcli.Backend {
				b, err := agentcli.Open(cli, &agentcli.Options{Path: path, Env: env, KillGrace: killGrace})
				if err != nil {
					t.Fatal(err)
				}
				if !b.Capabilities().PortableSessions {
					t.Fatal("Capabilities().PortableSessions = false")
				}
				return b
			}
			a := open(e.w.Env)
			req, tag := e.request("first turn ALPHA")
			res, _, err := run(t, a, req, tag)
			if err != nil {
				t.Fatalf("turn 1: %s", errSummary(err))
			}
			archive, err := agentcli.ExportSession(ctx, a, e.w.Dir, res.SessionID)
			if err != nil {
				t.Fatalf("ExportSession: %s", errSummary(err))
			}
			t.Logf("archive of session %s: %d bytes", res.SessionID, len(archive))
			if _, err := agentcli.ExportSession(ctx, a, e.w.Dir, unknownSession[cli]); !errors.Is(err, agentcli.ErrSessionNotFound) {
				t.Errorf("ExportSession of an unknown session: %s; want ErrSessionNotFound", errSummary(err))
			}

			wb, err := e.srv.Wire(cli, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			moved := filepath.Join(filepath.Dir(wb.Dir), "moved", "elsewhere")
			if err := os.MkdirAll(moved, 0o755); err != nil {
				t.Fatal(err)
			}
			b := open(wb.Env)
			id, err := agentcli.ImportSession(ctx, b, moved, archive)
			if err != nil {
				t.Fatalf("ImportSession: %s", errSummary(err))
			}
			other := "claude"
			if cli == "claude" {
				other = "codex"
			}
			ob, _ := agentcli.Open(other, &agentcli.Options{Path: cliPath(t, other), Env: wb.Env})
			var re *agentcli.RequestError
			if _, err := agentcli.ImportSession(ctx, ob, moved, archive); !errors.As(err, &re) {
				t.Errorf("ImportSession of a %s archive into %s: %s; want a *RequestError", cli, other, errSummary(err))
			}

			tag2 := newTag()
			req2 := &agentcli.Request{Prompt: "second turn BETA", SessionID: id, Dir: moved, Timeout: runTimeout,
				Env: append(append([]string(nil), wb.Env...), tagKey+"="+tag2), ExtraArgs: append([]string(nil), wb.Args...)}
			res2, _, err := run(t, b, req2, tag2)
			if err != nil {
				t.Fatalf("resume in the other home: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			if res2.Text != "turn two done" {
				t.Errorf("turn 2 Text = %q", res2.Text)
			}
			last := e.lastMain()
			if !hasText(last.Messages, "user", "first turn ALPHA") || !hasText(last.Messages, "assistant", "turn one done") {
				t.Fatalf("the resumed request lacks turn 1: %+v", last.Messages)
			}
			if strings.Contains(string(last.Body), e.w.Dir+"/") || strings.Contains(string(last.Body), `"`+e.w.Dir+`"`) {
				t.Logf("note: the resumed request still names the old directory %s", e.w.Dir)
			}
		})
	}
}

// unknownSession is a well-formed session id no CLI has.
var unknownSession = map[string]string{
	"claude": "00000000-0000-4000-8000-000000000000", "codex": "00000000-0000-7000-8000-000000000000",
	"gemini": "00000000-0000-4000-8000-000000000000", "opencode": "ses_0000000000000000000000000a",
	"copilot": "00000000-0000-4000-8000-000000000000", "qwen": "00000000-0000-4000-8000-000000000000",
	"droid": "00000000-0000-4000-8000-000000000000",
}
