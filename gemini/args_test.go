package gemini

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/fakecli"
	"pgregory.net/rapid"
)

// The goldens were reviewed against `gemini --help` of 0.61.0 (flags
// --output-format, --approval-mode, --skip-trust, -r/--resume, -m/--model)
// and run by the real CLI against a local model server: json and
// stream-json answers, a shell tool call, a resume by --resume=<uuid>, API
// errors (see the package doc and the report in testdata/real).
func TestArgsGolden(t *testing.T) {
	cases := []struct {
		name string
		req  agentcli.Request
		f    format
	}{
		{"minimal-json", agentcli.Request{Prompt: "hi"}, formatJSON},
		{"minimal-stream", agentcli.Request{Prompt: "hi"}, formatStream},
		{"bypass", agentcli.Request{Prompt: "hi", Permission: agentcli.PermissionBypass}, formatJSON},
		{"plan", agentcli.Request{Prompt: "hi", Permission: agentcli.PermissionPlan}, formatJSON},
		{"mcp-allow-list", agentcli.Request{Prompt: "hi", AllowedTools: []string{"Bash(git *)", "mcp__b__x"},
			MCPServers: []agentcli.MCPServer{{Name: "a", Command: "x"}, {Name: "b", Command: "y"}}}, formatJSON},
		{"full", agentcli.Request{
			Prompt: "--help", SystemPrompt: "be brief", SessionID: "80c7d477-2a40-44bb-b157-f5511d74c3c6", Model: "gemini-2.5-flash",
			MaxTurns: 25, AllowedTools: []string{"run_shell_command"}, Dir: "/src",
			ExtraArgs: []string{"--include-directories", "/lib"},
		}, formatStream},
		// Values that look like flags stay values.
		{"dash-values", agentcli.Request{Prompt: "-p", SessionID: "--help", Model: "-m"}, formatJSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backendtest.GoldenArgs(t, c.name, buildArgs(&c.req, c.f))
			if err := fakecli.CheckGeminiArgs(buildArgs(&c.req, c.f)); err != nil {
				t.Errorf("gemini would reject the argv: %v", err)
			}
		})
	}
}

func genRequest(t *rapid.T) *agentcli.Request {
	return &agentcli.Request{
		Prompt:       rapid.String().Draw(t, "prompt"),
		SystemPrompt: rapid.String().Draw(t, "system"),
		SessionID: rapid.OneOf(rapid.Just(""), rapid.StringMatching(`[0-9a-f-]{36}`), rapid.Just("latest"),
			rapid.StringMatching(`-{0,2}[a-z=-]{1,10}`)).Draw(t, "session"),
		Model:           rapid.OneOf(rapid.Just(""), rapid.StringMatching(`-{0,2}[a-z0-9.=-]{1,20}`)).Draw(t, "model"),
		MaxTurns:        rapid.IntRange(0, 100).Draw(t, "turns"),
		AllowedTools:    rapid.SliceOfN(rapid.StringMatching(`[a-z_]{1,10}`), 0, 3).Draw(t, "allowed"),
		DisallowedTools: rapid.SliceOfN(rapid.StringMatching(`[a-z_]{1,10}`), 0, 3).Draw(t, "disallowed"),
		Dir:             rapid.StringMatching(`(/[a-z ]{1,8}){0,3}`).Draw(t, "dir"),
		Permission: rapid.SampledFrom([]agentcli.PermissionMode{"", agentcli.PermissionBypass,
			agentcli.PermissionDeny, agentcli.PermissionPlan}).Draw(t, "permission"),
	}
}

