// Command agentcli installs the CLI versions agentcli is tested with into a
// per-user cache, where agentcli's backends find them when the CLI is not
// on PATH:
//
//	go run github.com/agentcli/agentcli/cmd/agentcli install [claude|codex|gemini|opencode|qwen|droid|copilot ...]
//
// Run from a module that requires agentcli, it installs the versions that
// agentcli version pins (tools/clis/package.json and its lockfile,
// embedded), with npm, into agentcli/clis in the user cache directory
// ($XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS), one
// directory per CLI and version. With no names it installs all of them
// (droid's pinned build is for linux/x64 only; elsewhere it fails alone). An
// installed CLI is checked to run (--version); installing again is a
// no-op. npm must be on PATH, and needs the network.
//
//	go run github.com/agentcli/agentcli/cmd/agentcli path [names]
//
// prints where each pinned CLI is (or would be) installed.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/agentcli/agentcli/tools/clis"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: agentcli install [name ...]   install the pinned CLIs (all when no name is given)
       agentcli path [name ...]      print where each pinned CLI is installed

names: %s
`

func run(args []string, stdout, stderr io.Writer) int {
	var names []string
	for _, c := range clis.All() {
		names = append(names, c.Name)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(stderr, usage, strings.Join(names, ", "))
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	picked, err := pick(args[1:])
	if err != nil {
		fmt.Fprintln(stderr, "agentcli:", err)
		return 2
	}
	cache, err := clis.CacheDir()
	if err != nil {
		fmt.Fprintln(stderr, "agentcli: no user cache directory:", err)
		return 1
	}
	switch args[0] {
	case "install":
		code := 0
		for _, c := range picked {
			bin, fresh, err := install(c, cache, stderr)
			if err != nil {
				fmt.Fprintf(stderr, "agentcli: %s %s: %v\n", c.Name, c.Version, err)
				code = 1
				continue
			}
			state := "installed"
			if !fresh {
				state = "already installed"
			}
			fmt.Fprintf(stdout, "%s %s %s: %s\n", c.Name, c.Version, state, bin)
		}
		return code
	case "path":
		for _, c := range picked {
			fmt.Fprintln(stdout, c.Bin(cache))
		}
		return 0
	}
	fmt.Fprintf(stderr, "agentcli: unknown command %q\n"+usage, args[0], strings.Join(names, ", "))
	return 2
}

// pick returns the pinned CLIs named (all of them for none).
func pick(names []string) ([]clis.CLI, error) {
	if len(names) == 0 {
		return clis.All(), nil
	}
	var out []clis.CLI
	for _, n := range names {
		c, ok := clis.Lookup(strings.ToLower(strings.TrimSpace(n)))
		if !ok {
			var valid []string
			for _, c := range clis.All() {
				valid = append(valid, c.Name)
			}
			return nil, fmt.Errorf("no pinned CLI named %q (valid: %s)", n, strings.Join(valid, ", "))
		}
		out = append(out, c)
	}
	return out, nil
}

// stampName is the file that records a finished installation: the
// lockfile's hash, so that another set of pins installs again.
const stampName = ".agentcli-installed"

// install installs c into its directory in cache, unless it is there
// already, and returns its executable and whether it was installed now.
func install(c clis.CLI, cache string, npmOut io.Writer) (bin string, fresh bool, err error) {
	dir, bin := c.Dir(cache), c.Bin(cache)
	sum := sha256.Sum256(clis.PackageLock())
	want := hex.EncodeToString(sum[:])
	stamp := filepath.Join(dir, stampName)
	if got, err := os.ReadFile(stamp); err == nil && string(got) == want && runs(bin, c.Version) == nil {
		return bin, false, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", false, errors.New("npm is not on PATH (install Node.js and npm)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	// A package.json with this one CLI, at its pinned version, and the
	// whole lockfile, so that what it depends on is pinned too. Only
	// the install scripts package.json allows run (they link the
	// platform binary, an npm dependency, into place).
	pj := map[string]any{
		"name":         "agentcli-" + c.Name,
		"private":      true,
		"description":  "Installed by `" + clis.InstallCommand + "`: the " + c.Name + " version agentcli is tested with.",
		"dependencies": map[string]string{c.Package: c.Version},
	}
	if c.Platform {
		// A platform build (os/cpu in its package.json): npm refuses it
		// as a dependency on another platform, and skips it as an
		// optional one, which the check below then reports.
		pj["optionalDependencies"] = pj["dependencies"]
		delete(pj, "dependencies")
	}
	if c.Scripts {
		pj["allowScripts"] = map[string]bool{c.Package: true}
	}
	b, err := json.MarshalIndent(pj, "", "  ")
	if err != nil {
		return "", false, err
	}
	os.Remove(stamp)
	if err := os.WriteFile(filepath.Join(dir, "package.json"), append(b, '\n'), 0o644); err != nil {
		return "", false, err
	}
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), clis.PackageLock(), 0o644); err != nil {
		return "", false, err
	}
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = npmOut, npmOut
	if err := cmd.Run(); err != nil {
		return "", false, fmt.Errorf("npm install in %s: %w", dir, err)
	}
	if c.Link != "" {
		target := filepath.Join(dir, "node_modules", filepath.FromSlash(c.Link))
		if _, err := os.Stat(target); err != nil {
			return "", false, fmt.Errorf("%s@%s has no build for this platform (%s/%s)", c.Package, c.Version, runtime.GOOS, runtime.GOARCH)
		}
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			return "", false, err
		}
		os.Remove(bin)
		rel, err := filepath.Rel(filepath.Dir(bin), target)
		if err != nil {
			return "", false, err
		}
		if err := os.Symlink(rel, bin); err != nil {
			return "", false, err
		}
	}
	if err := runs(bin, c.Version); err != nil {
		return "", false, err
	}
	if err := os.WriteFile(stamp, []byte(want), 0o644); err != nil {
		return "", false, err
	}
	return bin, true, nil
}

// runs checks that bin runs and reports version.
func runs(bin, version string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %v: %s", bin, err, bytes.TrimSpace(out))
	}
	if !bytes.Contains(out, []byte(version)) {
		return fmt.Errorf("%s --version printed %q, not %s", bin, bytes.TrimSpace(out), version)
	}
	return nil
}
