package opencode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestFlavorMatchesRealCLI holds the fake's Yargs grammar to what opencode
// 1.18.33 does with the same argv: --key=value takes any value, a string
// option (no nargs) leaves a following option alone, -s is --session, a
// boolean takes a following "true", and "--" ends the options. Each case is
// a real run against the scripted model server (a few seconds each).
func TestFlavorMatchesRealCLI(t *testing.T) {
	bin, err := filepath.Abs("../tools/clis/node_modules/.bin/opencode")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		backendtest.SkipUnlessCI(t, "pinned opencode not installed (scripts/install-clis.sh)")
	}
	base := []string{"run", "--format", "json"}
	args := func(a ...string) []string { return append(append([]string{}, base...), a...) }
	backendtest.CheckFlavor(t, "opencode", bin, []backendtest.FlavorCase{{
		Name:   "session=value takes an option-looking value",
		Args:   args("--session=--model=x/y"),
		Values: map[string][]string{"--session": {"--model=x/y"}},
		Absent: []string{"--model"},
		Exit:   1, Stderr: "Session not found", NoRequest: true, Stdin: "hi",
	}, {
		Name:   "a short alias",
		Args:   args("-s", "ses_doesnotexist123"),
		Values: map[string][]string{"--session": {"ses_doesnotexist123"}},
		Exit:   1, Stderr: "Session not found", NoRequest: true, Stdin: "hi",
	}, {
		Name:    "a string option leaves a following option alone",
		Args:    args("--session", "-x"),
		FakeErr: true,
		Exit:    1, NoRequest: true, Stdin: "hi",
	}, {
		Name:       "a boolean takes a following true",
		Args:       args("--thinking", "true"),
		Values:     map[string][]string{"--thinking": {""}},
		Positional: []string{"run"},
		Exit:       0, PromptIs: "hi", Stdin: "hi",
	}, {
		Name:       "everything after -- is message",
		Args:       args("--", "--session", "x"),
		Positional: []string{"run", "--session", "x"},
		Absent:     []string{"--session"},
		Exit:       0, PromptIs: "--session x\nhi", Stdin: "hi",
	}, {
		Name:       "variant=value takes an option-looking value",
		Args:       args("--variant=--session=x"),
		Values:     map[string][]string{"--variant": {"--session=x"}},
		Absent:     []string{"--session"},
		Positional: []string{"run"},
		Exit:       0, PromptIs: "hi", Stdin: "hi",
	}})
}
