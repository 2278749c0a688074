package codex

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentcli/agentcli/internal/backendtest"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/fakecli"
	"pgregory.net/rapid"
)

// argCases are the golden argv cases. The goldens were reviewed against
// `codex exec --help` and `codex exec resume --help` of codex-cli 0.169.0
// and run for real against a local model server (see real_test.go);
// TestGoldensMatchRealHelp re-checks every flag against the installed
// binary's help when it is available.
var argCases = []struct {
	name string
	req  agentcli.Request
	dir  string
}{
	{name: "minimal", req: agentcli.Request{Prompt: "say hello"}},
	{name: "model", req: agentcli.Request{Prompt: "hi", Model: "gpt-5.6-codex"}},
	{name: "dir", req: agentcli.Request{Prompt: "hi", Dir: "proj"}, dir: "/work/proj"},
	{name: "system_prompt", req: agentcli.Request{Prompt: "hi",
		SystemPrompt: "Be \"brief\".\nUse C:\\path\tand\x00nul, \x1b[0m, DEL\x7f, café 😀\r\n"}},
	{name: "prompt_looks_like_flags", req: agentcli.Request{Prompt: "--help -rf resume -"}},
	{name: "extra_args", req: agentcli.Request{Prompt: "hi", ExtraArgs: []string{"-c", `model_reasoning_effort="high"`, "--ephemeral"}}},
	{name: "resume", req: agentcli.Request{Prompt: "and now?", SessionID: "01a20096-ac79-7f83-8b64-1211be7331ad"}},
	{name: "resume_full", req: agentcli.Request{Prompt: "and now?", SessionID: "01a20096-ac79-7f83-8b64-1211be7331ad",
		Model: "mock-model", Dir: "/work/other", SystemPrompt: "be brief", ExtraArgs: []string{"--ephemeral"}}, dir: "/work/other"},
	{name: "resume_dash_id", req: agentcli.Request{Prompt: "x", SessionID: "-not-a-flag"}},
	{name: "ignored_options", req: agentcli.Request{Prompt: "x", FallbackModel: "m"}},
	{name: "bypass", req: agentcli.Request{Prompt: "x", Permission: agentcli.PermissionBypass}},
	{name: "plan", req: agentcli.Request{Prompt: "x", Permission: agentcli.PermissionPlan}},
	{name: "tool_lists", req: agentcli.Request{Prompt: "x", AllowedTools: []string{"Read", "edit", "mcp__docs__search"},
		DisallowedTools: []string{"WebSearch", "mcp__docs__drop"}, Permission: agentcli.PermissionBypass,
		MCPServers: []agentcli.MCPServer{{Name: "docs", Command: "docs-mcp"}, {Name: "other", Command: "other-mcp"}}}},
	{name: "tool_lists_read_only", req: agentcli.Request{Prompt: "x", AllowedTools: []string{"Read", "Grep"}, Permission: agentcli.PermissionBypass}},
}

func TestGoldenArgs(t *testing.T) {
	for _, c := range argCases {
		t.Run(c.name, func(t *testing.T) {
			args := buildArgs(&c.req, c.dir)
			backendtest.GoldenArgs(t, c.name, args)
			if _, err := fakecli.ParseCodexArgs(args); err != nil {
				t.Fatalf("codex would reject the golden argv: %v", err)
			}
			if c.req.Prompt != "" && slices.Contains(args, c.req.Prompt) {
				t.Fatalf("prompt %q appears in argv", c.req.Prompt)
			}
		})
	}
}

