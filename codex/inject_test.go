package codex

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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
// SESSION_ID, the system prompt as a -c value (a run with ExtraArgs; any
// other goes through app-server). validate's refusals are typed errors
// naming a field.
func TestNoFieldBecomesAnOption(t *testing.T) {
	parse := fakecli.Flavors["codex"].Parse
	rapid.Check(t, func(t *rapid.T) {
		req := backendtest.HostileRequest(t)
		if err := validate(req); err != nil {
			backendtest.CheckRequestError(t, err, Name)
		}
		ok := backendtest.Benign(req, "01a20096-ac79-7f83-8b64-1211be7331ad")
		if err := validate(ok); err != nil {
			t.Fatalf("validate refuses the benign request: %v", err)
		}
		// The glue passes filepath.Abs(Request.Dir); --cd=VALUE is safe
		// for any value, so the raw one is used here.
		args := buildArgs(req, req.Dir)
		got, err := parse(args)
		if err != nil {
			t.Fatalf("codex would reject %q: %v", args, err)
		}
		want, err := parse(buildArgs(ok, ok.Dir))
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
		var sys []string
		for _, c := range a.Exec["--config"] {
			if v, ok := strings.CutPrefix(c, developerInstructionsKey+"="); ok {
				sys = append(sys, v)
			}
		}
		if req.SystemPrompt == "" && len(sys) != 0 || req.SystemPrompt != "" && len(sys) != 1 {
			t.Fatalf("developer_instructions %q for system prompt %q", sys, req.SystemPrompt)
		}
		if len(sys) == 1 {
			if got, err := decodeTOMLBasic(sys[0]); err != nil || got != strings.ToValidUTF8(req.SystemPrompt, "\uFFFD") {
				t.Fatalf("developer_instructions %q decodes to %q (%v)", sys[0], got, err)
			}
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

// needsAppServer: a run with a system prompt or MCP servers goes through
// codex app-server (which takes them on stdin), unless it has ExtraArgs,
// which are exec's.
func TestNeedsAppServer(t *testing.T) {
	for _, c := range []struct {
		req  agentcli.Request
		want bool
	}{
		{agentcli.Request{}, false},
		{agentcli.Request{Effort: agentcli.EffortLow, OutputSchema: []byte(`{}`)}, false},
		{agentcli.Request{SystemPrompt: "s"}, true},
		{agentcli.Request{MCPServers: []agentcli.MCPServer{{Name: "a", Command: "x"}}}, true},
		{agentcli.Request{SystemPrompt: "s", ExtraArgs: []string{"--ephemeral"}}, false},
	} {
		if got := needsAppServer(&c.req); got != c.want {
			t.Errorf("needsAppServer(%+v) = %v", c.req, got)
		}
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

// TestHostileRequestsEndToEnd is drivertest's flag-injection property, the
// one an outside backend runs: hostile requests run on the fake CLI, whose
// argv, parsed with the flavor's grammar, must have the options of the
// benign twin's. MCP servers are left out: a run with them goes through
// a live session (codex app-server), which the fake's script is not.
func TestHostileRequestsEndToEnd(t *testing.T) {
	backendtest.HostileRequests(t, kit, "01a20096-ac79-7f83-8b64-1211be7331ad", func(r *agentcli.Request) { r.MCPServers = nil })
}
