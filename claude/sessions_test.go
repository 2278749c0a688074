package claude

import (
	"strings"
	"testing"
)

// TestProjectKey: claude's folder name of a directory under projects/
// (the expected keys were computed by claude 2.1.330's own function, run
// under node, for these paths).
func TestProjectKey(t *testing.T) {
	for dir, want := range map[string]string{
		"/home/u/work":                              "-home-u-work",
		"/tmp/a b/é😀":                               "-tmp-a-b----",
		"/" + strings.Repeat("x", 250):              "-" + strings.Repeat("x", 199) + "-v734pd",
		"/srv/" + strings.Repeat("proj-", 50) + "z": "-srv-" + strings.Repeat("proj-", 39) + "-s2v0rx",
	} {
		if got := projectKey(dir); got != want {
			t.Errorf("projectKey(%q) = %q, want %q", dir, got, want)
		}
	}
}
