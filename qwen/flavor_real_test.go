package qwen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestFlavorMatchesRealCLI holds the fake's qwen grammar to what qwen
// 0.24.4 does with the same argv: --key=value takes any value with one
// pair of quotes stripped, a separate option-looking value is not taken,
// arrays take one value per occurrence, a bare --resume opens the session
// picker, --json-schema is refused with stream-json input, and a
// stream-json user message reaches the model exactly. Each case is a real
// run against the scripted model server.
func TestFlavorMatchesRealCLI(t *testing.T) {
	bin, err := filepath.Abs("../tools/clis/node_modules/.bin/qwen")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		backendtest.SkipUnlessCI(t, "pinned qwen not installed (scripts/install-clis.sh)")
	}
	base := []string{"--output-format", "stream-json", "--approval-mode=yolo"}
	args := func(a ...string) []string { return append(append([]string{}, base...), a...) }
	msg := string(userMessage("  -p --help\n@ \\@x "))
	backendtest.CheckFlavor(t, Name, bin, []backendtest.FlavorCase{{
		Name:   "model=value takes an option-looking value",
		Args:   args("--model=--approval-mode=plan"),
		Values: map[string][]string{"--model": {"--approval-mode=plan"}, "--approval-mode": {"yolo"}},
		Exit:   0, Model: "--approval-mode=plan", Stdin: "hi",
	}, {
		Name:   "quotes around a value are stripped",
		Args:   args(`--model="quoted"`),
		Values: map[string][]string{"--model": {"quoted"}},
		Exit:   0, Model: "quoted", Stdin: "hi",
	}, {
		Name:   "doubled quotes keep one pair",
		Args:   args(`--model=""quoted""`),
		Values: map[string][]string{"--model": {`"quoted"`}},
		Exit:   0, Model: `"quoted"`, Stdin: "hi",
	}, {
		Name:    "a separate option-looking value is not taken",
		Args:    args("--model", "-x"),
		FakeErr: true,
		Exit:    1, Stderr: "Unknown argument", NoRequest: true,
	}, {
		Name:   "arrays take one value per occurrence",
		Args:   args("--core-tools=read_file", "--core-tools=glob", "--exclude-tools=run_shell_command(rm *)"),
		Values: map[string][]string{"--core-tools": {"read_file", "glob"}, "--exclude-tools": {"run_shell_command(rm *)"}},
		Exit:   0, Stdin: "hi", Prompt: "hi",
	}, {
		Name:    "a bare --resume opens the session picker",
		Args:    args("--resume"),
		FakeErr: true,
		Exit:    0, NoRequest: true, Stdin: "hi",
	}, {
		Name:    "no --json-schema with stream-json input",
		Args:    args("--input-format", "stream-json", `--json-schema={"type":"object"}`),
		FakeErr: true,
		Exit:    1, Stderr: "--json-schema cannot be used with --input-format stream-json", NoRequest: true,
	}, {
		Name:   "a stream-json message reaches the model as it is",
		Args:   args("--input-format", "stream-json"),
		Values: map[string][]string{"--input-format": {"stream-json"}},
		// Every "@" escaped (promptText): the text arrives whole.
		Exit: 0, Stdin: msg, PromptIs: "  -p --help\n\\@ \\@x ",
	}})
}
