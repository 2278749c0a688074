package copilot

import (
	"context"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// argvOf returns the argv of every way copilot is started for req: a run,
// a live session and the interactive UI (with files in place).
func argvOf(req *agentcli.Request) ([][]string, error) {
	p, err := policyFor(req)
	if err != nil {
		return nil, err
	}
	f := files{usage: "/tmp/agentcli-run-1/usage.json"}
	if b, _ := mcpConfig(req.MCPServers, p); b != nil {
		f.mcp = "/tmp/agentcli-run-1/mcp.json"
	}
	out := [][]string{buildArgs(req, p, f, "4c7d5e9b-1f0a-4b8e-9d3c-2a6f8e1b0c5d"), liveArgs(req, p, f)}
	ireq := *req
	if ireq.Permission == agentcli.PermissionDeny {
		ireq.Permission = ""
	}
	ia, err := interactiveArgs(&ireq, p, f)
	if err != nil {
		return nil, err
	}
	return append(out, ia), nil
}

// TestNoFieldBecomesAnOption is the flag-injection property for copilot:
// whatever the request holds, every argument agentcli builds is one option
// for copilot's parser (clap, as the fake parses it; the fake is held to
// the real binary by TestFlavorMatchesRealCLI), no argument is read as a
// positional word (copilot takes one as an unquoted prompt) or as an
// option's value, and the caller's values arrive as their options' values.
// validate's refusals are typed errors naming a field, or, for tool rules
// copilot cannot hold, *agentcli.UnsupportedError.
func TestNoFieldBecomesAnOption(t *testing.T) {
	parse := fakecli.Flavors[Name].Parse
	rapid.Check(t, func(t *rapid.T) {
		req := backendtest.HostileRequest(t)
		req.Permission = rapid.SampledFrom(driver.PermissionModes).Draw(t, "mode")
		if req.Permission == agentcli.PermissionAsk {
			req.OnPermission = func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
				return agentcli.PermissionDecision{}
			}
		}
		if !slices.Contains(agentcli.Efforts(), req.Effort) {
			req.Effort = "" // driver.CheckRequest refuses an unknown level
		}
		if err := validate(req); err != nil {
			var ue *agentcli.UnsupportedError
			if !errorsAs(err, &ue) {
				backendtest.CheckRequestError(t, err, Name)
			}
			return
		}
		all, err := argvOf(req)
		if err != nil {
			t.Fatalf("argv: %v", err)
		}
		for _, args := range all {
			got, err := parse(args)
			if err != nil {
				t.Fatalf("copilot would reject %q: %v", args, err)
			}
			if len(got.Positional) != 0 {
				t.Fatalf("positional words %q in %q", got.Positional, args)
			}
			if n := len(got.OptionArgs()); n != len(args) {
				t.Fatalf("%d options in %d arguments %q: %v", n, len(args), args, got.Options)
			}
			for i, a := range args {
				one, err := parse([]string{a})
				if err != nil || len(one.Options) == 0 {
					t.Fatalf("argument %d %q alone: %v", i, a, err)
				}
				name, val, _ := strings.Cut(a, "=")
				for _, o := range one.Options {
					if o.Name != name {
						t.Fatalf("argument %q is option %s", a, o.Name)
					}
					if !strings.Contains(val, o.Value) {
						t.Fatalf("argument %q has value %q", a, o.Value)
					}
				}
			}
			check := func(flag, want string) {
				if want != "" && !slices.Equal(got.Values[flag], []string{want}) {
					t.Fatalf("%s = %q, want %q (argv %q)", flag, got.Values[flag], want, args)
				}
			}
			check("--model", req.Model)
			if args[0] != "--acp" {
				check("--resume", req.SessionID)
			}
		}
	})
}

func errorsAs(err error, target **agentcli.UnsupportedError) bool {
	for e := err; e != nil; {
		if ue, ok := e.(*agentcli.UnsupportedError); ok {
			*target = ue
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

// The separate-argument form would let values become options or prompt
// words: `--model -x` is a usage error, `--resume --allow-all` resumes the
// latest session with every tool approved.
func TestInjectionRegressions(t *testing.T) {
	parse := fakecli.Flavors[Name].Parse
	for _, req := range []agentcli.Request{
		{Model: "--allow-all"},
		{Model: "-x"},
		{Model: "a,b"},
		{Effort: agentcli.EffortMax, Model: "--plan"},
	} {
		p, _ := policyFor(&req)
		args := buildArgs(&req, p, files{}, "")
		got, err := parse(args)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if got.Values["--allow-all"] != nil || got.Values["--plan"] != nil || !slices.Equal(got.Values["--model"], []string{req.Model}) {
			t.Fatalf("a value became an option: %q → %v", args, got.Values)
		}
	}
	for _, id := range []string{"--allow-all", "-x", "latest", "my session", "0cb916d", "0cb916db-26aa-40f2-86b5-1ba81b225fd2x"} {
		if re := backendtest.CheckRequestError(t, validate(&agentcli.Request{SessionID: id}), Name); re.Field != "SessionID" {
			t.Errorf("validate(%q) names %s", id, re.Field)
		}
	}
	if err := validate(&agentcli.Request{SessionID: "0cb916db-26aa-40f2-86b5-1ba81b225fd2"}); err != nil {
		t.Fatal(err)
	}
}
