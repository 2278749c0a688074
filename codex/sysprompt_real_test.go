package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// TestRealSystemPromptProfile proves, with the real codex 0.169.0, that a
// system prompt carried by writeSystemProfile and buildArgsProfile reaches
// the model as a developer message, after codex's own base instructions
// (which are kept), while no process's command line (/proc/*/cmdline,
// readable by every local user) ever holds it; that the profile file is
// private and gone afterwards; and that the thread resumes later without
// it.
func TestRealSystemPromptProfile(t *testing.T) {
	bin, elsewhere := realCodex(t)
	if elsewhere {
		return
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "ok"}, agentclitest.Turn{Text: "again"})
	defer srv.Close()
	home := t.TempDir()
	w, err := srv.Wire("codex", home)
	if err != nil {
		t.Fatal(err)
	}
	marker := "agentcli-private-" + strings.ReplaceAll(t.Name(), "/", "-")
	sys := "Be \"brief\" " + marker + ".\nSecond line -c x=y --help \\ é"
	req := &agentcli.Request{Prompt: "hi", SystemPrompt: sys, Dir: w.Dir}

	name, remove, err := writeSystemProfile(w.Env, w.Dir, sys)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	codexHome, _ := codexHome(w.Env, w.Dir)
	profilePath := filepath.Join(codexHome, name+".config.toml")
	if fi, err := os.Stat(profilePath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("profile %s: %v, %v", profilePath, fi, err)
	}
	args := buildArgsProfile(req, w.Dir, name)

	// Watch every process's command line while codex runs.
	done := make(chan struct{})
	var leaked []string
	var mu sync.Mutex
	var wg sync.WaitGroup
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
				if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(marker)) {
					mu.Lock()
					leaked = append(leaked, p+": "+strings.ReplaceAll(string(b), "\x00", " "))
					mu.Unlock()
				}
			}
		}
	}()
	run := func(args []string, prompt string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env, cmd.Dir, cmd.Stdin = w.Env, w.Dir, strings.NewReader(prompt)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("codex %q: %v\n%s", args, err, stderr.String())
		}
		return out
	}
	out := run(args, req.Prompt)
	close(done)
	wg.Wait()
	if len(leaked) > 0 {
		t.Fatalf("the system prompt appeared on a command line: %q", leaked)
	}

	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	dev := developerMessages(reqs[0])
	if !slices.Contains(dev, sys) {
		t.Fatalf("no developer message equals the system prompt; got %q", dev)
	}
	if len(dev) < 2 || dev[0] == sys || !strings.Contains(dev[0], "Codex") {
		t.Fatalf("codex's base instructions should come first and stay: %q", dev)
	}

	remove()
	if _, err := os.Stat(profilePath); !os.IsNotExist(err) {
		t.Fatalf("profile still there: %v", err)
	}
	// The thread does not depend on the profile: it resumes without it.
	var thread string
	for _, line := range bytes.Split(out, []byte("\n")) {
		var ev struct {
			Type     string `json:"type"`
			ThreadID string `json:"thread_id"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Type == "thread.started" {
			thread = ev.ThreadID
		}
	}
	if thread == "" {
		t.Fatalf("no thread.started in %s", out)
	}
	run(buildArgsProfile(&agentcli.Request{SessionID: thread}, w.Dir, ""), "and now?")
	if last := srv.Requests()[len(srv.Requests())-1]; last.LastUserText() != "and now?" {
		t.Fatalf("resumed prompt %q", last.LastUserText())
	}
}
