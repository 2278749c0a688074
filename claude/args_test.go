package claude

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/fakecli"
	"pgregory.net/rapid"
)

// The goldens were checked against `claude --help` of 2.1.330 and the hidden
// options listed in wire-formats §2.1; the real-CLI conformance suite runs
// the same builder against the real binary.
func TestArgsGolden(t *testing.T) {
	cases := []struct {
		name string
		req  agentcli.Request
		f    bool
		sys  string
	}{
		{"minimal-json", agentcli.Request{Prompt: "hi"}, false, ""},
		{"minimal-stream", agentcli.Request{Prompt: "hi"}, true, ""},
		{"bypass", agentcli.Request{Prompt: "hi", Permission: agentcli.PermissionBypass}, false, ""},
		{"full", agentcli.Request{
			Prompt: "--help", SessionID: "387144c4-c3b7-4733-aa27-be4c71200f23", Model: "claude-sonnet-4-5",
			MaxTurns: 25, AllowedTools: []string{"Read", "Bash(git *)"}, DisallowedTools: []string{"WebFetch"},
			ExtraArgs: []string{"--effort", "low"},
		}, true, "/tmp/agentcli-claude-system-1.md"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backendtest.GoldenArgs(t, c.name, buildArgs(&c.req, c.f, c.sys))
		})
	}
}

func genRequest(t *rapid.T) *agentcli.Request {
	tool := rapid.StringMatching(`[A-Z][a-zA-Z]{1,8}(\([a-z *]{1,6}\))?`)
	return &agentcli.Request{
		Prompt:          rapid.String().Draw(t, "prompt"),
		SystemPrompt:    rapid.String().Draw(t, "system"),
		SessionID:       rapid.OneOf(rapid.Just(""), rapid.StringMatching(`[0-9a-f-]{36}`)).Draw(t, "session"),
		Model:           rapid.OneOf(rapid.Just(""), rapid.StringMatching(`[a-z0-9.-]{1,20}`)).Draw(t, "model"),
		MaxTurns:        rapid.IntRange(0, 100).Draw(t, "turns"),
		AllowedTools:    rapid.SliceOfN(tool, 0, 4).Draw(t, "allowed"),
		DisallowedTools: rapid.SliceOfN(tool, 0, 3).Draw(t, "disallowed"),
		Dir:             rapid.StringMatching(`(/[a-z ]{1,8}){0,3}`).Draw(t, "dir"),
		Permission: rapid.SampledFrom([]agentcli.PermissionMode{"", agentcli.PermissionBypass,
			agentcli.PermissionDeny, agentcli.PermissionPlan}).Draw(t, "permission"),
	}
}

// ruleArg is what claude receives of a tool rule: the rule as it is,
// or, when it names a canonical tool in any case, the rule rebuilt with
// claude's spelling of the name.
func ruleArg(rule string) string {
	r, err := driver.ParseRule(rule)
	if err != nil || driver.CanonicalName(r.Name) == "" {
		return rule
	}
	name := driver.CanonicalName(r.Name)
	if name == "Task" {
		name = "Agent"
	}
	if r.HasPattern {
		return name + "(" + r.Pattern + ")"
	}
	return name
}

// wantMode returns the permission flag claude must get for req: the
// option's name and value.
func wantMode(req *agentcli.Request) (string, string) {
	switch req.Permission {
	case agentcli.PermissionBypass:
		if len(req.AllowedTools) == 0 {
			return "--dangerously-skip-permissions", ""
		}
	case agentcli.PermissionPlan:
		return "--permission-mode", "plan"
	}
	return "--permission-mode", "dontAsk" // the zero value and deny; bypass with an allow list
}

// TestArgsProperties checks, for any request: the flags Claude Code needs
// are present; --resume, --append-system-prompt-file, --max-turns and the
// tool lists carry exactly the request's values, as commander parses them
// (the fake's Commander grammar); the prompt never reaches argv (it goes on
// stdin); and no positional word is left over, so nothing can be taken for
// prompt text.
func TestArgsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := genRequest(t)
		f := rapid.Bool().Draw(t, "deltas")
		sys := ""
		if req.SystemPrompt != "" {
			sys = "/tmp/agentcli-claude-system-x.md"
		}
		args := buildArgs(req, f, sys)
		p, err := fakecli.Flavors["claude"].Parse(args)
		if err != nil {
			t.Fatalf("claude would reject %q: %v", args, err)
		}
		if len(p.Positional) != 0 {
			t.Fatalf("argv has positional words %q; they would become prompt text", p.Positional)
		}
		mode, modeVal := wantMode(req)
		for _, need := range []string{"-p", "--output-format", mode} {
			if p.Values[need] == nil {
				t.Fatalf("missing %s in %q", need, args)
			}
		}
		if modeVal != "" && !slices.Equal(p.Values[mode], []string{modeVal}) {
			t.Fatalf("%s = %q, want %q", mode, p.Values[mode], modeVal)
		}
		var allowed, disallowed []string
		var tools []string
		for _, r := range req.AllowedTools {
			allowed = append(allowed, ruleArg(r))
			if n, _, _ := strings.Cut(ruleArg(r), "("); !slices.Contains(tools, n) {
				tools = append(tools, n)
			}
		}
		for _, r := range req.DisallowedTools {
			disallowed = append(disallowed, ruleArg(r))
		}
		if len(req.AllowedTools) > 0 && !slices.Equal(p.Values["--tools"], []string{strings.Join(tools, ",")}) {
			t.Fatalf("--tools = %q, want %q", p.Values["--tools"], strings.Join(tools, ","))
		}
		if len(req.AllowedTools) == 0 && p.Values["--tools"] != nil {
			t.Fatalf("--tools without an allow list: %q", args)
		}
		if f && p.Values["--verbose"] == nil {
			t.Fatalf("stream-json without --verbose: %q", args)
		}
		one := func(s string) []string {
			if s == "" {
				return nil
			}
			return []string{s}
		}
		turns := ""
		if req.MaxTurns > 0 {
			turns = strconv.Itoa(req.MaxTurns)
		}
		for flag, want := range map[string][]string{
			"--resume":                    one(req.SessionID),
			"--append-system-prompt-file": one(sys),
			"--max-turns":                 one(turns),
			"--model":                     one(req.Model),
			"--allowedTools":              allowed,
			"--disallowedTools":           disallowed,
		} {
			if got := p.Values[flag]; !slices.Equal(got, want) && len(got)+len(want) > 0 {
				t.Fatalf("%s parsed as %q, want %q (argv %q)", flag, got, want, args)
			}
		}
		other := *req
		other.Prompt = req.Prompt + "x"
		if !slices.Equal(buildArgs(&other, f, sys), args) {
			t.Fatalf("argv depends on the prompt")
		}
	})
}

// Property: whatever the prompt, stdin carries exactly one line that the
// CLI's stream-json reader decodes back to that prompt, marked not typed.
func TestUserMessageProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prompt := rapid.OneOf(rapid.String(), rapid.StringMatching(`[/@!#-].*`)).Draw(t, "prompt")
		line := userMessage(prompt)
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("not exactly one line: %q", line)
		}
		got, msg := fakecli.Flavors["claude"].StdinPrompt(map[string][]string{"--input-format": {"stream-json"}}, line)
		if msg != "" || got != strings.ToValidUTF8(prompt, "\uFFFD") {
			t.Fatalf("decoded %q (%s), want %q", got, msg, prompt)
		}
		var m map[string]any
		if json.Unmarshal(line, &m) != nil || m["text_not_typed"] != true || m["type"] != "user" {
			t.Fatalf("message %s", line)
		}
	})
}
