package driver

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
)

// checkCredentials fails a run (or a live session) whose CLI has no
// credential it could use (Spec.HasCredentials), before it starts, with an
// *agentcli.CredentialsError. Extra arguments can point a CLI anywhere (a
// settings file, a local provider): a request with ExtraArgs is left to
// the CLI.
func (b *Backend) checkCredentials(r *Run) error {
	if b.hasCredentials(r) {
		return nil
	}
	return b.credentialsError()
}

func (b *Backend) hasCredentials(r *Run) bool {
	return b.spec.HasCredentials == nil || len(r.Req.ExtraArgs) > 0 || b.spec.HasCredentials(r)
}

func (b *Backend) credentialsError() error {
	return &agentcli.CredentialsError{Backend: b.spec.Name, Variables: slices.Clone(b.spec.Credentials), Hint: b.spec.Login}
}

// AnySet reports whether one of vars is set, not empty, in the run's
// environment.
func (r *Run) AnySet(vars ...string) bool {
	for _, v := range vars {
		if strings.TrimSpace(r.Lookup(v)) != "" {
			return true
		}
	}
	return false
}

// AnySetMatching reports whether a variable of the run's environment whose
// name ends with one of suffixes is set, not empty.
func (r *Run) AnySetMatching(suffixes ...string) bool {
	for _, kv := range r.Env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.TrimSpace(v) == "" || strings.TrimSpace(r.Lookup(k)) == "" {
			continue // empty, or overridden by a later empty entry
		}
		for _, s := range suffixes {
			if strings.HasSuffix(k, s) {
				return true
			}
		}
	}
	return false
}

// Home returns the CLI's home directory: HOME in the run's environment,
// or, when it has none, this process's.
func (r *Run) Home() string {
	if h := r.Lookup("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// XDG returns the XDG base directory the CLI uses: the variable key in the
// run's environment when it is an absolute path, else def under the home
// directory (".config", ".local/share", ...).
func (r *Run) XDG(key, def string) string {
	if v := r.Lookup(key); filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(r.Home(), def)
}

// FileExists reports whether path names a file that is not empty.
func FileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// FileMentions reports whether the file at path (its first MiB) contains
// one of words.
func FileMentions(path string, words ...string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return false
	}
	for _, w := range words {
		if bytes.Contains(b, []byte(w)) {
			return true
		}
	}
	return false
}

// UpFrom returns dir and each of its parents, up to the root.
func UpFrom(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}
