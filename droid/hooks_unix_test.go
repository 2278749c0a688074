//go:build unix

package droid

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelayCommand: the hook command runs the binary at path with the
// relay script as its one argument and BUN_BE_BUN=1, whatever the paths
// hold, and a failure of the binary exits 2 (which blocks the call).
func TestRelayCommand(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "it's $HOME `x` \"q\"")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nprintf '%s|%s|%s' \"$BUN_BE_BUN\" \"$#\" \"$1\"\n[ \"$1\" != fail ] || exit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	relay := filepath.Join(dir, "relay $(x) 'a'.mjs")
	out, err := exec.Command("sh", "-c", relayCommand(bin, relay)).Output()
	if err != nil || string(out) != "1|1|"+relay {
		t.Errorf("the relay command printed %q (%v), want %q", out, err, "1|1|"+relay)
	}
	err = exec.Command("sh", "-c", relayCommand(bin, "fail")).Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("a failing relay: %v, want exit status 2", err)
	}
	if !strings.HasPrefix(relayCommand(bin, relay), "BUN_BE_BUN=1 ") {
		t.Errorf("relay command %q", relayCommand(bin, relay))
	}
}
