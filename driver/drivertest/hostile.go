package drivertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"pgregory.net/rapid"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// commonOptions are option spellings of the agent CLIs agentcli knows,
// which HostileString draws when it is given none.
var commonOptions = []string{"-p", "--print", "-m", "--model", "-r", "--resume", "-c", "--continue",
	"--config", "--settings", "--mcp-config", "--output-format", "--input-format", "--session",
	"--session-id", "--dir", "--cd", "--add-dir", "--allowedTools", "--allowed-tools",
	"--disallowedTools", "--permission-mode", "--approval-mode", "--sandbox", "-s", "--yolo", "-y",
	"--dangerously-skip-permissions", "--dangerously-bypass-approvals-and-sandbox", "--auto",
	"--system-prompt", "--append-system-prompt", "--max-turns", "--prompt", "--json", "-o",
	"--help", "-h", "--version", "-v"}

// HostileString generates strings that try to become options when they
// reach an argv: the option spellings names (by default, those of the
// agent CLIs agentcli knows), with and without "=value", "--", "-", short
// clusters, negative numbers, quotes, spaces, newlines, "=" and non-ASCII,
// and arbitrary garbage. It never yields a NUL byte, which no argv can
// hold (request validation refuses it separately).
func HostileString(names ...string) *rapid.Generator[string] {
	if len(names) == 0 {
		names = commonOptions
	}
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	nul := func(s string) string { return strings.ReplaceAll(s, "\x00", "") }
	return rapid.OneOf(
		rapid.SampledFrom(names),
		rapid.Custom(func(t *rapid.T) string {
			return rapid.SampledFrom(names).Draw(t, "flag") + "=" + rapid.StringMatching(`[-a-z./=]{0,12}`).Draw(t, "value")
		}),
		rapid.SampledFrom([]string{"--", "-", "---", "-1", "-5.5", "--no-auto", "-pr", "-rabc", "-mgpt",
			"--x=y", "-x", "--help", "--version", "resume", "run", "exec", "mcp", "true", "false",
			`"quoted"`, "'quoted'", "--settings={\"hooks\":{}}", "--mcp-config=evil.json", " -x", "\t--x"}),
		rapid.StringMatching(`-{0,3}[-a-zA-Z0-9 =/"'\n._é😀]{0,20}`),
		rapid.Map(rapid.String(), nul),
	)
}

// Argv is a command line as a CLI's option parser reads it (see
// Kit.Args).
type Argv struct {
	// Options are the options in the order the parser met them: one
	// entry per value for an option that takes several.
	Options []Option
	// Positional are the words that are not options or their values
	// (subcommands included).
	Positional []string
}

// Option is one option a parser read.
type Option struct {
	// Name is the option as the CLI knows it, e.g. "--model"; a parser
	// that knows aliases records every spelling under one name.
	Name string
	// Value is its value ("" for a flag without one).
	Value string
	// Arg identifies the argument that named the option, e.g. its index
	// in argv: the values of a list option and the letters of a cluster
	// (-abc) share it.
	Arg int
}

// Names returns the names of the options of a, in order: one entry per
// option given, however many values it took.
func (a *Argv) Names() []string {
	var out []string
	last := -1
	for i, o := range a.Options {
		if i > 0 && o.Arg == last && out[len(out)-1] == o.Name {
			continue
		}
		out = append(out, o.Name)
		last = o.Arg
	}
	return out
}

