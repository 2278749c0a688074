package backendtest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Transcript is one run of a real CLI captured by internal/capture:
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
// binary. A backend package's TestMain calls it for its examples, which
// run cli, before m.Run.
//
// When cli is neither installed there nor on PATH (a fresh clone), the
// examples named can only fail (they log.Fatal): outside CI they are
// skipped (added to -test.skip) with a message on stderr saying so and how
// to install the CLIs. Under CI=true they run, and fail, as any real-CLI
// test does there.
func UsePinnedCLIs(cli string, examples ...string) {
	if dir, err := os.Getwd(); err == nil {
		for d := dir; ; d = filepath.Dir(d) {
			bin := filepath.Join(d, "tools", "clis", "node_modules", ".bin")
			if fi, err := os.Stat(bin); err == nil && fi.IsDir() {
				os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, err := exec.LookPath(cli); err == nil || len(examples) == 0 || os.Getenv("CI") == "true" {
		return
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	skip := "^(" + strings.Join(examples, "|") + ")$"
	if f := flag.Lookup("test.skip"); f != nil {
		if old := f.Value.String(); old != "" {
			skip = old + "|" + skip
		}
		if err := f.Value.Set(skip); err == nil {
			fmt.Fprintf(os.Stderr, "%s is not installed (bash scripts/install-clis.sh) nor on PATH: skipping the examples that run it (%s); under CI=true they run, and fail\n",
				cli, strings.Join(examples, ", "))
		}
	}
}