// TestArgsProperties checks, for any request: the flags a headless run
// needs are present with the right output format; --resume appears iff a
// session id is given, and --model iff a model is; argv does not depend on
// the prompt or system prompt at all (they go on stdin), so no prompt can be
// read as a flag; and gemini's option grammar (as the fake encodes it)
// accepts the argv, with no positional word (which would become prompt
// text) and every value intact, however flag-like.
func TestArgsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := genRequest(t)
		f := rapid.SampledFrom([]format{formatJSON, formatStream}).Draw(t, "format")
		args := buildArgs(req, f)
		other := *req
		other.Prompt, other.SystemPrompt = "--"+req.Prompt, "-p "+req.SystemPrompt
		if !slices.Equal(args, buildArgs(&other, f)) {
			t.Fatalf("argv depends on the prompt")
		}
		// yolo only for bypass; the zero value (deny) is default.
		mode := map[agentcli.PermissionMode]string{"": "default", agentcli.PermissionBypass: "yolo",
			agentcli.PermissionDeny: "default", agentcli.PermissionPlan: "plan"}[req.Permission]
		for _, need := range []string{"--output-format", "--approval-mode", mode, "--skip-trust"} {
			if !slices.Contains(args, need) {
				t.Fatalf("missing %s in %q", need, args)
			}
		}
		hasPrefix := func(p string) bool {
			return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, p) })
		}
		if hasPrefix("--resume") != (req.SessionID != "") {
			t.Fatalf("--resume present=%v with session %q", hasPrefix("--resume"), req.SessionID)
		}
		if hasPrefix("--model") != (req.Model != "") {
			t.Fatalf("--model present=%v with model %q", hasPrefix("--model"), req.Model)
		}
		p, err := fakecli.Flavors["gemini"].Parse(args)
		if err != nil {
			t.Fatalf("gemini would reject %q: %v", args, err)
		}
		if err := fakecli.CheckGeminiArgs(args); err != nil {
			t.Fatalf("gemini would reject %q: %v", args, err)
		}
		if len(p.Positional) != 0 {
			t.Fatalf("argv has positional words %q; they would become prompt text", p.Positional)
		}
		if got := p.Values["--output-format"]; !slices.Equal(got, []string{f.String()}) {
			t.Fatalf("output format parsed as %q", got)
		}
		if req.SessionID != "" && !slices.Equal(p.Values["--resume"], []string{req.SessionID}) {
			t.Fatalf("resume parsed as %q, want %q", p.Values["--resume"], req.SessionID)
		}
		if req.Model != "" && !slices.Equal(p.Values["--model"], []string{req.Model}) {
			t.Fatalf("model parsed as %q, want %q", p.Values["--model"], req.Model)
		}
	})
}

// The fake rejects what gemini 0.61.0 rejects (checked by hand against the
// real CLI: exit 1 with these messages).
func TestFakeFlavorRejects(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus-flag"},
		{"-o", "xml"},
		{"-o", "json", "-m"},
		{"-y", "--approval-mode", "yolo"},
		{"-p", "foo", "positional"},
		{"--session-id", "abc", "--resume", "latest"},
		{"--approval-mode", "always"},
	} {
		if fakecli.CheckGeminiArgs(args) == nil {
			t.Errorf("%q accepted", args)
		}
	}
	if fakecli.Flavors["gemini"].UsageExit != 1 {
		t.Errorf("gemini exits 1 on a usage error")
	}
}

