package opencode

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/fakecli"
	"pgregory.net/rapid"
)

// argCases are the golden argv cases. The goldens were reviewed against
// `opencode run --help` of opencode 1.18.33 and the same argv shapes were
// run for real against a local model server in a private network namespace
// (text, bash tool call approved by --auto under a "bash":"ask" permission,
// resume with --session=ID, resume from another directory with --dir, an
// API 400); TestGoldensMatchRealHelp re-checks every flag against the
// installed binary's help when it is available.
var argCases = []struct {
	name string
	req  agentcli.Request
	dir  string
}{
	{name: "minimal", req: agentcli.Request{Prompt: "say hello"}, dir: "/work/proj"},
	{name: "no_dir", req: agentcli.Request{Prompt: "say hello"}},
	{name: "model", req: agentcli.Request{Prompt: "hi", Model: "anthropic/claude-sonnet-5"}, dir: "/work/proj"},
	{name: "system_prompt", req: agentcli.Request{Prompt: "hi", SystemPrompt: "Be \"brief\".\n--no-flags"}, dir: "/work/proj"},
	{name: "prompt_looks_like_flags", req: agentcli.Request{Prompt: "--help -rf --session x -- -"}, dir: "/work/proj"},
	{name: "resume", req: agentcli.Request{Prompt: "and now?", SessionID: "ses_dff6793f1ffexetM9p7dUjfPFi"}, dir: "/work/proj"},
	{name: "resume_dash_id", req: agentcli.Request{Prompt: "x", SessionID: "-not-a-flag"}, dir: "/work/proj"},
	{name: "dir_with_spaces", req: agentcli.Request{Prompt: "x", Dir: "my proj"}, dir: "/work/my proj=1"},
	{name: "extra_args", req: agentcli.Request{Prompt: "hi", ExtraArgs: []string{"--agent", "plan", "--variant", "high"}}, dir: "/work/proj"},
	{name: "full", req: agentcli.Request{Prompt: "and now?", SessionID: "ses_dff6793f1ffexetM9p7dUjfPFi",
		Model: "agentclitest/agentclitest-model", SystemPrompt: "be brief", ExtraArgs: []string{"--print-logs"}}, dir: "/work/other"},
	{name: "ignored_options", req: agentcli.Request{Prompt: "x", MaxTurns: 3}, dir: "/work/proj"},
	{name: "bypass", req: agentcli.Request{Prompt: "x", Permission: agentcli.PermissionBypass}, dir: "/work/proj"},
	{name: "plan", req: agentcli.Request{Prompt: "x", Permission: agentcli.PermissionPlan}, dir: "/work/proj"},
}

func TestGoldenArgs(t *testing.T) {
	for _, c := range argCases {
		t.Run(c.name, func(t *testing.T) {
			args := buildArgs(&c.req, c.dir)
			backendtest.GoldenArgs(t, c.name, args)
			if err := fakecli.ParseOpencodeArgs(args); err != nil {
				t.Fatalf("opencode would reject the golden argv: %v", err)
			}
			if slices.Contains(args, c.req.Prompt) {
				t.Fatalf("prompt %q appears in argv", c.req.Prompt)
			}
		})
	}
}

// TestGoldensMatchRealHelp checks every option in the goldens against
// `opencode run --help` of the installed opencode 1.18.33. It runs the
// binary in a private network namespace with a throwaway HOME, and skips
// when it cannot (fails under CI=true).
func TestGoldensMatchRealHelp(t *testing.T) {
	bin, err := filepath.Abs("../tools/clis/node_modules/.bin/opencode")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		backendtest.SkipUnlessCI(t, "pinned opencode not installed (scripts/install-clis.sh)")
	}
	home := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = backendtest.IsolatedAttr() // no network at all
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home+"/c", "XDG_DATA_HOME="+home+"/d",
			"XDG_CACHE_HOME="+home+"/ca", "XDG_STATE_HOME="+home+"/s", "OPENCODE_PURE=1",
			"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("opencode %q: %v: %s", args, err, out)
		}
		if err != nil {
			backendtest.SkipUnlessCI(t, "cannot run opencode in a private network namespace: %v", err)
		}
		return string(out)
	}
	if v := run("--version"); strings.TrimSpace(v) != "1.18.33" {
		t.Fatalf("installed opencode is %q; the goldens were written for 1.18.33", strings.TrimSpace(v))
	}
	help := run("run", "--help")
	inHelp := func(flag string) bool {
		return regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(flag) + `(\s|$)`).MatchString(help)
	}
	if !strings.Contains(help, `[choices: "default", "json"]`) {
		t.Errorf("--format no longer offers json:\n%s", help)
	}
	for _, c := range argCases {
		args := buildArgs(&c.req, c.dir)
		if args[0] != "run" {
			t.Errorf("%s: argv does not start with run", c.name)
		}
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				continue
			}
			name, _, _ := strings.Cut(a, "=")
			if !inHelp(name) {
				t.Errorf("%s: option %s is not in `opencode run --help`", c.name, name)
			}
		}
	}
}

