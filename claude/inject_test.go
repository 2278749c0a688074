package claude

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// TestNoFieldBecomesAnOption is the flag-injection property: whatever the
// request holds, the argv claude receives, parsed as commander parses it
// (the fake's Commander grammar), has exactly the options of the same
// request with benign values, no positional word, and each caller value
// arrives whole as its option's value. This holds for buildArgs alone;
// validate is a second line (its refusals are typed errors naming a field,
// and it accepts the benign request).
func TestNoFieldBecomesAnOption(t *testing.T) {
	parse := fakecli.Flavors["claude"].Parse
	rapid.Check(t, func(t *rapid.T) {
		req := backendtest.HostileRequest(t)
		f := rapid.Bool().Draw(t, "deltas")
		sys := ""
		if req.SystemPrompt != "" {
			sys = "/tmp/agentcli-claude-system-1.md"
		}
		if err := validate(req); err != nil {
			backendtest.CheckRequestError(t, err, Name)
		}
		ok := backendtest.Benign(req, "387144c4-c3b7-4733-aa27-be4c71200f23")
		if err := validate(ok); err != nil {
			t.Fatalf("validate refuses the benign request: %v", err)
		}
		args := buildArgs(req, f, sys)
		got, err := parse(args)
		if err != nil {
			t.Fatalf("claude would reject %q: %v", args, err)
		}
		want, err := parse(buildArgs(ok, f, sys))
		if err != nil {
			t.Fatal(err)
		}
		if g, w := backendtest.OptionNames(got), backendtest.OptionNames(want); !slices.Equal(g, w) {
			t.Fatalf("options %q, want %q (argv %q)", g, w, args)
		}
		if len(got.Positional) != 0 {
			t.Fatalf("positional words %q in %q", got.Positional, args)
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
		var allowed, disallowed []string
		for _, r := range req.AllowedTools {
			allowed = append(allowed, ruleArg(r))
		}
		if len(req.AllowedTools) > 0 {
			// A server no rule names is taken away whole (the hostile
			// rules are no MCP rules).
			for _, s := range req.MCPServers {
				disallowed = append(disallowed, "mcp__"+s.Name)
			}
		}
		for _, r := range req.DisallowedTools {
			disallowed = append(disallowed, ruleArg(r))
		}
		for flag, vals := range map[string][]string{
			"--resume": one(req.SessionID), "--model": one(req.Model), "--max-turns": one(turns),
			"--allowedTools": allowed, "--disallowedTools": disallowed,
		} {
			if g := got.Values[flag]; !slices.Equal(g, vals) && len(g)+len(vals) > 0 {
				t.Fatalf("%s = %q, want %q (argv %q)", flag, g, vals, args)
			}
		}
	})
}

// The holes issue 7 found: an optional --resume value and a variadic tool
// list. Before the fix, commander read "--mcp-config=evil.json" as an
// option of its own and "--permission-mode bypassPermissions" as options.
func TestInjectionRegressions(t *testing.T) {
	parse := fakecli.Flavors["claude"].Parse
	cases := []struct {
		name  string
		req   agentcli.Request
		field string
	}{
		{"resume swallows nothing", agentcli.Request{SessionID: "--mcp-config=evil.json"}, "SessionID"},
		{"resume settings", agentcli.Request{SessionID: "--settings={\"hooks\":{}}"}, "SessionID"},
		{"allowed tool flags", agentcli.Request{AllowedTools: []string{"Read", "--permission-mode", "bypassPermissions"}}, "AllowedTools[1]"},
		{"disallowed tool flag", agentcli.Request{DisallowedTools: []string{"-p"}}, "DisallowedTools[0]"},
		{"spaced dash rule", agentcli.Request{AllowedTools: []string{" --x"}}, "AllowedTools[0]"},
		{"empty rule", agentcli.Request{AllowedTools: []string{"Read", " "}}, "AllowedTools[1]"},
		{"model", agentcli.Request{Model: "--settings=evil.json"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := buildArgs(&c.req, false, "")
			p, err := parse(args)
			if err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			for _, bad := range []string{"--mcp-config", "--settings", "--permission-mode", "-p"} {
				switch bad {
				case "-p":
					if len(p.Values["-p"]) != 1 {
						t.Fatalf("-p given %d times in %q", len(p.Values["-p"]), args)
					}
					continue
				case "--permission-mode":
					// The zero value's own flag, and nothing else.
					if !slices.Equal(p.Values[bad], []string{"dontAsk"}) {
						t.Fatalf("--permission-mode = %q in %q", p.Values[bad], args)
					}
					continue
				}
				if p.Values[bad] != nil {
					t.Fatalf("%s became an option: %q", bad, args)
				}
			}
			err = validate(&c.req)
			if c.field == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if re := backendtest.CheckRequestError(t, err, Name); re.Field != c.field {
				t.Fatalf("field %q, want %q", re.Field, c.field)
			}
		})
	}
}

// TestValidateSessionIDs: what claude's --resume accepts: a session UUID or
// a title.
func TestValidateSessionIDs(t *testing.T) {
	for _, id := range []string{"387144c4-c3b7-4733-aa27-be4c71200f23", "387144C4-C3B7-4733-AA27-BE4C71200F23",
		"my title", "fix: the login bug (2)", "café ☕", strings.Repeat("t", maxTitleLen)} {
		if err := validate(&agentcli.Request{SessionID: id}); err != nil {
			t.Errorf("validate(%q): %v", id, err)
		}
	}
	for _, id := range []string{"-x", "--resume", " lead", "two\nlines", "tab\there", "nul\x00", "\xff\xfe",
		strings.Repeat("t", maxTitleLen+1), "bell\a"} {
		if re := backendtest.CheckRequestError(t, validate(&agentcli.Request{SessionID: id}), Name); re.Field != "SessionID" {
			t.Errorf("validate(%q) names %s", id, re.Field)
		}
	}
}

// TestHostileRequestsEndToEnd is drivertest's flag-injection property, the
// one an outside backend runs: hostile requests run on the fake CLI, whose
// argv, parsed with the flavor's grammar, must have the options of the
// benign twin's.
func TestHostileRequestsEndToEnd(t *testing.T) {
	backendtest.HostileRequests(t, kit, "387144c4-c3b7-4733-aa27-be4c71200f23", nil)
}
