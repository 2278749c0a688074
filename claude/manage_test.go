package claude

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

func TestManageArgs(t *testing.T) {
	const id, nid = "11111111-2222-4333-8444-555555555555", "99999999-2222-4333-8444-555555555555"
	for _, c := range []struct {
		req  agentcli.Request
		want []string // in this order, among the args
		not  []string
	}{
		{agentcli.Request{SessionID: id, ForkSession: true}, []string{"--resume=" + id, "--fork-session"}, []string{"--session-id"}},
		{agentcli.Request{SessionID: id, ForkSession: true, NewSessionID: nid}, []string{"--resume=" + id, "--fork-session", "--session-id=" + nid}, nil},
		{agentcli.Request{NewSessionID: nid}, []string{"--session-id=" + nid}, []string{"--resume", "--fork-session"}},
		{agentcli.Request{SessionID: id}, []string{"--resume=" + id}, []string{"--fork-session", "--session-id", "--continue"}},
	} {
		args := buildArgs(&c.req, false, "")
		i := 0
		for _, a := range args {
			if i < len(c.want) && a == c.want[i] {
				i++
			}
			for _, n := range c.not {
				if strings.HasPrefix(a, n) {
					t.Errorf("%+v: args %q have %s", c.req, args, n)
				}
			}
		}
		if i != len(c.want) {
			t.Errorf("%+v: args %q; want %q in order", c.req, args, c.want)
		}
	}
}

func TestListSessionsFiles(t *testing.T) {
	cfg, dir := t.TempDir(), "/work/some dir"
	proj := filepath.Join(cfg, "projects", projectKey(dir))
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(id, body string, mod time.Time) {
		p := filepath.Join(proj, id+".jsonl")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().Truncate(time.Second)
	a, b, c := "aaaaaaaa-2222-4333-8444-555555555555", "bbbbbbbb-2222-4333-8444-555555555555", "cccccccc-2222-4333-8444-555555555555"
	write(a, `{"type":"queue-operation","content":"first A"}
{"type":"user","isMeta":true,"message":{"role":"user","content":"<meta>"}}
{"type":"user","message":{"role":"user","content":"<command-name>/model</command-name>"}}
{"type":"user","message":{"role":"user","content":"first A"}}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"blocks"}]}}
{"type":"user","message":{"role":"user","content":"second A"}}
`, now.Add(-time.Hour))
	write(b, `{"type":"user","message":{"role":"user","content":"first B"}}
{"type":"ai-title","aiTitle":"AI title B"}
{"type":"custom-title","customTitle":"Named B"}
{"type":"ai-title","aiTitle":"later AI title"}
`, now)
	write(c, `{"type":"user","message":{"role":"user","content":[{"type":"image"},{"type":"text","text":"first C"}]}}
{"type":"ai-title","aiTitle":"AI title C"}
`+strings.Repeat("x", maxTitleLine+10)+"\n", now.Add(-2*time.Hour))
	write("not-a-uuid", `{}`, now)
	r := runIn(t, dir, cfg)
	list, err := listSessions(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]agentcli.SessionInfo{}
	var ids []string
	for _, s := range list {
		got[s.ID] = s
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{a, b, c}) {
		t.Fatalf("ids %q", ids)
	}
	for id, want := range map[string]string{a: "first A", b: "Named B", c: "AI title C"} {
		if got[id].Title != want {
			t.Errorf("%s: title %q; want %q", id, got[id].Title, want)
		}
	}
	if !got[b].Updated.Equal(now) {
		t.Errorf("updated %v; want %v", got[b].Updated, now)
	}
	empty, err := listSessions(t.Context(), runIn(t, "/elsewhere", cfg))
	if err != nil || len(empty) != 0 {
		t.Errorf("a directory without sessions: %v, %v", empty, err)
	}
}

// runIn returns a Run in dir whose claude configuration is cfg.
func runIn(t *testing.T, dir, cfg string) *driver.Run {
	t.Helper()
	return &driver.Run{Req: &agentcli.Request{}, Dir: dir, Env: []string{"CLAUDE_CONFIG_DIR=" + cfg}, Options: &agentcli.Options{}}
}
