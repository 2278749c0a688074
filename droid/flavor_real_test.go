package droid

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestFlavorMatchesRealCLI holds the fake's droid grammar to what droid
// 0.225.2 does with the same argv: a value option takes the next argument
// whatever it looks like, a boolean takes no "=value", -o=VALUE keeps the
// "=", choices are checked, a positional word is the prompt, and the
// prompt on stdin reaches the model as agentcli writes it. Each case is a
// real run against the scripted model server.
func TestFlavorMatchesRealCLI(t *testing.T) {
	bin, err := filepath.Abs("../tools/clis/node_modules/.bin/droid")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		backendtest.SkipUnlessCI(t, "pinned droid not installed (scripts/install-clis.sh)")
	}
	base := []string{"exec", "--output-format=stream-json", "--skip-permissions-unsafe"}
	args := func(a ...string) []string { return append(append([]string{}, base...), a...) }
	backendtest.CheckFlavor(t, Name, bin, []backendtest.FlavorCase{{
		Name:   "a separate option-looking value is taken as the value",
		Args:   args("--model", "-x"),
		Values: map[string][]string{"--model": {"-x"}},
		Exit:   1, NoRequest: true, Stdin: "hi",
	}, {
		Name:    "a missing value is a usage error",
		Args:    args("--model"),
		FakeErr: true,
		Exit:    1, Stderr: "argument missing", NoRequest: true,
	}, {
		Name:    "a boolean takes no value",
		Args:    args("--use-spec=1"),
		FakeErr: true,
		Exit:    1, Stderr: "unknown option", NoRequest: true, Stdin: "hi",
	}, {
		Name:    "an unknown option is a usage error",
		Args:    args("--bogus"),
		FakeErr: true,
		Exit:    1, Stderr: "unknown option", NoRequest: true, Stdin: "hi",
	}, {
		Name:    "-o=VALUE keeps the =",
		Args:    []string{"exec", "-o=stream-json"},
		FakeErr: true,
		Exit:    1, NoRequest: true, Stdin: "hi",
	}, {
		Name:    "the reasoning effort has choices",
		Args:    args("--reasoning-effort=huge"),
		FakeErr: true,
		Exit:    1, NoRequest: true, Stdin: "hi",
	}, {
		Name:    "a positional word is the prompt",
		Args:    args("--", "--help"),
		FakeErr: true, // agentcli never passes one
		Exit:    0, Prompt: "--help",
	}, {
		Name:   "the prompt on stdin reaches the model as it is",
		Args:   args("--reasoning-effort=high"),
		Values: map[string][]string{"--reasoning-effort": {"high"}, "--skip-permissions-unsafe": {""}},
		Exit:   0, Stdin: promptText("  -p --help\n--model=x @ x@y"), PromptIs: promptText("  -p --help\n--model=x @ x@y"),
	}})
}