// anyString generates strings that are hard on an argv: flags, "=", "--",
// spaces, quotes, newlines and non-ASCII (no NUL, which argv cannot hold).
func anyString() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.StringMatching(`[-a-zA-Z0-9 =/"'\n._é😀]{0,20}`),
		rapid.SampledFrom([]string{"--help", "-", "--", "-c", "--session", "--format=text", "run", "--auto=false"}),
	)
}

func TestArgsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := agentcli.Request{
			Prompt:       anyString().Draw(t, "prompt"),
			SystemPrompt: anyString().Draw(t, "system"),
			Model:        anyString().Draw(t, "model"),
			SessionID:    anyString().Draw(t, "session"),
			MaxTurns:     rapid.IntRange(0, 5).Draw(t, "maxTurns"),
			Permission: rapid.SampledFrom([]agentcli.PermissionMode{"", agentcli.PermissionBypass,
				agentcli.PermissionDeny, agentcli.PermissionPlan}).Draw(t, "permission"),
		}
		dir := ""
		if rapid.Bool().Draw(t, "hasDir") {
			dir = "/" + anyString().Draw(t, "dir")
		}
		args := buildArgs(&req, dir)

		// Required flags, always, in front: --auto (approve what the
		// config does not deny) only for bypass, the plan agent for plan.
		want := []string{"run", "--format", "json", "--thinking"}
		switch req.Permission {
		case agentcli.PermissionBypass:
			want = slices.Insert(want, 3, "--auto")
		case agentcli.PermissionPlan:
			want = slices.Insert(want, 3, "--agent=plan")
		}
		if len(args) < len(want) || !slices.Equal(args[:len(want)], want) {
			t.Fatalf("argv does not start with the required flags %q: %q", want, args)
		}
		count := func(prefix string) (n int, val string) {
			for _, a := range args {
				if strings.HasPrefix(a, prefix) {
					n++
					val = strings.TrimPrefix(a, prefix)
				}
			}
			return
		}
		if n, v := count("--dir="); (dir != "") != (n == 1) || n > 1 || v != dir {
			t.Fatalf("--dir for dir %q: %q", dir, args)
		}
		if n, v := count("--model="); (req.Model != "") != (n == 1) || n > 1 || v != req.Model {
			t.Fatalf("--model for model %q: %q", req.Model, args)
		}
		// Session flags iff a session id is given; never --continue.
		if n, v := count("--session="); (req.SessionID != "") != (n == 1) || n > 1 || v != req.SessionID {
			t.Fatalf("--session for id %q: %q", req.SessionID, args)
		}
		for _, a := range args {
			if a == "-c" || a == "--continue" || a == "-s" || a == "--session" {
				t.Fatalf("unexpected %s in %q", a, args)
			}
		}
		// The prompt and system prompt never reach argv: the argv is the
		// same without them.
		bare := req
		bare.Prompt, bare.SystemPrompt = "", ""
		if !slices.Equal(args, buildArgs(&bare, dir)) {
			t.Fatalf("argv depends on the prompt: %q", args)
		}
		// opencode (the fake's yargs rules) accepts it.
		if err := fakecli.ParseOpencodeArgs(args); err != nil {
			t.Fatalf("fake opencode rejects %q: %v", args, err)
		}
	})
}