// HostileRequest draws a request whose every field that could reach a
// CLI's argv holds a HostileString of names (ExtraArgs excepted: it is the
// explicit escape hatch, passed as it is). Its MCP servers' Env and
// Headers values start with SecretPrefix.
func HostileRequest(t *rapid.T, names ...string) *agentcli.Request {
	h := HostileString(names...)
	maybe := func(label string) string { return rapid.OneOf(rapid.Just(""), h).Draw(t, label) }
	return &agentcli.Request{
		Prompt:          h.Draw(t, "prompt"),
		SystemPrompt:    maybe("system"),
		SessionID:       maybe("session"),
		Model:           maybe("model"),
		MaxTurns:        rapid.IntRange(-5, 1<<20).Draw(t, "turns"),
		AllowedTools:    rapid.SliceOfN(h, 0, 4).Draw(t, "allowed"),
		DisallowedTools: rapid.SliceOfN(h, 0, 3).Draw(t, "disallowed"),
		Dir:             maybe("dir"),
		Env:             rapid.SliceOfN(h, 0, 2).Draw(t, "env"),
		FallbackModel:   maybe("fallback"),
		Effort:          agentcli.Effort(rapid.OneOf(rapid.Just(""), rapid.SampledFrom(effortNames()), h).Draw(t, "effort")),
		MaxBudgetUSD:    rapid.SampledFrom([]float64{0, 0.01, 1e-9, 12.5, 1e6}).Draw(t, "budget"),
		OutputSchema:    rapid.OneOf(rapid.Just[json.RawMessage](nil), rapid.Map(h, schemaWith)).Draw(t, "schema"),
		MCPServers:      rapid.SliceOfN(hostileMCPServer(h), 0, 2).Draw(t, "mcp"),
	}
}

// hostileManage draws the session-management fields of a hostile
// request (HostileRequests): a fork of its SessionID, a caller-chosen
// id (a UUID, or hostile).
func hostileManage(t *rapid.T, req *agentcli.Request, names ...string) {
	req.ForkSession = rapid.Bool().Draw(t, "fork")
	req.NewSessionID = rapid.OneOf(rapid.Just(""), rapid.Just(BenignNewSessionID), HostileString(names...)).Draw(t, "newid")
}

// BenignNewSessionID is the Request.NewSessionID of benign twins: a
// UUID no session has.
const BenignNewSessionID = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

func effortNames() []string {
	var out []string
	for _, e := range agentcli.Efforts() {
		out = append(out, string(e))
	}
	return out
}

// schemaWith returns a JSON schema object holding s, as a caller would
// pass it in Request.OutputSchema.
func schemaWith(s string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "object", "description": s})
	return b
}

// SecretPrefix starts every MCP credential HostileRequest draws, so that a
// test can look for credentials in an argv.
const SecretPrefix = "SECRET-7f3a-"

// hostileMCPServer draws an MCP server whose every field is hostile, with
// Env and Headers values that start with SecretPrefix.
func hostileMCPServer(h *rapid.Generator[string]) *rapid.Generator[agentcli.MCPServer] {
	return rapid.Custom(func(t *rapid.T) agentcli.MCPServer {
		s := agentcli.MCPServer{Name: h.Draw(t, "name")}
		secret := func(label string) string { return SecretPrefix + h.Draw(t, label) }
		if rapid.Bool().Draw(t, "http") {
			s.URL = h.Draw(t, "url")
			s.Headers = map[string]string{h.Draw(t, "header"): secret("header value")}
			return s
		}
		s.Command = h.Draw(t, "command")
		s.Args = rapid.SliceOfN(h, 0, 3).Draw(t, "args")
		s.Env = []string{h.Draw(t, "env key") + "=" + secret("env value")}
		return s
	})
}