// TestGoldensMatchRealHelp checks every option in the goldens against the
// help of the installed codex 0.169.0: options before `resume` must be in
// `codex exec --help`, options after it in `codex exec resume --help`. It
// runs the binary in a private network namespace and skips when it cannot
// (fails under CI=true).
func TestGoldensMatchRealHelp(t *testing.T) {
	bin, err := filepath.Abs("../tools/clis/node_modules/.bin/codex")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		backendtest.SkipUnlessCI(t, "pinned codex not installed (scripts/install-clis.sh)")
	}
	help := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = backendtest.IsolatedAttr() // no network at all
		cmd.Env = append(os.Environ(), "CODEX_HOME="+t.TempDir(), "HOME="+t.TempDir())
		out, err := cmd.Output()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("codex %q: %v: %s", args, err, exit.Stderr)
		}
		if err != nil {
			backendtest.SkipUnlessCI(t, "cannot run codex in a private network namespace: %v", err)
		}
		return string(out)
	}
	if v := help("--version"); !strings.Contains(v, "0.169.0") {
		t.Fatalf("installed codex is %q; the goldens were written for 0.169.0", strings.TrimSpace(v))
	}
	execHelp, resumeHelp := help("exec", "--help"), help("exec", "resume", "--help")
	inHelp := func(h, flag string) bool {
		return regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(flag) + `([\s,=]|$)`).MatchString(h)
	}
	for _, c := range argCases {
		args := buildArgs(&c.req, c.dir)
		h, level := execHelp, "exec"
		for i := 1; i < len(args); i++ {
			a := args[i]
			if a == "--" {
				break
			}
			if a == "resume" {
				if !strings.Contains(execHelp, "resume  Resume a previous session") {
					t.Errorf("exec help lacks the resume subcommand")
				}
				h, level = resumeHelp, "resume"
				continue
			}
			if !strings.HasPrefix(a, "-") || a == "-" {
				continue
			}
			name, _, _ := strings.Cut(a, "=")
			if !inHelp(h, name) {
				t.Errorf("%s: option %s is not in `codex %s --help`", c.name, name, level)
			}
		}
	}
}

// decodeTOMLBasic decodes a TOML basic string ("...") strictly per TOML 1.0:
// raw control characters other than tab are errors, escapes are \b \t \n \f
// \r \" \\ \uXXXX \UXXXXXXXX (Unicode scalar values only), the content must
// be UTF-8.
func decodeTOMLBasic(s string) (string, error) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", errors.New("not quoted")
	}
	s = s[1 : len(s)-1]
	if !utf8.ValidString(s) {
		return "", errors.New("invalid UTF-8")
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			return "", fmt.Errorf("unescaped quote at %d", i)
		case c < 0x20 && c != '\t', c == 0x7f:
			return "", fmt.Errorf("raw control character %#x at %d", c, i)
		case c != '\\':
			r, n := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += n
			continue
		}
		if i+1 >= len(s) {
			return "", errors.New("dangling backslash")
		}
		e := s[i+1]
		i += 2
		simple := map[byte]string{'b': "\b", 't': "\t", 'n': "\n", 'f': "\f", 'r': "\r", '"': `"`, '\\': `\`}
		if v, ok := simple[e]; ok {
			b.WriteString(v)
			continue
		}
		n := 0
		switch e {
		case 'u':
			n = 4
		case 'U':
			n = 8
		default:
			return "", fmt.Errorf("bad escape \\%c", e)
		}
		if i+n > len(s) {
			return "", errors.New("short unicode escape")
		}
		v, err := strconv.ParseUint(s[i:i+n], 16, 32)
		if err != nil || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) {
			return "", fmt.Errorf("bad unicode escape %q", s[i:i+n])
		}
		b.WriteRune(rune(v))
		i += n
	}
	return b.String(), nil
}

func TestTOMLStringExamples(t *testing.T) {
	for in, want := range map[string]string{
		"":                 `""`,
		"plain":            `"plain"`,
		`say "hi"`:         `"say \"hi\""`,
		`C:\dir\`:          `"C:\\dir\\"`,
		"a\nb\r\n\tc":      `"a\nb\r\n\tc"`,
		"\x00\x01\x1f\x7f": `"\u0000\u0001\u001F\u007F"`,
		"\b\f":             `"\b\f"`,
		"café 😀 \u2028":    "\"café 😀 \u2028\"",
		"bad\xffutf8":      "\"bad\uFFFDutf8\"",
		`\u0041`:           `"\\u0041"`,
	} {
		if got := tomlString(in); got != want {
			t.Errorf("tomlString(%q) = %s; want %s", in, got, want)
		}
	}
}

// genText generates strings rich in what TOML and argv find hard.
func genText() *rapid.Generator[string] {
	hard := rapid.SampledFrom([]string{`"`, `\`, "\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\u0085", "\u2028",
		"é", "😀", "\xff", "\xed\xa0\x80", `\u0000`, `""""`, "'''", "=", "-", "--", " ", "#", "[x]"})
	return rapid.OneOf(
		rapid.String(),
		rapid.StringOf(rapid.Rune()),
		rapid.Custom(func(t *rapid.T) string {
			parts := rapid.SliceOf(rapid.OneOf(hard, rapid.StringN(0, 5, -1))).Draw(t, "parts")
			return strings.Join(parts, "")
		}),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	)
}

func TestTOMLStringRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genText().Draw(t, "s")
		enc := tomlString(s)
		if strings.ContainsAny(enc, "\x00\n\r") {
			t.Fatalf("encoding %q contains NUL or a raw line break", enc)
		}
		got, err := decodeTOMLBasic(enc)
		if err != nil {
			t.Fatalf("decode(%q): %v", enc, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); got != want {
			t.Fatalf("round trip of %q gave %q", want, got)
		}
	})
}

func genRequest(t *rapid.T, withExtra bool) agentcli.Request {
	r := agentcli.Request{
		Prompt:       genText().Draw(t, "prompt"),
		SystemPrompt: rapid.OneOf(rapid.Just(""), genText()).Draw(t, "system"),
		Model:        rapid.OneOf(rapid.Just(""), genText()).Draw(t, "model"),
		SessionID:    rapid.OneOf(rapid.Just(""), rapid.Just("01a20096-ac79-7f83-8b64-1211be7331ad"), genText()).Draw(t, "session"),
		Permission: rapid.SampledFrom([]agentcli.PermissionMode{"", agentcli.PermissionBypass,
			agentcli.PermissionDeny, agentcli.PermissionPlan}).Draw(t, "permission"),
	}
	if withExtra {
		r.ExtraArgs = rapid.SliceOfN(rapid.SampledFrom([]string{"--ephemeral", "--ignore-rules", "--enable=x", "--strict-config"}), 0, 2).Draw(t, "extra")
		r.ExtraArgs = slices.Compact(slices.Sorted(slices.Values(r.ExtraArgs)))
	}
	return r
}

func TestArgsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := genRequest(t, true)
		dir := rapid.OneOf(rapid.Just(""), rapid.Map(genText(), func(s string) string { return "/" + s })).Draw(t, "dir")
		args := buildArgs(&req, dir)

		// Required flags, in the exec level.
		if args[0] != "exec" || args[len(args)-1] != "-" {
			t.Fatalf("argv %q must start with exec and end with -", args)
		}
		// Only bypass runs without codex's sandbox; the zero value (deny)
		// and plan run in the read-only one.
		mode := "--sandbox=read-only"
		if req.Permission == agentcli.PermissionBypass {
			mode = "--dangerously-bypass-approvals-and-sandbox"
		}
		for _, f := range []string{"--json", mode, "--skip-git-repo-check"} {
			if !slices.Contains(args, f) {
				t.Fatalf("argv %q lacks %s", args, f)
			}
		}
		// Session flags iff a session id.
		if slices.Contains(args, "resume") != (req.SessionID != "") {
			t.Fatalf("argv %q: resume present = %v with session %q", args, slices.Contains(args, "resume"), req.SessionID)
		}
		// The prompt does not influence argv at all: it goes on stdin.
		noPrompt := req
		noPrompt.Prompt = ""
		if !slices.Equal(args, buildArgs(&noPrompt, dir)) {
			t.Fatalf("argv depends on the prompt")
		}
		// codex's own argv rules (the fake flavor) accept it and read
		// back every value.
		p, err := fakecli.ParseCodexArgs(args)
		if err != nil {
			t.Fatalf("argv %q rejected: %v", args, err)
		}
		if p.Resume {
			if p.SessionID != req.SessionID || p.ResumePrompt != "-" || p.HasPrompt {
				t.Fatalf("resume parsed as %+v", p)
			}
		} else if p.Prompt != "-" {
			t.Fatalf("prompt positional %q; want -", p.Prompt)
		}
		one := func(k, want string) {
			got := p.Exec[k]
			if want == "" && got != nil || want != "" && !slices.Equal(got, []string{want}) {
				t.Fatalf("%s = %q; want %q", k, got, want)
			}
		}
		one("--model", req.Model)
		one("--cd", dir)
		var dev []string
		for _, c := range p.Exec["--config"] {
			if v, ok := strings.CutPrefix(c, developerInstructionsKey+"="); ok {
				dev = append(dev, v)
			}
		}
		if req.SystemPrompt == "" {
			if dev != nil {
				t.Fatalf("developer_instructions without a system prompt")
			}
			return
		}
		if len(dev) != 1 {
			t.Fatalf("developer_instructions given %d times", len(dev))
		}
		got, err := decodeTOMLBasic(dev[0])
		if err != nil || got != strings.ToValidUTF8(req.SystemPrompt, "\uFFFD") {
			t.Fatalf("system prompt decodes to %q, %v", got, err)
		}
	})
}

