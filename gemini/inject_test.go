package gemini

import (
	"slices"
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

// TestNoFieldBecomesAnOption is the flag-injection property for gemini:
// whatever the request holds, the argv parsed as yargs parses it (the
// fake's Yargs grammar) has exactly the options of the same request with
// benign values, no positional word (which would be prompt text or a
// subcommand), and every caller value arrives as its option's value.
// validate's refusals are typed errors naming a field.
func TestNoFieldBecomesAnOption(t *testing.T) {
	parse := fakecli.Flavors["gemini"].Parse
	rapid.Check(t, func(t *rapid.T) {
		req := backendtest.HostileRequest(t)
		f := rapid.SampledFrom([]format{formatJSON, formatStream}).Draw(t, "format")
		if err := validate(req); err != nil {
			backendtest.CheckRequestError(t, err, Name)
		}
		ok := backendtest.Benign(req, "2f5b1456-2585-48ad-850a-0d7038329f7c")
		if err := validate(ok); err != nil {
			t.Fatalf("validate refuses the benign request: %v", err)
		}
		args := buildArgs(req, f)
		got, err := parse(args)
		if err != nil {
			t.Fatalf("gemini would reject %q: %v", args, err)
		}
		want, err := parse(buildArgs(ok, f))
		if err != nil {
			t.Fatal(err)
		}
		if g, w := backendtest.OptionNames(got), backendtest.OptionNames(want); !slices.Equal(g, w) {
			t.Fatalf("options %q, want %q (argv %q)", g, w, args)
		}
		if len(got.Positional) != 0 {
			t.Fatalf("positional words %q in %q", got.Positional, args)
		}
		if req.SessionID != "" && !slices.Equal(got.Values["--resume"], []string{yargsEquals(req.SessionID)}) {
			t.Fatalf("--resume = %q, want %q", got.Values["--resume"], req.SessionID)
		}
		if req.Model != "" && !slices.Equal(got.Values["--model"], []string{req.Model}) {
			t.Fatalf("--model = %q, want %q", got.Values["--model"], req.Model)
		}
	})
}

// The separate-argument form would let a session id or model become
// options: `--resume --model=x` resumes the latest session with model x,
// `--model -x` is a usage error.
func TestInjectionRegressions(t *testing.T) {
	parse := fakecli.Flavors["gemini"].Parse
	for _, req := range []agentcli.Request{
		{SessionID: "--model=evil"},
		{SessionID: "-y"},
		{Model: "--approval-mode=default"},
		{Model: "-x"},
	} {
		args := buildArgs(&req, formatJSON)
		p, err := parse(args)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if len(p.Values["--model"]) > 1 || len(p.Values["--approval-mode"]) != 1 || p.Values["--yolo"] != nil {
			t.Fatalf("a value became an option: %q → %v", args, p.Values)
		}
	}
	if err := validate(&agentcli.Request{SessionID: "--model=evil"}); err == nil {
		t.Fatal("validate accepts a session id that is an option")
	}
}

// TestValidateSessionIDs: what gemini's --resume accepts.
func TestValidateSessionIDs(t *testing.T) {
	for _, id := range []string{"2f5b1456-2585-48ad-850a-0d7038329f7c", "latest", "1", "42", "999999999"} {
		if err := validate(&agentcli.Request{SessionID: id}); err != nil {
			t.Errorf("validate(%q): %v", id, err)
		}
	}
	for _, id := range []string{"0", "01", "-1", "1.5", "1234567890", "Latest", " latest", "my-session", "--resume", "ses_abc"} {
		if re := backendtest.CheckRequestError(t, validate(&agentcli.Request{SessionID: id}), Name); re.Field != "SessionID" {
			t.Errorf("validate(%q) names %s", id, re.Field)
		}
	}
	backendtest.CheckRequestError(t, validate(&agentcli.Request{DisallowedTools: []string{"-x"}}), Name)
}

// TestHostileRequestsEndToEnd is drivertest's flag-injection property, the
// one an outside backend runs: hostile requests run on the fake CLI, whose
// argv, parsed with the flavor's grammar, must have the options of the
// benign twin's.
func TestHostileRequestsEndToEnd(t *testing.T) {
	backendtest.HostileRequests(t, kit, "2f5b1456-2585-48ad-850a-0d7038329f7c", nil)
}
