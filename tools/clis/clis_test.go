package clis

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"testing"
)

// The embedded files pin every CLI, the lockfile pins the same
// versions as package.json, and every CLI has its own cache directory.
func TestPins(t *testing.T) {
	var lock struct {
		Packages map[string]struct {
			Version              string
			Dependencies         map[string]string
			OptionalDependencies map[string]string
		}
	}
	if err := json.Unmarshal(PackageLock(), &lock); err != nil {
		t.Fatal(err)
	}
	deps := map[string]string{}
	dirs := map[string]bool{}
	for _, c := range All() {
		deps[c.Package] = c.Version
		if got := lock.Packages["node_modules/"+c.Package].Version; got != c.Version {
			t.Errorf("%s: package.json pins %s, the lockfile %s", c.Package, c.Version, got)
		}
		if l, ok := Lookup(c.Name); !ok || l != c || Version(c.Name) != c.Version {
			t.Errorf("Lookup(%q) = %+v, %v", c.Name, l, ok)
		}
		dirs[c.Dir("/cache")] = true
		if c.Bin("/cache") != filepath.Join(c.Dir("/cache"), "node_modules", ".bin", c.Binary) {
			t.Errorf("%s: Bin %s", c.Name, c.Bin("/cache"))
		}
	}
	root := maps.Clone(lock.Packages[""].Dependencies)
	maps.Copy(root, lock.Packages[""].OptionalDependencies)
	if len(deps) != len(All()) || len(dirs) != len(All()) || !maps.Equal(deps, root) {
		t.Errorf("pins %v, lockfile root %v", deps, root)
	}
	for _, name := range []string{"claude", "codex", "gemini", "opencode", "qwen", "droid", "copilot"} {
		if _, ok := Lookup(name); !ok {
			t.Errorf("no pin for %s", name)
		}
	}
	if c, _ := Lookup("droid"); !c.Platform || c.Link != "@factory/cli-linux-x64/bin/droid" || c.Scripts {
		t.Errorf("droid: %+v; want a platform build linked from its bin/droid, no install script", c)
	}
	if _, ok := Lookup("gpt"); ok {
		t.Error("Lookup(gpt) found a CLI")
	}
}
