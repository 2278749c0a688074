package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/claude"
	"github.com/agentcli/agentcli/codex"
	"github.com/agentcli/agentcli/tools/clis"
)

// TestMain makes the test binary a fake npm when AGENTCLI_FAKE_NPM is set:
// "npm install" in a directory whose package.json depends on pinned CLIs
// creates node_modules/.bin/BINARY for each, a script that prints
// AGENTCLI_FAKE_VERSION (default: the version package.json asks for). Each
// call is appended to AGENTCLI_FAKE_NPM_LOG; AGENTCLI_FAKE_NPM=fail makes
// it fail.
func TestMain(m *testing.M) {
	if mode := os.Getenv("AGENTCLI_FAKE_NPM"); mode != "" {
		os.Exit(fakeNPM(mode))
	}
	os.Exit(m.Run())
}

func fakeNPM(mode string) int {
	dir, _ := os.Getwd()
	if f, err := os.OpenFile(os.Getenv("AGENTCLI_FAKE_NPM_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintf(f, "%s %s\n", dir, strings.Join(os.Args[1:], " "))
		f.Close()
	}
	if mode == "fail" || len(os.Args) < 2 || os.Args[1] != "install" {
		fmt.Fprintln(os.Stderr, "npm ERR! fake failure")
		return 1
	}
	var pj struct{ Dependencies, OptionalDependencies map[string]string }
	b, err := os.ReadFile("package.json")
	if err != nil || json.Unmarshal(b, &pj) != nil {
		return 1
	}
	if pj.Dependencies == nil {
		pj.Dependencies = map[string]string{}
	}
	for pkg, v := range pj.OptionalDependencies {
		pj.Dependencies[pkg] = v
	}
	for pkg, v := range pj.Dependencies {
		for _, c := range clis.All() {
			if c.Package != pkg {
				continue
			}
			if fv := os.Getenv("AGENTCLI_FAKE_VERSION"); fv != "" {
				v = fv
			}
			bin := filepath.Join("node_modules", ".bin", c.Binary)
			if c.Link != "" {
				bin = filepath.Join("node_modules", filepath.FromSlash(c.Link)) // the installer links .bin to it
			}
			os.MkdirAll(filepath.Dir(bin), 0o755)
			os.WriteFile(bin, []byte("#!/bin/sh\necho '"+v+" (fake "+c.Name+")'\n"), 0o755)
		}
	}
	return 0
}

// setup puts a fake npm (and nothing else of the caller's) on PATH, and
// the cache in a temporary directory; it returns the cache and npm's log.
func setup(t *testing.T, mode string) (cache, log string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "npm")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	log = filepath.Join(home, "npm.log")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+"/usr/bin"+string(os.PathListSeparator)+"/bin")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("AGENTCLI_FAKE_NPM", mode)
	t.Setenv("AGENTCLI_FAKE_NPM_LOG", log)
	return filepath.Join(home, "cache", "agentcli", "clis"), log
}

func npmCalls(t *testing.T, log string) []string {
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// install puts each pinned CLI, at its pinned version, with the pinned
// lockfile, in its own directory of the user cache; a second install is a
// no-op; the backends then find the CLI there when it is not on PATH.
func TestInstall(t *testing.T) {
	cache, log := setup(t, "ok")
	var out, errOut bytes.Buffer
	if code := run([]string{"install", "claude"}, &out, &errOut); code != 0 {
		t.Fatalf("install claude: %d, %s", code, errOut.String())
	}
	c, _ := clis.Lookup("claude")
	dir := filepath.Join(cache, "claude-"+c.Version)
	if want := "claude " + c.Version + " installed: " + filepath.Join(dir, "node_modules", ".bin", "claude") + "\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	var pj struct {
		Dependencies map[string]string
		AllowScripts map[string]bool
	}
	b, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	if err := json.Unmarshal(b, &pj); err != nil || len(pj.Dependencies) != 1 || pj.Dependencies["@anthropic-ai/claude-code"] != c.Version || !pj.AllowScripts["@anthropic-ai/claude-code"] {
		t.Errorf("package.json %s (%v)", b, err)
	}
	if lock, _ := os.ReadFile(filepath.Join(dir, "package-lock.json")); !bytes.Equal(lock, clis.PackageLock()) {
		t.Error("the lockfile is not the pinned one")
	}
	if calls := npmCalls(t, log); len(calls) != 1 || calls[0] != dir+" install --no-audit --no-fund --no-save --loglevel=error" {
		t.Errorf("npm calls %q", calls)
	}

	// Again: nothing to do.
	out.Reset()
	if code := run([]string{"install", "claude"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "already installed") || len(npmCalls(t, log)) != 1 {
		t.Errorf("second install: %d %q, npm calls %q", code, out.String(), npmCalls(t, log))
	}

	// The backend finds it: claude is not on PATH.
	b1 := claude.New(nil)
	if err := b1.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	d := agentcli.Doctor(context.Background(), nil)
	for _, x := range d {
		if x.Backend == "claude" && (x.Path != filepath.Join(dir, "node_modules", ".bin", "claude") || !x.InRange) {
			t.Errorf("doctor %+v", x)
		}
	}
	// codex is not installed: its hint names the command and the version.
	err := codex.New(nil).Check(context.Background())
	cv, _ := clis.Lookup("codex")
	if !errors.Is(err, agentcli.ErrNotFound) || !strings.Contains(err.Error(), clis.InstallCommand+" codex") || !strings.Contains(err.Error(), "@openai/codex@"+cv.Version) {
		t.Errorf("codex: %v", err)
	}

	// No names: all of them; claude is already there.
	out.Reset()
	if code := run([]string{"install"}, &out, &errOut); code != 0 || strings.Count(out.String(), "\n") != len(clis.All()) || len(npmCalls(t, log)) != len(clis.All()) {
		t.Errorf("install all: %d %q %q, npm calls %q", code, out.String(), errOut.String(), npmCalls(t, log))
	}
	if err := codex.New(nil).Check(context.Background()); err != nil {
		t.Errorf("codex after install: %v", err)
	}
}

func TestInstallErrors(t *testing.T) {
	_, log := setup(t, "fail")
	var out, errOut bytes.Buffer
	if code := run([]string{"install", "gemini"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "npm install") || out.Len() != 0 {
		t.Errorf("failing npm: %d %q %q", code, out.String(), errOut.String())
	}
	// A CLI that does not report the pinned version is not installed.
	t.Setenv("AGENTCLI_FAKE_NPM", "ok")
	t.Setenv("AGENTCLI_FAKE_VERSION", "9.9.9")
	errOut.Reset()
	if code := run([]string{"install", "gemini"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "9.9.9") {
		t.Errorf("wrong version: %d %q", code, errOut.String())
	}
	if code := run([]string{"install", "gpt"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "valid: claude, codex, copilot, droid, gemini, opencode, qwen") {
		t.Errorf("unknown name: %d %q", code, errOut.String())
	}
	if code := run([]string{"frobnicate"}, &out, &errOut); code != 2 {
		t.Errorf("unknown command: %d", code)
	}
	if n := len(npmCalls(t, log)); n != 2 {
		t.Errorf("%d npm calls, want 2", n)
	}
	// Without npm.
	t.Setenv("PATH", t.TempDir())
	errOut.Reset()
	if code := run([]string{"install", "opencode"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "npm is not on PATH") {
		t.Errorf("no npm: %d %q", code, errOut.String())
	}
}
