package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
)

// installedVersions caches installedVersion by binary path.
var installedVersions sync.Map // string → string

// installedVersion returns the version of the npm package pkg that path (a
// resolved CLI binary) belongs to, read from the package's package.json
// next to the binary's real location, or "" when the binary is not part of
// such a package. It starts no process; results are cached.
func installedVersion(path, pkg string) string {
	if pkg == "" {
		return ""
	}
	if v, ok := installedVersions.Load(path); ok {
		return v.(string)
	}
	v := ""
	if real, err := filepath.EvalSymlinks(path); err == nil {
		for d, i := filepath.Dir(real), 0; i < 4; d, i = filepath.Dir(d), i+1 {
			b, err := os.ReadFile(filepath.Join(d, "package.json"))
			if err != nil {
				continue
			}
			var m struct{ Name, Version string }
			if json.Unmarshal(b, &m) == nil && m.Name == pkg {
				v = m.Version
				break
			}
		}
	}
	installedVersions.Store(path, v)
	return v
}
