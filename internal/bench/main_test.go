package main

import (
	"context"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli/internal/benchdata"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"2MB": 2e6, "2000MB": 2e9, "1GB": 1e9, "300kb": 3e5, "512": 512, "0.5MB": 5e5} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1MB", "x"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

// TestSmoke runs the whole benchmark on tiny streams, agentcli side only
// (the TypeScript SDKs are not installed by the test suite): it builds the
// fake CLI and the runner, runs every contender once for each CLI, and
// checks that the report has a row for each.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	c := config{
		sizes: []int64{200e3}, clis: benchdata.CLIs, rounds: 1,
		slow: true, slowSize: 200e3, slowEvents: 5,
		huge: true, hugeSize: 300e3,
		work: t.TempDir(), timeout: time.Minute,
		// Built like this test, so that scripts/test.sh's compiled
		// packages are reused.
		buildFlags: testBuildFlags,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := bench(ctx, c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, cli := range benchdata.CLIs {
		for row, want := range map[string]int{"agentcli | ": 3, "agentcli, every Raw | ": 1, "bare os/exec": 2, `fake \| cat`: 2} {
			if n := strings.Count(rep, "| "+string(cli)+" | "+row); n != want {
				t.Errorf("%d rows %q, want %d, in\n%s", n, row, want, rep)
			}
		}
	}
	for _, s := range []string{"### Stream of 200 KB", "### Slow consumer", "### One 300 KB line"} {
		if !strings.Contains(rep, s) {
			t.Errorf("no %q in\n%s", s, rep)
		}
	}
}

// TestRunnerLinksWhatUsersLink: the agentcli runner links what a program
// using agentcli links, and none of the module's test machinery, whose
// pages and tables would count in the runner's peak RSS.
func TestRunnerLinksWhatUsersLink(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./gorunner").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/agentcli/agentcli/codex") {
		t.Fatalf("go list -deps ./gorunner lists no codex backend:\n%s", out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "pgregory.net/rapid") || strings.HasSuffix(d, "/drivertest") ||
			strings.HasSuffix(d, "/internal/fakecli") || strings.HasSuffix(d, "/internal/backendtest") || d == "testing" {
			t.Errorf("the runner links %s", d)
		}
	}
}