// promptInput is the prompt, byte for byte, except for the two documented
// changes; and after them gemini finds neither a slash command nor an
// @-reference.
func TestPromptInput(t *testing.T) {
	cases := []struct{ prompt, sys, want string }{
		{"hello", "", "hello"},
		{"--help", "", "--help"},
		{"  spaced\n\n\tlines ", "", "  spaced\n\n\tlines "},
		{"/help", "", " /help"},
		{"/init and more", "", " /init and more"},
		{"//comment", "", "//comment"},
		{"/* code */", "", "/* code */"},
		{" /help", "", " /help"},
		{"x\n/help", "", "x\n/help"},
		{"/help", "be brief", "be brief\n\n/help"},
		{"hi", "/sys", " /sys\n\nhi"},
		{"@README.md", "", `\@README.md`},
		{"look at @README.md", "", `look at \@README.md`},
		{"look at @README.md.", "", `look at \@README.md.`},
		{"mail a@b.com", "", `mail a\@b.com`},
		{"already \\@escaped", "", "already \\@escaped"},
		{"@ alone, @, @; @! @? @( @) @[ @] @{ @} @. @.\n@\t@\r@", "", "@ alone, @, @; @! @? @( @) @[ @] @{ @} @. @.\n@\t@\r@"},
		{"@.x @.. @\"q q\" @\\x @@x @é", "", `\@.x \@.. \@"q q" \@\x \@\@x \@é`},
		{"", "", ""},
		{"", "sys", "sys\n\n"},
	}
	for _, c := range cases {
		if got := promptInput(&agentcli.Request{Prompt: c.prompt, SystemPrompt: c.sys}); got != c.want {
			t.Errorf("promptInput(%q, sys %q) = %q, want %q", c.prompt, c.sys, got, c.want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]rune("@\\/ .,\n\"*aé!"))
		prompt := string(rapid.SliceOf(alphabet).Draw(t, "prompt"))
		in := promptInput(&agentcli.Request{Prompt: prompt})
		if isSlashCommand(in) {
			t.Fatalf("%q still starts a slash command", in)
		}
		// Undo the changes: the result is the prompt again.
		back := strings.TrimPrefix(in, " ")
		if !isSlashCommand(prompt) {
			back = in
		}
		if strings.ReplaceAll(back, `\@`, "@") != strings.ReplaceAll(prompt, `\@`, "@") || len(back) < len(prompt) {
			t.Fatalf("%q is not %q plus escapes", in, prompt)
		}
		if !strings.ContainsAny(prompt, "@") && !isSlashCommand(prompt) && in != prompt {
			t.Fatalf("%q changed to %q", prompt, in)
		}
	})
}

// TestEscapeAtWithGeminiRegex runs gemini's own @-reference regex (copied
// from the 0.61.0 bundle, atCommandProcessor.ts) in node over many escaped
// prompts: it must find nothing. Skipped when node is not installed.
func TestEscapeAtWithGeminiRegex(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		backendtest.SkipUnlessCI(t, "node not found")
	}
	var inputs []string
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]rune("@@\\\" .,;!?()[]{}\t\n\rab/é"))
		inputs = append(inputs, string(rapid.SliceOf(alphabet).Draw(t, "s")))
	})
	inputs = append(inputs, "look at @README.md", "a@b.com", "@\"x y\"", `\\@x`, "@.x", "@.", "x@")
	var escaped []string
	for _, s := range inputs {
		escaped = append(escaped, escapeAt(s))
	}
	const script = `
const AT = '(?:(?:"(?:[^"]*)")|(?:\\\\.|[^ \\t\\n\\r,;!?()\\[\\]{}.]|\\.(?!$|[ \\t\\n\\r])))+';
const re = new RegExp('(?<!\\\\)@' + AT, 'g');
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(input.map(s => [...s.matchAll(re)].map(m => m[0]))));`
	// Self-check: unescaped inputs do contain references.
	for _, tc := range []struct {
		in   []string
		want bool
	}{{inputs, true}, {escaped, false}} {
		b, _ := json.Marshal(tc.in)
		cmd := exec.Command(node, "-e", script)
		cmd.Stdin = bytes.NewReader(b)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node: %v", err)
		}
		var matches [][]string
		if err := json.Unmarshal(out, &matches); err != nil || len(matches) != len(tc.in) {
			t.Fatalf("node output %q: %v", out, err)
		}
		found := 0
		for i, m := range matches {
			if len(m) > 0 {
				found++
				if !tc.want {
					t.Errorf("gemini finds %q in escaped %q", m, tc.in[i])
				}
			}
		}
		if tc.want && found == 0 {
			t.Fatalf("oracle found no reference in any unescaped input")
		}
	}
}
