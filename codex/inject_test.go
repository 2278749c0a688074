package codex

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// TestNoFieldBecomesAnOption is the flag-injection property for codex:
// whatever the request holds, the argv parsed as clap parses it (the fake's
// parseCodex) has exactly the options and positional words of the same
// request with benign values, and every caller value arrives whole: the
// model and directory as option values, the session id as resume's
// SESSION_ID, the system prompt as a profile or a -c value. validate's
// refusals are typed errors naming a field.
func TestNoFieldBecomesAnOption(t *testing.T) {
	parse := fakecli.Flavors["codex"].Parse
	rapid.Check(t, func(t *rapid.T) {
		req := backendtest.HostileRequest(t)
		profile := rapid.SampledFrom([]string{"", profilePrefix + "0123456789abcdef"}).Draw(t, "profile")
		if err := validate(req); err != nil {
			backendtest.CheckRequestError(t, err, Name)
		}
		ok := backendtest.Benign(req, "01a20096-ac79-7f83-8b64-1211be7331ad")
		if err := validate(ok); err != nil {
			t.Fatalf("validate refuses the benign request: %v", err)
		}
		// The glue passes filepath.Abs(Request.Dir); --cd=VALUE is safe
		// for any value, so the raw one is used here.
		args := buildArgsProfile(req, req.Dir, profile)
		got, err := parse(args)
		if err != nil {
			t.Fatalf("codex would reject %q: %v", args, err)
		}
		want, err := parse(buildArgsProfile(ok, ok.Dir, profile))
		if err != nil {
			t.Fatal(err)
		}
		if g, w := backendtest.OptionNames(got), backendtest.OptionNames(want); !slices.Equal(g, w) {
			t.Fatalf("options %q, want %q (argv %q)", g, w, args)
		}
		if len(got.Positional) != len(want.Positional) {
			t.Fatalf("positional words %q, want %d (argv %q)", got.Positional, len(want.Positional), args)
		}
		a, err := fakecli.ParseCodexArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		one := func(s string) []string {
			if s == "" {
				return nil
			}
			return []string{s}
		}
		for flag, vals := range map[string][]string{"--model": one(req.Model), "--cd": one(req.Dir)} {
			if g := a.Exec[flag]; !slices.Equal(g, vals) {
				t.Fatalf("%s = %q, want %q", flag, g, vals)
			}
		}
		if a.SessionID != req.SessionID || a.Prompt != "" && a.Prompt != "-" || a.ResumePrompt != "" && a.ResumePrompt != "-" {
			t.Fatalf("session %q prompt %q/%q (argv %q)", a.SessionID, a.Prompt, a.ResumePrompt, args)
		}
		if req.SystemPrompt != "" && profile != "" && !slices.Equal(a.Exec["--profile"], []string{profile}) {
			t.Fatalf("profile %q, want %q", a.Exec["--profile"], profile)
		}
	})
}

// TestValidateSessionIDs: only thread UUIDs. A name would be looked up as a
// thread name, and an unknown name silently starts a new thread.
func TestValidateSessionIDs(t *testing.T) {
	for _, id := range []string{"01a20096-ac79-7f83-8b64-1211be7331ad", "01A20096-AC79-7F83-8B64-1211BE7331AD"} {
		if err := validate(&agentcli.Request{SessionID: id}); err != nil {
			t.Errorf("validate(%q): %v", id, err)
		}
	}
	for _, id := range []string{"my-thread", "latest", "--last", "-", "01a20096ac797f838b641211be7331ad",
		"01a20096-ac79-7f83-8b64-1211be7331ad ", "{01a20096-ac79-7f83-8b64-1211be7331ad}"} {
		if re := backendtest.CheckRequestError(t, validate(&agentcli.Request{SessionID: id}), Name); re.Field != "SessionID" {
			t.Errorf("validate(%q) names %s", id, re.Field)
		}
	}
	err := validate(&agentcli.Request{AllowedTools: []string{"Read", "--x"}})
	backendtest.CheckRequestError(t, err, Name)
}

// TestSystemPromptProfile: with a profile, the system prompt appears
// nowhere in argv; the profile file is private (0600), in CODEX_HOME,
// holds developer_instructions as a TOML string that decodes to the prompt,
// and is gone after remove. Concurrent runs get distinct files.
func TestSystemPromptProfile(t *testing.T) {
	home := filepath.Join(t.TempDir(), "codex-home")
	env := []string{"CODEX_HOME=/elsewhere", "CODEX_HOME=" + home}
	sys := "Be \"brief\".\nline two -- --help -c x=y \\ \x01 é"
	name, remove, err := writeSystemProfile(env, "", sys)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, name+".config.toml")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("profile mode %o", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	var value string
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, developerInstructionsKey+" = "); ok {
			value = v
		}
	}
	if got, err := decodeTOMLBasic(value); err != nil || got != sys {
		t.Fatalf("developer_instructions decodes to %q (%v), want %q; file:\n%s", got, err, sys, b)
	}
	args := buildArgsProfile(&agentcli.Request{Prompt: "hi", SystemPrompt: sys}, "", name)
	for _, a := range args {
		if strings.Contains(a, "brief") || strings.Contains(a, developerInstructionsKey) {
			t.Fatalf("system prompt on the command line: %q", args)
		}
	}
	if !slices.Contains(args, "--profile="+name) {
		t.Fatalf("argv %q lacks --profile=%s", args, name)
	}
	remove()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("profile left behind: %v", err)
	}

	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, rm, err := writeSystemProfile(env, "", "x")
			if err != nil {
				t.Error(err)
				return
			}
			defer rm()
			mu.Lock()
			defer mu.Unlock()
			if seen[n] {
				t.Errorf("profile name %s used twice", n)
			}
			seen[n] = true
		}()
	}
	wg.Wait()
	if left, _ := os.ReadDir(home); len(left) != 0 {
		t.Fatalf("files left in CODEX_HOME: %v", left)
	}
}

func TestCodexHome(t *testing.T) {
	for _, c := range []struct {
		env  []string
		dir  string
		want string
	}{
		{[]string{"HOME=/h"}, "", "/h/.codex"},
		{[]string{"HOME=/h", "CODEX_HOME=/c"}, "/w", "/c"},
		{[]string{"CODEX_HOME=rel"}, "/w", "/w/rel"},
		{[]string{"CODEX_HOME=/c", "CODEX_HOME="}, "", ""}, // empty: fall back to HOME
	} {
		got, err := codexHome(c.env, c.dir)
		if c.want == "" {
			h, _ := os.UserHomeDir()
			c.want = filepath.Join(h, ".codex")
		}
		if err != nil || got != c.want {
			t.Errorf("codexHome(%q, %q) = %q, %v; want %q", c.env, c.dir, got, err, c.want)
		}
	}
}

func TestSelectsProfile(t *testing.T) {
	for args, want := range map[string]bool{
		"": false, "-p work": true, "--profile work": true, "--profile=work": true, "-pwork": true,
		"--ephemeral": false, "-c x=1": false, "resume -p x": false, "-- -p": false,
	} {
		if got := selectsProfile(strings.Fields(args)); got != want {
			t.Errorf("selectsProfile(%q) = %v, want %v", args, got, want)
		}
	}
}
