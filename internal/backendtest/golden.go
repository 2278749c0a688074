package backendtest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Update makes GoldenArgs rewrite golden files instead of comparing:
// go test ./<backend> -run Golden -update
var Update = flag.Bool("update", false, "rewrite golden files in testdata")

// GoldenArgs compares args, one per line, with testdata/args/<name>.golden.
func GoldenArgs(t *testing.T, name string, args []string) {
	t.Helper()
	got := strings.Join(args, "\n") + "\n"
	path := filepath.Join("testdata", "args", name+".golden")
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("argv differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
