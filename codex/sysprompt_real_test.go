package codex

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/mcptest"
)

// watchCmdlines records every process command line (/proc/*/cmdline,
// readable by every local user) that contains one of marks, until stop is
// called.
func watchCmdlines(marks ...string) (stop func() []string) {
	done := make(chan struct{})
	var (
		mu     sync.Mutex
		leaked []string
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range procs {
				b, err := os.ReadFile(p)
				if err != nil {
					continue
				}
				for _, m := range marks {
					if bytes.Contains(b, []byte(m)) {
						mu.Lock()
						leaked = append(leaked, p+": "+strings.ReplaceAll(string(b), "\x00", " "))
						mu.Unlock()
					}
				}
			}
		}
	}()
	return func() []string {
		close(done)
		wg.Wait()
		return leaked
	}
}

// TestRealSystemPromptPrivate proves, with the real codex 0.169.0, that a
// run's system prompt and an MCP server's headers reach codex without a
// file in the user's CODEX_HOME and without a command line holding them
// (the run goes through codex app-server, which takes them on stdin): the
// system prompt reaches the model as a developer message, after codex's
// own base instructions; no process's command line ever holds it or the
// secret; CODEX_HOME gets no profile; the thread resumes later. A run
// with ExtraArgs takes them on exec's command line, with a warning, and
// refuses the secret.
func TestRealSystemPromptPrivate(t *testing.T) {
	bin, elsewhere := realCodex(t)
	if elsewhere {
		return
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "ok"}, agentclitest.Turn{Text: "again"}, agentclitest.Turn{Text: "exec"})
	defer srv.Close()
	b, dir := realBackend(t, bin, srv)
	codexHome := filepath.Join(filepath.Dir(dir), ".codex") // Wire's
	before, err := os.ReadDir(codexHome)
	if err != nil {
		t.Fatal(err)
	}
	marker := "agentcli-private-" + strings.ReplaceAll(t.Name(), "/", "-")
	secret := "Bearer secret-" + marker
	sys := "Be \"brief\" " + marker + ".\nSecond line -c x=y --help \\ é"
	// codex waits for the server (it is required) and fails the run when
	// it cannot reach it: it must answer.
	mcp := mcptest.NewHTTP()
	defer mcp.Close()
	req := &agentcli.Request{Prompt: "hi", SystemPrompt: sys, Dir: dir, Timeout: time.Minute,
		MCPServers: []agentcli.MCPServer{{Name: "remote", URL: mcp.URL(), Headers: map[string]string{"Authorization": secret}}}}

	stop := watchCmdlines(marker)
	res, err := b.Run(context.Background(), req)
	if leaked := stop(); len(leaked) > 0 {
		t.Fatalf("the system prompt or a secret appeared on a command line: %q", leaked)
	}
	if err != nil || res.Text != "ok" {
		t.Fatalf("run: %+v, %v", res, err)
	}
	reqs := srv.Requests()
	dev := developerMessages(reqs[0])
	if !slices.Contains(dev, sys) {
		t.Fatalf("no developer message equals the system prompt; got %q", dev)
	}
	if len(dev) < 2 || dev[0] == sys || !strings.Contains(dev[0], "Codex") {
		t.Fatalf("codex's base instructions should come first and stay: %q", dev)
	}
	after, err := os.ReadDir(codexHome)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range after {
		if strings.HasSuffix(e.Name(), ".config.toml") && !slices.ContainsFunc(before, func(b os.DirEntry) bool { return b.Name() == e.Name() }) {
			t.Errorf("a profile appeared in CODEX_HOME: %s", e.Name())
		}
	}

	// The thread resumes later, without them.
	res2, err := b.Run(context.Background(), &agentcli.Request{Prompt: "and now?", SessionID: res.SessionID, Dir: dir, Timeout: time.Minute})
	if err != nil || res2.Text != "again" || srv.Requests()[len(srv.Requests())-1].LastUserText() != "and now?" {
		t.Fatalf("resume: %+v, %v", res2, err)
	}

	// With ExtraArgs the run stays on exec: the secret is refused before
	// anything starts; without it the system prompt goes on exec's
	// command line.
	n := len(srv.Requests())
	exec := *req
	exec.ExtraArgs = []string{"--ephemeral"}
	var re *agentcli.RequestError
	if _, err := b.Run(context.Background(), &exec); !errors.As(err, &re) || re.Field != "MCPServers[0]" || len(srv.Requests()) != n {
		t.Fatalf("exec with a secret header: %v", err)
	}
	exec.MCPServers = nil
	if res, err := b.Run(context.Background(), &exec); err != nil || res.Text != "exec" || !slices.Contains(developerMessages(srv.Requests()[n]), sys) {
		t.Fatalf("exec: %+v, %v", res, err)
	}
}

// TestRealMissingCodexHome: a CODEX_HOME that does not exist is reported
// by codex at once, with or without a system prompt, and is not created.
func TestRealMissingCodexHome(t *testing.T) {
	bin, elsewhere := realCodex(t)
	if elsewhere {
		return
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "must not be used"})
	defer srv.Close()
	b, dir := realBackend(t, bin, srv)
	missing := filepath.Join(t.TempDir(), "missing-codex-home")
	for _, sys := range []string{"", "Be brief."} {
		start := time.Now()
		_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", SystemPrompt: sys, Dir: dir, Timeout: time.Minute,
			Env: []string{"CODEX_HOME=" + missing}})
		if err == nil || errors.Is(err, agentcli.ErrTimeout) || !strings.Contains(err.Error(), "CODEX_HOME") || time.Since(start) > 20*time.Second {
			t.Errorf("system prompt %q: %v after %v", sys, err, time.Since(start))
		}
		if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("system prompt %q: CODEX_HOME was created (%v)", sys, err)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("%d model calls", len(srv.Requests()))
	}
}
