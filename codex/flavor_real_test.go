package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestFlavorMatchesRealCLI holds the fake's clap parser to what codex
// 0.169.0 does with the same argv: --opt=value takes any value, a separate
// value must not start with "-" (except "-"), short options take the rest
// of their argument, "--" makes the rest positional (the session id
// included), and --profile takes only plain names. Each case is a real run
// against the scripted model server.
func TestFlavorMatchesRealCLI(t *testing.T) {
	bin, err := filepath.Abs("../tools/clis/node_modules/.bin/codex")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		backendtest.SkipUnlessCI(t, "pinned codex not installed (scripts/install-clis.sh)")
	}
	base := []string{"exec", "--json", "--skip-git-repo-check"}
	args := func(a ...string) []string { return append(append([]string{}, base...), a...) }
	backendtest.CheckFlavor(t, "codex", bin, []backendtest.FlavorCase{{
		Name:   "model=value takes an option-looking value",
		Args:   args("--model=--cd=/x", "-"),
		Values: map[string][]string{"--model": {"--cd=/x"}},
		Absent: []string{"--cd"},
		Exit:   0, Model: "--cd=/x", Stdin: "hi",
	}, {
		Name:    "a separate value must not look like an option",
		Args:    args("--model", "-x", "-"),
		FakeErr: true,
		Exit:    2, Stderr: "unexpected argument '-x'", NoRequest: true,
	}, {
		Name:   "a lone dash is a value",
		Args:   args("-m", "-", "-"),
		Values: map[string][]string{"--model": {"-"}},
		Exit:   0, Model: "-", Stdin: "hi",
	}, {
		Name:   "short options take the rest of their argument",
		Args:   args("-mshort-model", "-c", `model_reasoning_effort="low"`, "-"),
		Values: map[string][]string{"--model": {"short-model"}, "--config": {`model_reasoning_effort="low"`}},
		Exit:   0, Model: "short-model", Stdin: "hi",
	}, {
		Name:       "after -- a session id is positional",
		Args:       args("resume", "--", "--last", "-"),
		Positional: []string{"exec", "resume", "--last", "-"},
		Absent:     []string{"--last"},
		Exit:       0, Prompt: "hi", Stdin: "hi",
	}, {
		Name:    "profile names are plain",
		Args:    args("--profile=../x", "-"),
		FakeErr: true,
		Exit:    2, Stderr: "pass a plain name", NoRequest: true,
	}, {
		Name:   "a profile with no file is no error",
		Args:   args("--profile=work-0123456789abcdef", "-"),
		Values: map[string][]string{"--profile": {"work-0123456789abcdef"}},
		Exit:   0, Prompt: "hi", Stdin: "hi",
	}, {
		Name:    "an option of exec only is refused after resume",
		Args:    args("resume", "--cd=/tmp", "01a20096-0000-7000-8000-000000000000", "-"),
		FakeErr: true,
		Exit:    2, NoRequest: true,
	}, {
		// The settings of a run with ExtraArgs (or of the interactive
		// UI), as buildArgsFiles writes them.
		Name:   "settings as -c overrides",
		Args:   args("-c", `mcp_servers.s-1.url="http://127.0.0.1:9/mcp"`, "-c", `model_reasoning_effort="--x"`, "-"),
		Values: map[string][]string{"--config": {`mcp_servers.s-1.url="http://127.0.0.1:9/mcp"`, `model_reasoning_effort="--x"`}},
		Exit:   0, Prompt: "hi", Stdin: "hi",
	}})
}
