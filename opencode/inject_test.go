package opencode

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// yargsEquals is what yargs makes of --key=VALUE for an option without
// nargs: VALUE, minus one pair of surrounding quotes.
func yargsEquals(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// TestNoFieldBecomesAnOption is the flag-injection property for opencode:
// whatever the request holds, the argv parsed as yargs parses it (the
// fake's Yargs grammar) has exactly the options and positional words of the
// same request with benign values, and every caller value arrives as its
// option's value. validate's refusals are typed errors naming a field.
func TestNoFieldBecomesAnOption(t *testing.T) {
	parse := fakecli.Flavors["opencode"].Parse
	rapid.Check(t, func(t *rapid.T) {
		req := backendtest.HostileRequest(t)
		if err := validate(req); err != nil {
			backendtest.CheckRequestError(t, err, Name)
		}
		ok := backendtest.Benign(req, "ses_dff58e508ffesXnQAqy4c9cw0H")
		if err := validate(ok); err != nil {
			t.Fatalf("validate refuses the benign request: %v", err)
		}
		// The glue passes Request.Dir made absolute; --dir=VALUE is safe
		// for any value, so the raw one is used here.
		args := buildArgs(req, req.Dir)
		got, err := parse(args)
		if err != nil {
			t.Fatalf("opencode would reject %q: %v", args, err)
		}
		want, err := parse(buildArgs(ok, ok.Dir))
		if err != nil {
			t.Fatal(err)
		}
		if g, w := backendtest.OptionNames(got), backendtest.OptionNames(want); !slices.Equal(g, w) {
			t.Fatalf("options %q, want %q (argv %q)", g, w, args)
		}
		if !slices.Equal(got.Positional, []string{"run"}) {
			t.Fatalf("positional words %q in %q", got.Positional, args)
		}
		for flag, v := range map[string]string{"--session": req.SessionID, "--model": req.Model, "--dir": req.Dir} {
			if v != "" && !slices.Equal(got.Values[flag], []string{yargsEquals(v)}) {
				t.Fatalf("%s = %q, want %q", flag, got.Values[flag], v)
			}
		}
	})
}

// The separate-argument form would let values become options:
// `--session -m x` leaves the session empty and sets the model.
func TestInjectionRegressions(t *testing.T) {
	parse := fakecli.Flavors["opencode"].Parse
	for _, req := range []agentcli.Request{
		{SessionID: "--model=evil/x"},
		{SessionID: "-c"},
		{Model: "--fork"},
		{Dir: "--session=ses_x"},
	} {
		args := buildArgs(&req, req.Dir)
		p, err := parse(args)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if p.Values["--continue"] != nil || p.Values["--fork"] != nil || len(p.Values["--model"]) > 1 || len(p.Values["--session"]) > 1 {
			t.Fatalf("a value became an option: %q → %v", args, p.Values)
		}
	}
}

// TestValidateSessionIDs: opencode session ids are "ses_" and letters or
// digits.
func TestValidateSessionIDs(t *testing.T) {
	for _, id := range []string{"ses_dff58e508ffesXnQAqy4c9cw0H", "ses_doesnotexist123", "ses_" + strings.Repeat("a", maxSessionIDLen)} {
		if err := validate(&agentcli.Request{SessionID: id}); err != nil {
			t.Errorf("validate(%q): %v", id, err)
		}
	}
	for _, id := range []string{"ses_", "ses", "ses-abc", "ses_a-b", "ses_a b", "SES_abc", "--session=ses_x", "ses_" + strings.Repeat("a", maxSessionIDLen+1),
		"2f5b1456-2585-48ad-850a-0d7038329f7c"} {
		if re := backendtest.CheckRequestError(t, validate(&agentcli.Request{SessionID: id}), Name); re.Field != "SessionID" {
			t.Errorf("validate(%q) names %s", id, re.Field)
		}
	}
	backendtest.CheckRequestError(t, validate(&agentcli.Request{AllowedTools: []string{""}}), Name)
}

// TestHostileRequestsEndToEnd is drivertest's flag-injection property, the
// one an outside backend runs: hostile requests run on the fake CLI, whose
// argv, parsed with the flavor's grammar, must have the options of the
// benign twin's.
// The model is left out: a plain name would be looked up with `opencode
// models`, which the fake does not answer.
func TestHostileRequestsEndToEnd(t *testing.T) {
	backendtest.HostileRequests(t, kit, "ses_dff58e508ffesXnQAqy4c9cw0H", func(r *agentcli.Request) { r.Model = "" })
}