// Benign returns the benign twin of req: every caller string that can
// reach argv replaced by a harmless value (SessionID by sessionID, an id
// the backend accepts), keeping which fields are set, how many tool rules
// and MCP servers there are, the tool rules that name a known tool, and
// an Effort that is one of agentcli.Efforts.
func Benign(req *agentcli.Request, sessionID string) *agentcli.Request {
	b := *req
	swap := func(s, with string) string {
		if s == "" {
			return ""
		}
		return with
	}
	b.Prompt = "p"
	b.SystemPrompt = swap(req.SystemPrompt, "s")
	b.SessionID = swap(req.SessionID, sessionID)
	b.Model = swap(req.Model, "m")
	b.Dir = swap(req.Dir, "/d")
	b.FallbackModel = swap(req.FallbackModel, "m2")
	b.NewSessionID = swap(req.NewSessionID, BenignNewSessionID)
	if req.Effort != "" && !slices.Contains(agentcli.Efforts(), req.Effort) {
		b.Effort = agentcli.EffortHigh // a known level is no caller string
	}
	b.MCPServers = nil
	for i, s := range req.MCPServers {
		ok := agentcli.MCPServer{Name: swap(s.Name, fmt.Sprintf("s%d", i)), Command: swap(s.Command, "cmd"),
			URL: swap(s.URL, "http://127.0.0.1/mcp")}
		for j := range s.Args {
			ok.Args = append(ok.Args, fmt.Sprintf("a%d", j))
		}
		for j := range s.Env {
			ok.Env = append(ok.Env, fmt.Sprintf("E%d=v", j))
		}
		if s.Headers != nil {
			ok.Headers = map[string]string{}
			for k := range s.Headers {
				ok.Headers[swap(k, fmt.Sprintf("H%d", len(ok.Headers)))] = "v"
			}
		}
		b.MCPServers = append(b.MCPServers, ok)
	}
	b.AllowedTools, b.DisallowedTools = benignRules(req.AllowedTools), benignRules(req.DisallowedTools)
	return &b
}

// benignRules returns rules with each one that is not a valid rule naming
// a known tool (canonical, or an MCP tool) replaced by a valid rule naming
// a tool no CLI has: what a backend makes of a list depends on which tools
// it names, and a rule it cannot read names none.
func benignRules(rules []string) []string {
	var out []string
	for i, r := range rules {
		p, err := driver.ParseRule(r)
		if err == nil && !p.HasPattern && (p.IsMCP() || driver.CanonicalName(p.Name) != "") {
			out = append(out, r)
			continue
		}
		out = append(out, fmt.Sprintf("zz-tool-%d", i))
	}
	return out
}

// requestFields are the Request fields a validation error may name.
var requestFields = []string{"Prompt", "SystemPrompt", "SessionID", "Model", "MaxTurns",
	"AllowedTools", "DisallowedTools", "Dir", "Env", "Permission", "Timeout",
	"MCPServers", "OutputSchema", "Effort", "FallbackModel", "MaxBudgetUSD",
	"ForkSession", "Continue", "NewSessionID"}

// Fataler is the part of testing.TB and *rapid.T that CheckRequestError
// needs.
type Fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// fieldPattern is how a RequestError names a field: the Request field,
// and for a slice the index, and for a slice of structs maybe the
// element's field, and its index ("MCPServers[0].Env[1]").
var fieldPattern = regexp.MustCompile(`^([A-Za-z]+)(?:\[[0-9]+\](?:\.[A-Za-z]+(?:\[[0-9]+\])?)?)?$`)

// CheckRequestError fails t unless err is an *agentcli.RequestError from
// backend that matches agentcli.ErrBadRequest, names a Request field (with
// an index for slices, e.g. "AllowedTools[2]" or "MCPServers[0].Env[1]")
// and gives a reason, and returns it.
func CheckRequestError(t Fataler, err error, backend string) *agentcli.RequestError {
	t.Helper()
	var re *agentcli.RequestError
	if !errors.As(err, &re) || !errors.Is(err, agentcli.ErrBadRequest) || re.Backend != backend {
		t.Fatalf("validate: %v (%T); want an *agentcli.RequestError from %s matching ErrBadRequest", err, err, backend)
		return nil
	}
	m := fieldPattern.FindStringSubmatch(re.Field)
	if m == nil || !slices.Contains(requestFields, m[1]) {
		t.Fatalf("validate names field %q, which is not a Request field", re.Field)
	}
	if strings.TrimSpace(re.Reason) == "" {
		t.Fatalf("validate gives no reason for %s", re.Field)
	}
	return re
}
