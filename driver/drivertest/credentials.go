package drivertest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// CredentialWay is one way a CLI finds a credential, for
// CheckCredentials: variables to set, files to write and a model to ask
// for.
type CredentialWay struct {
	// Name describes the way.
	Name string
	// Env holds "KEY=value" entries added to the run's environment; a
	// value that starts with "~/" is under the run's home directory.
	Env []string
	// Files maps paths to contents; a path starts with "~/" (the run's
	// home directory) or "./" (its working directory).
	Files map[string]string
	// Model is the request's model.
	Model string
	// ExtraArgs are the request's extra arguments.
	ExtraArgs []string
}

// CheckCredentials checks that a run of k's backend whose environment has
// no credential at all (a fresh home directory, nothing inherited, no
// Kit.Env) fails before the CLI starts, within seconds, with an
// *agentcli.CredentialsError that matches ErrAuth and names vars (the
// backend's driver.Spec.Credentials); so does a live session, when the
// backend has them. Each of ways (one of which should be ExtraArgs, which
// the backend leaves to the CLI) makes the same run start the CLI and
// succeed.
func CheckCredentials(t *testing.T, k Kit, vars []string, ways []CredentialWay) {
	t.Helper()
	run := func(t *testing.T, w CredentialWay) ([]int, error) {
		t.Helper()
		dir := t.TempDir()
		env, err := FakeEnv(dir, k.Name, k.Success("ok", "s-1")...) // no k.Env: no credential
		if err != nil {
			t.Fatal(err)
		}
		b := k.New(&agentcli.Options{Path: Self(t), KillGrace: 300 * time.Millisecond, Env: env})
		home, work := t.TempDir(), t.TempDir()
		for p, content := range w.Files {
			switch {
			case strings.HasPrefix(p, "~/"):
				p = filepath.Join(home, p[2:])
			case strings.HasPrefix(p, "./"):
				p = filepath.Join(work, p[2:])
			default:
				t.Fatalf("file %q is not under ~/ or ./", p)
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		req := &agentcli.Request{Prompt: "hi", Dir: work, ReplaceEnv: true, Model: w.Model, ExtraArgs: w.ExtraArgs,
			Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}}
		for _, kv := range w.Env {
			req.Env = append(req.Env, strings.Replace(kv, "=~/", "="+home+"/", 1))
		}
		start := time.Now()
		_, err = b.Run(context.Background(), req)
		if d := time.Since(start); err != nil && d > 10*time.Second {
			t.Errorf("the run failed after %v", d)
		}
		if _, live := b.(driver.SessionStarter); live && err != nil && errors.Is(err, agentcli.ErrAuth) {
			// A live session fails the same way.
			sreq := *req
			sreq.Prompt = "" // StartSession runs no turn
			if s, serr := agentcli.StartSession(context.Background(), b, &sreq); serr == nil || !errors.Is(serr, agentcli.ErrAuth) {
				if s != nil {
					s.Close()
				}
				t.Errorf("StartSession without credentials: %v", serr)
			}
		}
		return Pids(dir), err
	}
	pids, err := run(t, CredentialWay{})
	var ce *agentcli.CredentialsError
	if !errors.As(err, &ce) || !errors.Is(err, agentcli.ErrAuth) || ce.Backend != k.Name || strings.Join(ce.Variables, ",") != strings.Join(vars, ",") {
		t.Fatalf("no credentials: err %v; want a *CredentialsError for %v", err, vars)
	}
	for _, v := range vars {
		if !strings.Contains(err.Error(), v) {
			t.Errorf("the error %q does not name %s", err, v)
		}
	}
	if len(pids) != 0 {
		t.Errorf("the CLI started without credentials: %v", pids)
	}
	for _, w := range ways {
		t.Run(w.Name, func(t *testing.T) {
			if pids, err := run(t, w); err != nil || len(pids) == 0 {
				t.Errorf("err %v, the CLI ran: %v", err, len(pids) > 0)
			}
		})
	}
}

// CheckNoHomeWrites runs req (a request with settings that need private
// files: a system prompt, MCP servers with Env, ...) on k's backend with a
// fresh, empty home directory (HOME, and the CLI homes pointed into it by
// env entries whose value starts with "~/", which do not exist) and checks
// that the run leaves the home as it was: agentcli creates no CLI home and
// writes no file there (its private files live in the run's own temporary
// directory), except allowed (paths relative to the home). The run must
// succeed.
func CheckNoHomeWrites(t *testing.T, k Kit, req *agentcli.Request, env []string, allowed ...string) {
	t.Helper()
	home := t.TempDir()
	// The answer is JSON, for a request with an output schema.
	b, _ := k.Setup(t, nil, k.Success(`{}`, "01a20096-ac79-7f83-8b64-1211be7331ad")...)
	r := *req
	r.Env = append([]string{"HOME=" + home}, r.Env...)
	for _, kv := range env {
		r.Env = append(r.Env, strings.Replace(kv, "=~/", "="+home+"/", 1))
	}
	if r.Dir == "" {
		r.Dir = t.TempDir()
	}
	if _, err := b.Run(context.Background(), &r); err != nil {
		t.Fatalf("run: %v", err)
	}
	var found []string
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if p == home || err != nil {
			return nil
		}
		rel, _ := filepath.Rel(home, p)
		for _, a := range allowed {
			if rel == a || strings.HasPrefix(a, rel+string(filepath.Separator)) {
				return nil
			}
		}
		found = append(found, rel)
		return nil
	})
	if len(found) > 0 {
		t.Errorf("the run wrote into the home directory: %q", found)
	}
}
