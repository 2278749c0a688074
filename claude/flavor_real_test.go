package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestFlavorMatchesRealCLI holds the fake's Commander grammar to what Claude
// Code 2.1.330 does with the same argv: an optional value (--resume) is
// not taken when the next argument starts with "-", a required one
// (--model) is whatever it looks like, --opt=value is one value and starts
// no list, a variadic list ends at the next "-" argument, a short option
// takes the rest of its argument, unknown options are errors, and "--" ends
// the options. Each case is a real run against the scripted model server
// (about a second each).
func TestFlavorMatchesRealCLI(t *testing.T) {
	bin, err := filepath.Abs("../tools/clis/node_modules/.bin/claude")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		backendtest.SkipUnlessCI(t, "pinned claude not installed (scripts/install-clis.sh)")
	}
	base := []string{"-p", "--output-format", "json"}
	args := func(a ...string) []string { return append(append([]string{}, base...), a...) }
	backendtest.CheckFlavor(t, "claude", bin, []backendtest.FlavorCase{{
		Name:   "resume=value takes an option-looking value",
		Args:   args("--resume=--mcp-config=/nonexistent.json"),
		Values: map[string][]string{"--resume": {"--mcp-config=/nonexistent.json"}},
		Absent: []string{"--mcp-config"},
		Exit:   1, Stderr: `Provided value "--mcp-config=/nonexistent.json"`, NoRequest: true,
	}, {
		Name:   "resume leaves an option-looking argument alone",
		Args:   args("--resume", "--mcp-config=/nonexistent.json"),
		Values: map[string][]string{"--resume": {""}, "--mcp-config": {"/nonexistent.json"}},
		Exit:   1, Stderr: "MCP config file not found: /nonexistent.json", NoRequest: true,
	}, {
		Name:    "resume and a negative number",
		Args:    args("--resume", "-1"),
		FakeErr: true,
		Exit:    1, Stderr: "unknown option '-1'",
	}, {
		Name:   "short resume takes the rest of its argument",
		Args:   args("-rabc"),
		Values: map[string][]string{"-r": {"abc"}},
		Exit:   1, Stderr: `Provided value "abc"`,
	}, {
		Name:   "a required value is whatever follows",
		Args:   args("--model", "-weird"),
		Values: map[string][]string{"--model": {"-weird"}},
		Exit:   0, Model: "-weird", Stdin: "hi",
	}, {
		Name:       "repeated --opt=value collects, starts no list",
		Args:       args("--disallowedTools=Bash", "--disallowedTools=Read", "extra", "--max-turns=3", "--model=m-1"),
		Values:     map[string][]string{"--disallowedTools": {"Bash", "Read"}, "--max-turns": {"3"}, "--model": {"m-1"}},
		Positional: []string{"extra"},
		Exit:       0, Model: "m-1", Prompt: "extra\nhi", Stdin: "hi",
	}, {
		Name:       "a variadic list ends at a dash",
		Args:       args("--allowedTools", "Read", "Edit", "--model", "m-2"),
		Values:     map[string][]string{"--allowedTools": {"Read", "Edit"}, "--model": {"m-2"}},
		Positional: []string{},
		Exit:       0, Model: "m-2", Stdin: "hi",
	}, {
		Name:    "the list does not swallow an unknown option",
		Args:    args("--allowedTools", "Read", "--bogus"),
		FakeErr: true,
		Exit:    1, Stderr: "unknown option '--bogus'",
	}, {
		// Claude Code takes the first positional word as the prompt (the
		// rest is dropped) and puts stdin after it.
		Name:       "everything after -- is positional",
		Args:       args("--", "--model", "x"),
		Positional: []string{"--model", "x"},
		Absent:     []string{"--model"},
		Exit:       0, Prompt: "--model\nhi", Stdin: "hi",
	}, {
		// The settings of a run, as buildArgsMCP writes them.
		Name: "settings as --opt=value",
		Args: args("--model=m-2", "--fallback-model=--mcp-config=x.json", "--effort=high", "--max-budget-usd=5",
			`--json-schema={"type":"object"}`, `--mcp-config={"mcpServers":{}}`, "--strict-mcp-config"),
		Values: map[string][]string{"--fallback-model": {"--mcp-config=x.json"}, "--effort": {"high"},
			"--max-budget-usd": {"5"}, "--json-schema": {`{"type":"object"}`}, "--mcp-config": {`{"mcpServers":{}}`},
			"--strict-mcp-config": {""}},
		Exit: 0, Model: "m-2", Stdin: "hi",
	}})
}
