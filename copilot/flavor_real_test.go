package copilot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestFlavorMatchesRealCLI holds the fake's clap grammar to what copilot
// 1.0.102 does with the same argv: --key=value takes any value, a value
// option does not take a following option, a list option takes the
// following words and splits at commas, the last of a repeated option
// wins, an optional value leaves a following option alone, and a word
// that is no option's value is an error (with -p on the command line,
// copilot words both errors "Invalid command format"). Each case is a real
// run against the scripted model server.
func TestFlavorMatchesRealCLI(t *testing.T) {
	bin, err := filepath.Abs("../tools/clis/node_modules/.bin/copilot")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		backendtest.SkipUnlessCI(t, "pinned copilot not installed (scripts/install-clis.sh)")
	}
	base := []string{"--output-format=json", "--no-auto-update"}
	args := func(a ...string) []string { return append(append([]string{}, base...), a...) }
	backendtest.CheckFlavor(t, Name, bin, []backendtest.FlavorCase{{
		Name:   "model=value takes an option-looking value",
		Args:   args("--model=--allow-all"),
		Values: map[string][]string{"--model": {"--allow-all"}},
		Absent: []string{"--allow-all"},
		Exit:   0, Model: "--allow-all", PromptIs: "hi", Stdin: "hi",
	}, {
		Name:    "a value option does not take an option",
		Args:    args("--model", "-x"),
		FakeErr: true,
		Exit:    1, Stderr: "unexpected argument '-x' found", NoRequest: true, Stdin: "hi",
	}, {
		Name:    "a stray word is an error",
		Args:    args("extra"),
		FakeErr: true,
		Exit:    1, Stderr: "unrecognized subcommand 'extra'", NoRequest: true, Stdin: "hi",
	}, {
		Name:   "the last of a repeated option wins",
		Args:   args("--model=m2", "--model", "m3"),
		Values: map[string][]string{"--model": {"m3"}},
		Exit:   0, Model: "m3", PromptIs: "hi", Stdin: "hi",
	}, {
		Name:   "a list takes the following words",
		Args:   args("--available-tools", "bash", "view", "--model=m4"),
		Values: map[string][]string{"--available-tools": {"bash", "view"}, "--model": {"m4"}},
		Exit:   0, Model: "m4", PromptIs: "hi", Stdin: "hi",
	}, {
		Name:   "a list value is split at commas",
		Args:   args("--excluded-tools=bash,view"),
		Values: map[string][]string{"--excluded-tools": {"bash", "view"}},
		Exit:   0, PromptIs: "hi", Stdin: "hi",
	}, {
		Name:   "an optional value leaves a following option alone",
		Args:   args("--resume", "--model=m5"),
		Values: map[string][]string{"--resume": {""}, "--model": {"m5"}},
		Exit:   0, Model: "m5", PromptIs: "hi", Stdin: "hi",
	}, {
		Name:    "a value outside the choices",
		Args:    args("--reasoning-effort=bogus"),
		FakeErr: true,
		Exit:    1, Stderr: "invalid value 'bogus'", NoRequest: true, Stdin: "hi",
	}, {
		Name:   "an unknown resume id fails before the model",
		Args:   args("--resume=0cb916db-26aa-40f2-86b5-1ba81b225fd2"),
		Values: map[string][]string{"--resume": {"0cb916db-26aa-40f2-86b5-1ba81b225fd2"}},
		Exit:   1, Stderr: "No session, task, or name matched", NoRequest: true, Stdin: "hi",
	}})
}
