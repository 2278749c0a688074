package agentcli

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestSplitToolRules(t *testing.T) {
	for in, want := range map[string][]string{
		"":                                  nil,
		" , ,":                              nil,
		"Read":                              {"Read"},
		"Bash(echo a,b),Read":               {"Bash(echo a,b)", "Read"},
		" Read, Bash(git *) ,,":             {"Read", "Bash(git *)"},
		"Bash(f(a,b),c),Edit":               {"Bash(f(a,b),c)", "Edit"},
		"WebFetch(domain:a.com),Bash(x, y)": {"WebFetch(domain:a.com)", "Bash(x, y)"},
		"Read),Edit":                        {"Read)", "Edit"},
		"Bash(unclosed,Read":                {"Bash(unclosed,Read"},
		"\tRead\n,\nEdit ":                  {"Read", "Edit"},
	} {
		if got := splitToolRules(in); !slices.Equal(got, want) {
			t.Errorf("splitToolRules(%q) = %q, want %q", in, got, want)
		}
	}
}

// rule generates a tool rule: a name, optionally with a balanced
// parenthesized argument that may hold commas, spaces and nested
// parentheses.
func rule() *rapid.Generator[string] {
	var arg func(depth int) *rapid.Generator[string]
	arg = func(depth int) *rapid.Generator[string] {
		return rapid.Custom(func(t *rapid.T) string {
			parts := rapid.SliceOfN(rapid.StringMatching(`[a-z0-9 ,*:./-]{0,6}`), 1, 3).Draw(t, "parts")
			s := strings.Join(parts, "")
			if depth < 3 && rapid.Bool().Draw(t, "nest") {
				s += "(" + arg(depth+1).Draw(t, "inner") + ")"
			}
			return s
		})
	}
	return rapid.Custom(func(t *rapid.T) string {
		r := rapid.StringMatching(`[A-Z][A-Za-z_]{0,8}`).Draw(t, "name")
		if rapid.Bool().Draw(t, "arg") {
			r += "(" + arg(0).Draw(t, "arg") + ")"
		}
		return r
	})
}

// Property: rules joined with commas and random white space split back
// into exactly those rules, however many commas their arguments hold.
func TestSplitToolRulesRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rules := rapid.SliceOfN(rule(), 0, 6).Draw(t, "rules")
		space := rapid.StringMatching(`[ \t]{0,2}`)
		var b strings.Builder
		for i, r := range rules {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(space.Draw(t, "before") + r + space.Draw(t, "after"))
		}
		var want []string
		for _, r := range rules {
			want = append(want, strings.TrimSpace(r))
		}
		if got := splitToolRules(b.String()); !slices.Equal(got, want) {
			t.Fatalf("splitToolRules(%q) = %q, want %q", b.String(), got, want)
		}
	})
}

// Issue 7: ALLOWED_TOOLS="Bash(echo a,b),Read" gave three rules.
func TestConfigAllowedToolsCommaInRule(t *testing.T) {
	env := map[string]string{"ALLOWED_TOOLS": "Bash(echo a,b),Read"}
	c := ConfigFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil)
	if want := []string{"Bash(echo a,b)", "Read"}; !slices.Equal(c.AllowedTools, want) {
		t.Fatalf("AllowedTools = %q, want %q", c.AllowedTools, want)
	}
}
