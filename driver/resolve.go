package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/tools/clis"
)

// path returns the configured binary path or name.
func (b *Backend) path() string {
	if b.opts.Path != "" {
		return b.opts.Path
	}
	return b.spec.Binary
}

// resolve finds the binary: Options.Path; else the backend's binary on
// PATH, then the pinned version in the per-user cache that `agentcli
// install` fills (clis.CacheDir). Errors are *agentcli.BinaryError; a
// missing binary's error says how to install the tested version and how
// to point agentcli at a binary.
func (b *Backend) resolve() (string, error) {
	path := b.path()
	pinned, isPinned := clis.Lookup(b.spec.Name)
	isPinned = isPinned && pinned.Binary == b.spec.Binary
	berr := func(kind, cause error) error {
		e := &agentcli.BinaryError{Backend: b.spec.Name, Path: path, Err: kind, Cause: cause}
		if kind == agentcli.ErrNotFound {
			e.Hint = "set Options.Path to the " + b.spec.Binary + " binary (agentcli.ConfigFromEnv reads it from BACKEND_CLI_PATH)"
			switch {
			case isPinned:
				e.Hint = fmt.Sprintf("install the tested version (%s@%s) with `%s %s`, or %s",
					pinned.Package, pinned.Version, clis.InstallCommand, b.spec.Name, e.Hint)
			case b.spec.Package != "":
				e.Hint = "install it with `npm install -g " + b.spec.Package + "`, or " + e.Hint
			}
		}
		return e
	}
	if !strings.ContainsRune(path, os.PathSeparator) && !strings.Contains(path, "/") {
		p, err := exec.LookPath(path)
		if err == nil {
			return p, nil
		}
		if path == b.spec.Binary && isPinned {
			if cache, cerr := clis.CacheDir(); cerr == nil {
				if c := pinned.Bin(cache); isExecutable(c) {
					return c, nil
				}
			}
		}
		// LookPath also fails for a non-executable file of that name on
		// PATH; tell the two apart.
		for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
			if dir == "" {
				dir = "."
			}
			if fi, serr := os.Stat(filepath.Join(dir, path)); serr == nil && !fi.IsDir() {
				return "", berr(agentcli.ErrNotExecutable, fs.ErrPermission)
			}
		}
		return "", berr(agentcli.ErrNotFound, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", berr(agentcli.ErrNotFound, err)
	}
	if fi.IsDir() {
		return "", berr(agentcli.ErrNotExecutable, errors.New("is a directory"))
	}
	if !executable(fi) {
		return "", berr(agentcli.ErrNotExecutable, fs.ErrPermission)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, nil
}

// isExecutable reports whether path is an executable regular file
// (symbolic links followed).
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && executable(fi)
}

// absDir returns dir made absolute, or the current directory for "".
func absDir(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	return filepath.Abs(dir)
}

// envDrop lists inherited variables never passed to a CLI. CLAUDECODE marks
// a process as running inside Claude Code; a nested claude refuses to start
// when it sees it.
var envDrop = map[string]bool{"CLAUDECODE": true}

// env builds the child environment: the parent's environment minus envDrop
// (unless req.ReplaceEnv), then Options.Env, then req.Env. Later entries
// win (os/exec keeps the last value of a duplicated key).
func (b *Backend) env(req *agentcli.Request) []string {
	var env []string
	if !req.ReplaceEnv {
		parent := os.Environ()
		env = make([]string, 0, len(parent)+len(b.opts.Env)+len(req.Env)+4)
		for _, kv := range parent {
			k, _, _ := strings.Cut(kv, "=")
			if !envDrop[k] {
				env = append(env, kv)
			}
		}
	}
	env = append(env, b.opts.Env...)
	return append(env, req.Env...)
}

// Lookup returns the value of key in env; the last entry wins, as with
// os/exec.
func Lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
