package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Variables of the guard (see procguard_linux.go).
const (
	// envTag marks the processes a gateway started (its CLIs and what
	// they start), with the tag of its state directory.
	envTag = "AGENT_GATEWAY_TAG"
	// envExec and envParent make the gateway's binary a CLI's guard: the
	// CLI to exec, and the gateway's pid.
	envExec   = "AGENT_GATEWAY_EXEC"
	envParent = "AGENT_GATEWAY_PARENT"
)

// errLocked: another gateway holds the state directory.
var errLocked = errors.New("another gateway is running with this STATE_DIR")

// stateTag returns the tag of the state directory dir, made once and kept
// in dir/tag.
func stateTag(dir string) (string, error) {
	p := filepath.Join(dir, "tag")
	b, err := os.ReadFile(p)
	tag := strings.TrimSpace(string(b))
	if err == nil && len(tag) == 32 {
		return tag, nil
	}
	var r [16]byte
	rand.Read(r[:])
	tag = hex.EncodeToString(r[:])
	if err := writeAtomic(p, []byte(tag+"\n"), true); err != nil {
		return "", fmt.Errorf("writing %s: %w", p, err)
	}
	return tag, nil
}