// TestFakeAcceptsArgv runs the fake codex with argv from the real builder
// (through the backend) and checks it saw the prompt on stdin.
func TestFakeAcceptsArgv(t *testing.T) {
	for _, c := range argCases {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			req.Dir = ""
			if needsAppServer(&req) {
				// Without ExtraArgs the run would go through
				// app-server, which the fake does not speak.
				req.ExtraArgs = append(req.ExtraArgs, "--ephemeral")
			}
			var logs bytes.Buffer
			opts := &agentcli.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			b, dir := kit.Setup(t, opts, kit.Success("ok", "sess-1")...)
			res, err := b.Run(t.Context(), &req)
			if validate(&req) != nil {
				// Refused before anything starts (a session id that is
				// not a thread UUID): the builder's argv never reaches
				// codex.
				if !errors.Is(err, agentcli.ErrBadRequest) {
					t.Fatalf("run: %v; want the request refused", err)
				}
				return
			}
			if err != nil || res.Text != "ok" {
				t.Fatalf("run: %v, %+v", err, res)
			}
			warned := strings.Contains(logs.String(), "fallback model")
			if warned != (c.name == "ignored_options") {
				t.Fatalf("warnings about unsupported options: %q", logs.String())
			}
			rec, err := fakecli.ReadRecord(dir)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Stdin != strings.ToValidUTF8(req.Prompt, "\uFFFD") {
				t.Fatalf("stdin %q; want the prompt %q", rec.Stdin, req.Prompt)
			}
		})
	}
}

// TestFakeRejectsLikeCodex checks the fake's codex rules on argv the real
// 0.169.0 rejects with exit status 2 (observed with the real binary).
func TestFakeRejectsLikeCodex(t *testing.T) {
	for _, args := range [][]string{
		{"exec", "--json", "resume", "-C", "/tmp", "abc", "-"},
		{"exec", "--json", "resume", "--cd", "/tmp", "abc", "-"},
		{"exec", "--json", "resume", "-s", "read-only", "abc", "-"},
		{"exec", "-m", "a", "-m", "b", "-"},
		{"exec", "--json", "--json", "-"},
		{"exec", "--bogus", "-"},
		{"exec", "-m"},
		{"exec", "a", "b"},
		{"exec", "--json", "resume", "a", "b", "c"},
		{"exec", "--", "resume", "x", "-"},
		{"exec", "-s", "bogus", "-"},
		{"exec", "--full-auto", "-"},
	} {
		if _, err := fakecli.ParseCodexArgs(args); err == nil {
			t.Errorf("ParseCodexArgs(%q) accepted argv codex rejects", args)
		}
	}
	for _, args := range [][]string{
		{"exec", "--json", "-"},
		{"exec", "-c", "a=1", "-c", "b=2", "-"},
		{"exec", "--model=x", "--cd=/tmp", "-"},
		{"exec", "--json", "resume", "--model=x", "abc", "-"},
		{"exec", "--json", "resume", "--json", "abc", "-"},
		{"exec", "--json", "-C", "/tmp", "resume", "--", "-x", "-"},
		{"exec", "--yolo", "--experimental-json", "-"},
		{"exec", "--json", "resume", "x", "-", "--skip-git-repo-check"},
	} {
		if _, err := fakecli.ParseCodexArgs(args); err != nil {
			t.Errorf("ParseCodexArgs(%q): %v; codex accepts it", args, err)
		}
	}
	// Through the fake process: a usage error exits 2 (the wording is the
	// generic fake parser's when it rejects the flag first).
	b, _ := kit.Setup(t, nil, kit.Success("ok", "s")...)
	_, err := b.Run(t.Context(), &agentcli.Request{Prompt: "x", ExtraArgs: []string{"--full-auto"}})
	var ee *agentcli.ExitError
	if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(ee.Stderr, "'--full-auto'") {
		t.Fatalf("err = %v; want exit 2 with clap's message", err)
	}
}

func TestCheckArgsLimit(t *testing.T) {
	big := strings.Repeat("x", maxArgLen)
	b := New(&agentcli.Options{Path: "/bin/true"})
	// Only when ExtraArgs keep the run on codex exec is the system prompt
	// on the command line, where it can be too long for one argument.
	_, err := b.Run(t.Context(), &agentcli.Request{Prompt: "x", SystemPrompt: big, ExtraArgs: []string{"--profile=mine"}})
	if err == nil || !strings.Contains(err.Error(), "system prompt") {
		t.Fatalf("err = %v; want a clear too-long error", err)
	}
	if checkArgs(buildArgs(&agentcli.Request{SystemPrompt: strings.Repeat("x", maxArgLen-100)}, "")) != nil {
		t.Fatalf("a prompt that fits was rejected")
	}
}
