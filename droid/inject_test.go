package droid

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// optionSet returns the distinct options of p, sorted.
func optionSet(p *fakecli.ParsedArgs) []string {
	names := slices.Clone(backendtest.OptionNames(p))
	slices.Sort(names)
	return slices.Compact(names)
}

// TestNoFieldBecomesAnOption is the flag-injection property for droid:
// whatever the request holds, the argv of a one-shot run and of a live
// session, parsed as droid exec's commander parses it (the fake's droid
// grammar, held to the real binary by TestFlavorMatchesRealCLI), is
// accepted, has every argument after "exec" read as one option of its
// own, the options of the same request with benign values, no positional
// word (droid would take it as the prompt), and every caller value as its
// option's value, byte for byte; each tool rule the caller names is one
// whole entry of droid's tool lists. validate's refusals are typed errors
// naming a field, or *agentcli.UnsupportedError for rules droid cannot
// hold.
func TestNoFieldBecomesAnOption(t *testing.T) {
	fl := fakecli.Flavors[Name]
	rapid.Check(t, func(t *rapid.T) {
		req := backendtest.HostileRequest(t)
		req.Permission = rapid.SampledFrom(driver.PermissionModes).Draw(t, "mode")
		if !slices.Contains(agentcli.Efforts(), req.Effort) {
			req.Effort = "" // driver.CheckRequest refuses an unknown level first
		}
		sys := rapid.SampledFrom([]string{"", "/tmp/agentcli-run-1/system-prompt.md"}).Draw(t, "system file")
		if err := validate(req); err != nil {
			var ue *agentcli.UnsupportedError
			if !errors.As(err, &ue) {
				backendtest.CheckRequestError(t, err, Name)
			}
			return
		}
		ok := backendtest.Benign(req, "cc1ae009-4718-4094-88ce-bc4267a04c52")
		if err := validate(ok); err != nil {
			t.Fatalf("validate refuses the benign request: %v", err)
		}
		for _, c := range []struct{ args, benign []string }{
			{buildArgs(req, sys, ""), buildArgs(ok, sys, "")},
			{liveArgs(req, ""), liveArgs(ok, "")},
		} {
			args := c.args
			got, err := fl.Parse(args)
			if err != nil {
				t.Fatalf("droid would reject %q: %v", args, err)
			}
			if msg := fl.Validate(got.Values, got.Positional); msg != "" && args[1] != "--output-format=acp-daemon" {
				t.Fatalf("droid would reject %q: %s", args, msg)
			}
			if len(got.Positional) != 0 {
				t.Fatalf("positional words %q in %q", got.Positional, args)
			}
			if n := len(got.OptionArgs()); n != len(args)-1 {
				t.Fatalf("%d options in the %d arguments after exec %q: %v", n, len(args)-1, args, got.Options)
			}
			want, err := fl.Parse(c.benign)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := optionSet(got), optionSet(want); !slices.Equal(g, w) {
				t.Fatalf("options %q, want %q (argv %q)", g, w, args)
			}
			if args[1] == "--output-format=acp-daemon" {
				continue // the rest travels in ACP
			}
			for _, v := range []struct{ flag, want string }{
				{"--model", req.Model}, {"--reasoning-effort", string(req.Effort)}, {"--append-system-prompt-file", sys},
			} {
				if v.want != "" && !slices.Equal(got.Values[v.flag], []string{v.want}) {
					t.Fatalf("%s = %q, want %q (argv %q)", v.flag, got.Values[v.flag], v.want, args)
				}
			}
			for _, l := range []struct {
				flag  string
				rules []string
			}{{"--only-tools", req.AllowedTools}, {"--remove-tools", req.DisallowedTools}} {
				var entries []string
				for _, v := range got.Values[l.flag] {
					entries = append(entries, strings.Split(v, ",")...)
				}
				for _, e := range entries {
					if e == "" || strings.HasPrefix(e, "-") {
						t.Fatalf("%s entry %q (argv %q)", l.flag, e, args)
					}
				}
				for _, r := range l.rules {
					if pr, _ := driver.ParseRule(r); !pr.IsMCP() && tools.Resolve(pr.Name) == nil && !slices.Contains(entries, pr.Name) {
						t.Fatalf("%s lacks %q as an entry: %q", l.flag, pr.Name, got.Values[l.flag])
					}
				}
			}
			if m := driver.Mode(req); m != agentcli.PermissionBypass && len(req.AllowedTools) == 0 {
				only := got.Values["--only-tools"]
				if len(only) != 1 || slices.ContainsFunc(strings.Split(only[0], ","), func(s string) bool { return s == "Execute" || s == "Create" || s == "Edit" }) {
					t.Fatalf("mode %q: --only-tools %q", m, only)
				}
			}
		}
	})
}

// Values are attached with "=": in the separate-argument form a value
// would still be taken (commander takes the next argument whatever it
// looks like), but a missing one would swallow the next option, and "--"
// would turn what follows into the prompt.
func TestInjectionRegressions(t *testing.T) {
	parse := fakecli.Flavors[Name].Parse
	for _, req := range []agentcli.Request{
		{Model: "--auto=high"},
		{Model: "-x"},
		{Model: "--"},
		{Model: "a b", Effort: agentcli.EffortMax},
		{SystemPrompt: "--use-spec"},
	} {
		sys := ""
		if req.SystemPrompt != "" {
			sys = "/tmp/agentcli-run-1/system-prompt.md"
		}
		args := buildArgs(&req, sys, "")
		p, err := parse(args)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if p.Values["--auto"] != nil || p.Values["--use-spec"] != nil || len(p.Positional) > 0 {
			t.Fatalf("a value became an option or the prompt: %q → %v %q", args, p.Values, p.Positional)
		}
		if req.Model != "" && !slices.Equal(p.Values["--model"], []string{req.Model}) {
			t.Fatalf("--model %q, want %q", p.Values["--model"], req.Model)
		}
	}
	for _, id := range []string{"-s", "--auto=high", "latest", "cc1ae009", "cc1ae009-4718-4094-88ce-bc4267a04c52 "} {
		if re := backendtest.CheckRequestError(t, validate(&agentcli.Request{SessionID: id}), Name); re.Field != "SessionID" {
			t.Errorf("validate(%q) names %s", id, re.Field)
		}
	}
}

// TestHostileRequests runs hostile requests end to end through the fake
// droid, which refuses what droid exec's parser would. A request with a
// SessionID or a NewSessionID is a live session, whose argv holds no caller
// string (liveArgs, covered above): it is left out.
func TestHostileRequests(t *testing.T) {
	backendtest.HostileRequests(t, kit, "cc1ae009-4718-4094-88ce-bc4267a04c52", func(r *agentcli.Request) { r.SessionID, r.NewSessionID = "", "" })
}
