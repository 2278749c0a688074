package agentcli_test

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/driver"
	"pgregory.net/rapid"
)

func init() {
	// Registered once for the tests in this package, beside whatever
	// backends are linked in.
	for _, n := range []string{"claude", "codex", "gemini", "opencode"} {
		if !slices.Contains(agentcli.Backends(), n) {
			driver.Register(n, func(*agentcli.Options) agentcli.Backend { return &agentclitest.Backend{BackendName: n} })
		}
	}
}

func TestBackendsSorted(t *testing.T) {
	got := agentcli.Backends()
	if !slices.IsSorted(got) || len(got) < 4 {
		t.Fatalf("Backends() = %v", got)
	}
}

// Property: a registered name resolves to itself (whatever its case and
// surrounding space), empty resolves to claude, anything else is an error
// that lists every valid name.
func TestResolveProperties(t *testing.T) {
	valid := agentcli.Backends()
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.OneOf(rapid.SampledFrom(valid), rapid.String(), rapid.Just(""), rapid.Just("  ")).Draw(t, "name")
		variant := name
		if rapid.Bool().Draw(t, "upper") {
			variant = " " + strings.ToUpper(name) + "\t"
		}
		got, err := agentcli.Resolve(variant)
		norm := strings.ToLower(strings.TrimSpace(name))
		switch {
		case norm == "":
			if err != nil || got != "claude" {
				t.Fatalf("Resolve(%q) = %q, %v; want claude", variant, got, err)
			}
		case slices.Contains(valid, norm):
			if err != nil || got != norm {
				t.Fatalf("Resolve(%q) = %q, %v", variant, got, err)
			}
		case norm == "claude-code" || norm == "claudecode" || norm == "codex-cli" || norm == "gemini-cli" || norm == "open-code":
		default:
			var ue *agentcli.UnknownBackendError
			if !errors.As(err, &ue) || !errors.Is(err, agentcli.ErrUnknownBackend) {
				t.Fatalf("Resolve(%q) err = %v", variant, err)
			}
			for _, v := range valid {
				if !strings.Contains(err.Error(), v) {
					t.Fatalf("error %q does not list %q", err, v)
				}
			}
		}
	})
}

func TestOpen(t *testing.T) {
	b, err := agentcli.Open("", nil)
	if err != nil || b.Name() != "claude" {
		t.Fatalf("Open(\"\") = %v, %v", b, err)
	}
	if _, err := agentcli.Open("gpt", nil); !errors.Is(err, agentcli.ErrUnknownBackend) {
		t.Fatalf("Open(gpt) err = %v", err)
	}
}

func TestConfigFromLookup(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	c := agentcli.ConfigFromLookup(env(nil), log)
	if c.MaxTurns != 25 || c.Backend != "" || c.AllowedTools != nil || logs.Len() != 0 {
		t.Fatalf("defaults: %+v, logs %q", c, logs.String())
	}
	c = agentcli.ConfigFromLookup(env(map[string]string{
		"AGENT_BACKEND": "gemini", "BACKEND_CLI_PATH": "/opt/gemini", "BACKEND_MODEL": "m1",
		"BACKEND_MAX_TURNS": "7", "ALLOWED_TOOLS": " Read, Bash(git *) ,,", "BACKEND_CLI_ARGS": " exec  --output-format acp-daemon ",
	}), log)
	want := []string{"Read", "Bash(git *)"}
	if c.Backend != "gemini" || c.CLIPath != "/opt/gemini" || c.Model != "m1" || c.MaxTurns != 7 || !slices.Equal(c.AllowedTools, want) ||
		!slices.Equal(c.Args, []string{"exec", "--output-format", "acp-daemon"}) {
		t.Fatalf("config %+v", c)
	}
	for in, want := range map[string]agentcli.PermissionMode{"ask": agentcli.PermissionAsk, " Bypass ": agentcli.PermissionBypass,
		"deny": agentcli.PermissionDeny, "plan": agentcli.PermissionPlan, "": "", "yolo": ""} {
		logs.Reset()
		c = agentcli.ConfigFromLookup(env(map[string]string{"PERMISSION_MODE": in}), log)
		if c.Permission != want || (in == "yolo") != strings.Contains(logs.String(), "PERMISSION_MODE") {
			t.Fatalf("PERMISSION_MODE=%q: %q, logs %q", in, c.Permission, logs.String())
		}
		req := &agentcli.Request{}
		c.Apply(req, agentcli.Capabilities{})
		if req.Permission != want {
			t.Fatalf("PERMISSION_MODE=%q applied as %q", in, req.Permission)
		}
		req = &agentcli.Request{Permission: agentcli.PermissionPlan}
		if c.Apply(req, agentcli.Capabilities{}); req.Permission != agentcli.PermissionPlan {
			t.Fatalf("PERMISSION_MODE=%q overwrote the request's mode", in)
		}
	}
	for _, bad := range []string{"x", "-3", "0", "2.5"} {
		logs.Reset()
		c = agentcli.ConfigFromLookup(env(map[string]string{"BACKEND_MAX_TURNS": bad}), log)
		if c.MaxTurns != 25 || !strings.Contains(logs.String(), "BACKEND_MAX_TURNS") || !strings.Contains(logs.String(), "level=WARN") {
			t.Fatalf("BACKEND_MAX_TURNS=%q: %+v, logs %q", bad, c, logs.String())
		}
	}
	// A nil logger logs nothing, not even through slog.Default.
	logs.Reset()
	old := slog.Default()
	slog.SetDefault(log)
	defer slog.SetDefault(old)
	if c = agentcli.ConfigFromLookup(env(map[string]string{"BACKEND_MAX_TURNS": "x"}), nil); c.MaxTurns != 25 || logs.Len() != 0 {
		t.Fatalf("nil logger: %+v, logs %q", c, logs.String())
	}
}

func TestConfigApply(t *testing.T) {
	c := agentcli.ConfigFromLookup(func(string) (string, bool) { return "", false }, nil)
	c.Model = "m"
	req := &agentcli.Request{}
	c.Apply(req, agentcli.Capabilities{MaxTurns: false})
	if req.MaxTurns != 0 || req.Model != "m" {
		t.Fatalf("implicit default max turns applied to a backend without max turns: %+v", req)
	}
	req = &agentcli.Request{}
	c.Apply(req, agentcli.Capabilities{MaxTurns: true})
	if req.MaxTurns != 25 {
		t.Fatalf("max turns %d", req.MaxTurns)
	}
	req = &agentcli.Request{Model: "keep", MaxTurns: 3}
	c.Apply(req, agentcli.Capabilities{MaxTurns: true})
	if req.Model != "keep" || req.MaxTurns != 3 {
		t.Fatalf("request values overwritten: %+v", req)
	}
}
