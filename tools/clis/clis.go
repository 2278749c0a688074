// Package clis knows the CLI versions this release of agentcli is tested
// with, and where `agentcli install` (cmd/agentcli) puts them.
//
// The versions are tools/clis/package.json and package-lock.json, embedded:
// the files scripts/install-clis.sh installs from, so there is one list of
// pinned versions. Backends report them as the tested version (Doctor) and
// name them in the hint of a missing binary; they look for the binary on
// PATH first, then in the per-user cache where `go run
// github.com/agentcli/agentcli/cmd/agentcli install` installs these exact
// versions (CacheDir, CLI.Bin).
package clis

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

//go:embed package.json
var packageJSON []byte

//go:embed package-lock.json
var packageLock []byte

// PackageJSON returns tools/clis/package.json: the pinned CLIs, as npm
// dependencies with exact versions.
func PackageJSON() []byte { return slices.Clone(packageJSON) }

// PackageLock returns tools/clis/package-lock.json: the pinned CLIs and
// everything they depend on, at exact versions.
func PackageLock() []byte { return slices.Clone(packageLock) }

// CLI is one pinned CLI.
type CLI struct {
	// Name is the backend's registry name, e.g. "codex".
	Name string
	// Binary is the executable the npm package installs, e.g. "codex".
	Binary string
	// Package is the npm package, e.g. "@openai/codex".
	Package string
	// Version is the pinned version, e.g. "0.169.0".
	Version string
	// Scripts reports that the package's install script must run (it
	// links the platform binary into place); see package.json's
	// allowScripts.
	Scripts bool
	// Platform reports that Package is a platform build (an npm optional
	// dependency, published for some systems only: droid's for
	// linux/x64), which npm skips elsewhere.
	Platform bool
	// Link, if set, is the executable's path under node_modules for a
	// package that declares no bin of its own; the installers link
	// node_modules/.bin/Binary to it.
	Link string
}

// links maps backends whose package declares no bin to the executable.
var links = map[string]string{
	// The platform build of @factory/cli, run directly: the shim package
	// (@factory/cli) is a node script that runs it as a child and exits 0
	// when that child is killed by a signal, and its install script
	// downloads the build when npm did not install it.
	"droid": "@factory/cli-linux-x64/bin/droid",
}

// known maps npm packages to their backend and binary names.
var known = map[string][2]string{
	"@anthropic-ai/claude-code": {"claude", "claude"},
	"@openai/codex":             {"codex", "codex"},
	"@google/gemini-cli":        {"gemini", "gemini"},
	"opencode-ai":               {"opencode", "opencode"},
	"@qwen-code/qwen-code":      {"qwen", "qwen"},
	"@factory/cli-linux-x64":    {"droid", "droid"},
	"@github/copilot":           {"copilot", "copilot"},
}

var all = func() []CLI {
	var pj struct {
		Dependencies         map[string]string `json:"dependencies"`
		OptionalDependencies map[string]string `json:"optionalDependencies"`
		AllowScripts         map[string]bool   `json:"allowScripts"`
	}
	if err := json.Unmarshal(packageJSON, &pj); err != nil {
		panic("clis: package.json: " + err.Error())
	}
	var out []CLI
	for i, deps := range []map[string]string{pj.Dependencies, pj.OptionalDependencies} {
		for pkg, v := range deps {
			n, ok := known[pkg]
			if !ok {
				panic("clis: package.json pins " + pkg + ", which no backend runs")
			}
			out = append(out, CLI{Name: n[0], Binary: n[1], Package: pkg, Version: v, Scripts: pj.AllowScripts[pkg],
				Platform: i == 1, Link: links[n[0]]})
		}
	}
	slices.SortFunc(out, func(a, b CLI) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return out
}()

// All returns the pinned CLIs, sorted by name.
func All() []CLI { return slices.Clone(all) }

// Lookup returns the pinned CLI of the backend name ("claude", "codex",
// "gemini", "opencode").
func Lookup(name string) (CLI, bool) {
	for _, c := range all {
		if c.Name == name {
			return c, true
		}
	}
	return CLI{}, false
}

// Version returns the pinned version of the backend name; it panics when
// name pins nothing (a backend's package declares its own name).
func Version(name string) string {
	c, ok := Lookup(name)
	if !ok {
		panic("clis: no pinned CLI for " + name)
	}
	return c.Version
}

// CacheDir returns the per-user directory `agentcli install` installs
// into: agentcli/clis in os.UserCacheDir ($XDG_CACHE_HOME or ~/.cache on
// Linux, ~/Library/Caches on macOS).
func CacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "agentcli", "clis"), nil
}

// Dir returns the directory that holds c's installation in cache (see
// CacheDir): one per CLI and version, so that installing one CLI leaves
// the others alone and a release with other pins installs next to them.
func (c CLI) Dir(cache string) string {
	return filepath.Join(cache, fmt.Sprintf("%s-%s", c.Name, c.Version))
}

// Bin returns the path of c's executable in cache (see CacheDir).
func (c CLI) Bin(cache string) string {
	return filepath.Join(c.Dir(cache), "node_modules", ".bin", c.Binary)
}

// InstallCommand is the command that installs the pinned CLIs into the
// cache, for hints: run with the names of the CLIs to install (all of
// them when none is given).
const InstallCommand = "go run github.com/agentcli/agentcli/cmd/agentcli install"
