package qwen

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// optionSet returns the distinct options of p, sorted.
func optionSet(p *fakecli.ParsedArgs) []string {
	names := slices.Clone(backendtest.OptionNames(p))
	slices.Sort(names)
	return slices.Compact(names)
}

// TestNoFieldBecomesAnOption is the flag-injection property for qwen:
// whatever the request holds, the argv parsed as yargs parses it (the
// fake's qwen grammar, checked against the real binary by
// TestFlavorMatchesRealCLI) has the options of the same request with
// benign values, no positional word (a prompt or a subcommand), and every
// caller value arrives as its option's value, byte for byte. validate's
// refusals are typed errors naming a field.
func TestNoFieldBecomesAnOption(t *testing.T) {
	parse := fakecli.Flavors[Name].Parse
	rapid.Check(t, func(t *rapid.T) {
		req := backendtest.HostileRequest(t)
		f := rapid.Bool().Draw(t, "deltas")
		mcp := rapid.SampledFrom([]string{"", "/tmp/agentcli-run-1/mcp.json"}).Draw(t, "mcp file")
		valid := true
		if err := validate(req); err != nil {
			backendtest.CheckRequestError(t, err, Name)
			valid = false // refused before anything starts; its argv must parse all the same
		}
		ok := backendtest.Benign(req, "2f5b1456-2585-48ad-850a-0d7038329f7c")
		if err := validate(ok); err != nil {
			t.Fatalf("validate refuses the benign request: %v", err)
		}
		args := buildArgs(req, f, mcp)
		got, err := parse(args)
		if err != nil {
			t.Fatalf("qwen would reject %q: %v", args, err)
		}
		want, err := parse(buildArgs(ok, f, mcp))
		if err != nil {
			t.Fatal(err)
		}
		if g, w := optionSet(got), optionSet(want); valid && !slices.Equal(g, w) {
			t.Fatalf("options %q, want %q (argv %q)", g, w, args)
		}
		if len(got.Positional) != 0 {
			t.Fatalf("positional words %q in %q", got.Positional, args)
		}
		for _, c := range []struct{ flag, want string }{
			{"--resume", req.SessionID}, {"--model", req.Model}, {"--fallback-model", req.FallbackModel},
			{"--append-system-prompt", req.SystemPrompt}, {"--mcp-config", mcp},
		} {
			if valid && c.want != "" && !slices.Equal(got.Values[c.flag], []string{c.want}) {
				t.Fatalf("%s = %q, want %q (argv %q)", c.flag, got.Values[c.flag], c.want, args)
			}
		}
		if m := got.Values["--approval-mode"]; len(m) != 1 {
			t.Fatalf("--approval-mode %q", m)
		}
		for _, v := range got.Values["--core-tools"] {
			if strings.HasPrefix(v, "-") {
				t.Fatalf("--core-tools %q", v)
			}
		}
	})
}

// The separate-argument form would let a value become an option, and a
// quoted one lose its quotes.
func TestInjectionRegressions(t *testing.T) {
	parse := fakecli.Flavors[Name].Parse
	for _, req := range []agentcli.Request{
		{Model: "--approval-mode=yolo"},
		{Model: "-y"},
		{Model: `"quoted"`},
		{SystemPrompt: "'single'"},
		{SystemPrompt: `"`},
		{FallbackModel: "--yolo"},
		{FallbackModel: "-"},
		{SessionID: "2f5b1456-2585-48ad-850a-0d7038329f7c", Model: "--resume"},
	} {
		args := buildArgs(&req, false, "")
		p, err := parse(args)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if len(p.Values["--approval-mode"]) != 1 || p.Values["--approval-mode"][0] != "default" || p.Values["--yolo"] != nil {
			t.Fatalf("a value became an option: %q → %v", args, p.Values)
		}
		if req.Model != "" && !slices.Equal(p.Values["--model"], []string{req.Model}) {
			t.Fatalf("--model %q, want %q", p.Values["--model"], req.Model)
		}
		if req.SystemPrompt != "" && !slices.Equal(p.Values["--append-system-prompt"], []string{req.SystemPrompt}) {
			t.Fatalf("--append-system-prompt %q, want %q", p.Values["--append-system-prompt"], req.SystemPrompt)
		}
	}
}

// TestValidateSessionIDs: qwen's --resume takes a session UUID.
func TestValidateSessionIDs(t *testing.T) {
	if err := validate(&agentcli.Request{SessionID: "2f5b1456-2585-48ad-850a-0d7038329f7c"}); err != nil {
		t.Errorf("validate: %v", err)
	}
	for _, id := range []string{"latest", "1", "-r", "--model=x", "my-session", " 2f5b1456-2585-48ad-850a-0d7038329f7c"} {
		if re := backendtest.CheckRequestError(t, validate(&agentcli.Request{SessionID: id}), Name); re.Field != "SessionID" {
			t.Errorf("validate(%q) names %s", id, re.Field)
		}
	}
	backendtest.CheckRequestError(t, validate(&agentcli.Request{DisallowedTools: []string{"-x"}}), Name)
	for _, m := range []string{"a,b", `"m"`, "'m'"} {
		if re := backendtest.CheckRequestError(t, validate(&agentcli.Request{FallbackModel: m}), Name); re.Field != "FallbackModel" {
			t.Errorf("validate(FallbackModel %q) names %s", m, re.Field)
		}
	}
}
