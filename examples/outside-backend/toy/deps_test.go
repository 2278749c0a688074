package toy

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const agentcliModule = "github.com/agentcli/agentcli"

// kitInternals are the agentcli packages under internal/ that the public
// kit itself is built on, each with the public packages allowed to import
// it: the process layer (driver, driver/live) and the table of registered
// backends that driver.Register writes and agentcli.Open reads. This
// module reaches them only through those packages, as any program using
// agentcli does; it imports, and needs, nothing else under internal/.
var kitInternals = map[string][]string{
	agentcliModule + "/internal/proc":     {agentcliModule + "/driver", agentcliModule + "/driver/live"},
	agentcliModule + "/internal/registry": {agentcliModule, agentcliModule + "/driver"},
	agentcliModule + "/internal/kitmodes": {agentcliModule + "/driver"},
	agentcliModule + "/internal/hostmcp":  {agentcliModule + "/driver"}, // host tools' MCP server (Run.HostTools)
}

// TestOnlyThePublicKit: `go list -deps -test ./...` of this module (the
// backend, toyagent, the agentrun command, their tests) shows no agentcli
// package under internal/ but those the public kit is built on, and those
// only as imports of the public packages that use them. drivertest in
// particular brings none: the fake CLI, the fault matrix and the hostile
// requests are all public.
func TestOnlyThePublicKit(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true: no go command: %v", err)
		}
		t.Skipf("no go command: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-deps", "-test", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	importers := map[string][]string{} // agentcli internal package → importers
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		// A test variant is listed as "path [path.test]".
		pkg, imports := f[0], f[1:]
		if len(imports) > 0 && strings.HasPrefix(imports[0], "[") {
			imports = imports[1:]
		}
		if strings.HasPrefix(pkg, agentcliModule+"/") {
			seen++
		}
		for _, imp := range imports {
			if strings.HasPrefix(imp, agentcliModule+"/internal/") {
				importers[imp] = append(importers[imp], pkg)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list shows %d agentcli packages; the listing is not what this test reads:\n%s", seen, out)
	}
	for p, by := range importers {
		allowed, ok := kitInternals[p]
		if !ok {
			t.Errorf("%s is in this module's dependencies, imported by %q", p, by)
			continue
		}
		for _, b := range by {
			if !slices.Contains(allowed, b) {
				t.Errorf("%s is imported by %s, which is not one of the public packages built on it (%q)", p, b, allowed)
			}
		}
	}
	for p := range kitInternals {
		if importers[p] == nil {
			t.Errorf("%s is no longer in the dependencies: take it out of kitInternals", p)
		}
	}
}
