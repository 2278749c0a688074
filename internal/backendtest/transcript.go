package backendtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Transcript is one run of a real CLI captured by internal/tools/capture:
// testdata/real/<name>.stdout, .stderr and .exit.
type Transcript struct {
	Stdout, Stderr []byte
	Exit           int
}

// ReadTranscript reads testdata/real/<name>.*. A missing or malformed file
// fails the test: the transcripts are committed fixtures.
func ReadTranscript(t testing.TB, name string) Transcript {
	t.Helper()
	base := filepath.Join("testdata", "real", name)
	var tr Transcript
	var err error
	if tr.Stdout, err = os.ReadFile(base + ".stdout"); err != nil {
		t.Fatal(err)
	}
	if tr.Stderr, err = os.ReadFile(base + ".stderr"); err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(base + ".exit")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Exit, err = strconv.Atoi(strings.TrimSpace(string(code))); err != nil {
		t.Fatalf("%s.exit: %v", base, err)
	}
	return tr
}

// SkipUnlessCI skips the test, except under CI=true, where whatever the
// test needs must be there and its absence is a failure.
func SkipUnlessCI(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true: "+format, args...)
	}
	t.Skipf(format, args...)
}

// UsePinnedCLIs puts the CLIs that scripts/install-clis.sh installed
// (tools/clis/node_modules/.bin, found from the package directory upwards)
// first on PATH, so that a backend made with nil Options runs the pinned
// binary. A backend package's TestMain calls it for its examples. It does
// nothing when they are not installed.
func UsePinnedCLIs() {
	dir, err := os.Getwd()
	if err != nil {
		return
	}
	for d := dir; ; d = filepath.Dir(d) {
		bin := filepath.Join(d, "tools", "clis", "node_modules", ".bin")
		if fi, err := os.Stat(bin); err == nil && fi.IsDir() {
			os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			return
		}
		if filepath.Dir(d) == d {
			return
		}
	}
}
