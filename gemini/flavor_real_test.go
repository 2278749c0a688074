package gemini

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// TestFlavorMatchesRealCLI holds the fake's Yargs grammar to what gemini
// 0.61.0 does with the same argv: --key=value takes any value (quotes kept
// for nargs options), an nargs option needs a following argument that does
// not look like an option, --resume (no nargs) leaves a following option
// alone, -m is --model, and a short cluster is read letter by letter. Each
// case is a real run against the scripted model server.
func TestFlavorMatchesRealCLI(t *testing.T) {
	bin, err := filepath.Abs("../tools/clis/node_modules/.bin/gemini")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		backendtest.SkipUnlessCI(t, "pinned gemini not installed (scripts/install-clis.sh)")
	}
	base := []string{"--output-format", "json", "--approval-mode", "yolo", "--skip-trust"}
	args := func(a ...string) []string { return append(append([]string{}, base...), a...) }
	backendtest.CheckFlavor(t, "gemini", bin, []backendtest.FlavorCase{{
		Name:   "model=value takes an option-looking value",
		Args:   args("--model=--approval-mode=default"),
		Values: map[string][]string{"--model": {"--approval-mode=default"}, "--approval-mode": {"yolo"}},
		Exit:   0, Model: "--approval-mode=default", Stdin: "hi",
	}, {
		Name:   "quotes stay in an nargs value",
		Args:   args(`--model="quoted"`),
		Values: map[string][]string{"--model": {`"quoted"`}},
		Exit:   0, Model: `"quoted"`, Stdin: "hi",
	}, {
		Name:    "an nargs option does not take an option",
		Args:    args("--model", "-x"),
		FakeErr: true,
		Exit:    1, Stderr: "Not enough arguments following: model", NoRequest: true,
	}, {
		Name:   "resume=value is one value",
		Args:   args("--resume=--model=x"),
		Values: map[string][]string{"--resume": {"--model=x"}},
		Absent: []string{"--model"},
		Exit:   42, Stderr: "Error resuming session", NoRequest: true, Stdin: "hi",
	}, {
		Name:    "resume leaves a following option alone",
		Args:    args("--resume", "-y"),
		FakeErr: true, // -y is --yolo, which conflicts with --approval-mode
		Exit:    1, Stderr: "Cannot use both --yolo (-y) and --approval-mode together", NoRequest: true,
	}, {
		Name:   "a short alias",
		Args:   args("-m", "m-1"),
		Values: map[string][]string{"--model": {"m-1"}},
		Exit:   0, Model: "m-1", Stdin: "hi",
	}, {
		Name:    "a short cluster is letters, the last may take a value",
		Args:    args("-mfoo"),
		FakeErr: true,
		Exit:    1, Stderr: "Not enough arguments following: o", NoRequest: true,
	}, {
		Name:   "allowed MCP server names as one value",
		Args:   args("--allowed-mcp-server-names=a,b-2"),
		Values: map[string][]string{"--allowed-mcp-server-names": {"a,b-2"}},
		Exit:   0, Prompt: "hi", Stdin: "hi",
	}})
}
