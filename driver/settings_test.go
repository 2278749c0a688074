package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// TestCheckSettings: every malformed setting is a RequestError naming the
// field (with the server's index), and well-formed ones pass.
func TestCheckSettings(t *testing.T) {
	stdio := agentcli.MCPServer{Name: "fs", Command: "/bin/mcp", Args: []string{"--root", "/", "$HOME"}, Env: []string{"TOKEN=a=b", "_X="}}
	web := agentcli.MCPServer{Name: "web-1", URL: "https://example.com/mcp?x={y}", Headers: map[string]string{"Authorization": "Bearer x"}}
	good := agentcli.Request{
		MCPServers: []agentcli.MCPServer{stdio, web}, OutputSchema: json.RawMessage(` {"type":"object"} `),
		Effort: agentcli.EffortXHigh, FallbackModel: "claude-x-1", MaxBudgetUSD: 0.5,
	}
	if err := checkSettings("b", &good); err != nil {
		t.Fatalf("valid settings refused: %v", err)
	}
	with := func(f func(*agentcli.Request)) *agentcli.Request {
		r := good
		r.MCPServers = slices.Clone(good.MCPServers)
		f(&r)
		return &r
	}
	server := func(i int, f func(*agentcli.MCPServer)) func(*agentcli.Request) {
		return func(r *agentcli.Request) { f(&r.MCPServers[i]) }
	}
	cases := []struct {
		name, field string
		req         *agentcli.Request
	}{
		{"empty name", "MCPServers[0].Name", with(server(0, func(s *agentcli.MCPServer) { s.Name = "" }))},
		{"dotted name", "MCPServers[1].Name", with(server(1, func(s *agentcli.MCPServer) { s.Name = "a.b" }))},
		{"spaced name", "MCPServers[0].Name", with(server(0, func(s *agentcli.MCPServer) { s.Name = "a b" }))},
		{"dash first", "MCPServers[0].Name", with(server(0, func(s *agentcli.MCPServer) { s.Name = "-x" }))},
		{"long name", "MCPServers[0].Name", with(server(0, func(s *agentcli.MCPServer) { s.Name = strings.Repeat("a", 65) }))},
		{"duplicate name", "MCPServers[1].Name", with(server(1, func(s *agentcli.MCPServer) { s.Name = "FS" }))},
		{"neither", "MCPServers[0]", with(server(0, func(s *agentcli.MCPServer) { s.Command = "" }))},
		{"both", "MCPServers[1]", with(server(1, func(s *agentcli.MCPServer) { s.Command = "x" }))},
		{"nul command", "MCPServers[0].Command", with(server(0, func(s *agentcli.MCPServer) { s.Command = "a\x00" }))},
		{"nul arg", "MCPServers[0].Args[1]", with(server(0, func(s *agentcli.MCPServer) { s.Args = []string{"a", "\x00"} }))},
		{"env no =", "MCPServers[0].Env[0]", with(server(0, func(s *agentcli.MCPServer) { s.Env = []string{"TOKEN"} }))},
		{"env bad key", "MCPServers[0].Env[1]", with(server(0, func(s *agentcli.MCPServer) { s.Env = []string{"A=1", "1A=2"} }))},
		{"env nul", "MCPServers[0].Env[0]", with(server(0, func(s *agentcli.MCPServer) { s.Env = []string{"A=\x00"} }))},
		{"headers on stdio", "MCPServers[0].Headers", with(server(0, func(s *agentcli.MCPServer) { s.Headers = map[string]string{"A": "b"} }))},
		{"env on http", "MCPServers[1]", with(server(1, func(s *agentcli.MCPServer) { s.Env = []string{"A=b"} }))},
		{"relative url", "MCPServers[1].URL", with(server(1, func(s *agentcli.MCPServer) { s.URL = "/mcp" }))},
		{"ftp url", "MCPServers[1].URL", with(server(1, func(s *agentcli.MCPServer) { s.URL = "ftp://h/x" }))},
		{"url newline", "MCPServers[1].URL", with(server(1, func(s *agentcli.MCPServer) { s.URL = "http://h/\nx" }))},
		{"header name", "MCPServers[1].Headers", with(server(1, func(s *agentcli.MCPServer) { s.Headers = map[string]string{"Bad Name": "x"} }))},
		{"header crlf", "MCPServers[1].Headers", with(server(1, func(s *agentcli.MCPServer) { s.Headers = map[string]string{"X": "a\r\nEvil: 1"} }))},
		{"schema not json", "OutputSchema", with(func(r *agentcli.Request) { r.OutputSchema = json.RawMessage(`{"type":`) })},
		{"schema array", "OutputSchema", with(func(r *agentcli.Request) { r.OutputSchema = json.RawMessage(`[{}]`) })},
		{"schema two values", "OutputSchema", with(func(r *agentcli.Request) { r.OutputSchema = json.RawMessage(`{} {}`) })},
		{"effort", "Effort", with(func(r *agentcli.Request) { r.Effort = "ultra" })},
		{"effort case", "Effort", with(func(r *agentcli.Request) { r.Effort = "HIGH" })},
		{"fallback list", "FallbackModel", with(func(r *agentcli.Request) { r.FallbackModel = "a,b" })},
		{"fallback nul", "FallbackModel", with(func(r *agentcli.Request) { r.FallbackModel = "a\x00" })},
		{"budget negative", "MaxBudgetUSD", with(func(r *agentcli.Request) { r.MaxBudgetUSD = -1 })},
		{"budget NaN", "MaxBudgetUSD", with(func(r *agentcli.Request) { r.MaxBudgetUSD = math.NaN() })},
		{"budget Inf", "MaxBudgetUSD", with(func(r *agentcli.Request) { r.MaxBudgetUSD = math.Inf(1) })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkSettings("b", c.req)
			var re *agentcli.RequestError
			if !errors.As(err, &re) || re.Field != c.field || re.Backend != "b" || re.Reason == "" || !errors.Is(err, agentcli.ErrBadRequest) {
				t.Fatalf("err = %v; want a RequestError on %s", err, c.field)
			}
		})
	}
}

// TestUnsupportedSettingsListed: each setting a backend's capabilities do
// not cover is named once; covered ones are not.
func TestUnsupportedSettingsListed(t *testing.T) {
	req := &agentcli.Request{
		MCPServers:   []agentcli.MCPServer{{Name: "x", Command: "x"}},
		OutputSchema: json.RawMessage(`{}`), Effort: agentcli.EffortMax, FallbackModel: "m", MaxBudgetUSD: 1,
	}
	got := unsupported(agentcli.Capabilities{SystemPrompt: agentcli.SystemPromptAppend}, req)
	want := []string{"MCP servers", "structured output (output schema)", "effort max", "fallback model", "spending cap (max budget)"}
	if !slices.Equal(got, want) {
		t.Fatalf("unsupported = %q, want %q", got, want)
	}
	all := agentcli.Capabilities{SystemPrompt: agentcli.SystemPromptAppend, MCP: true, StructuredOutput: true,
		Efforts: []agentcli.Effort{agentcli.EffortMax}, FallbackModel: true, MaxBudget: true}
	if got := unsupported(all, req); len(got) != 0 {
		t.Fatalf("unsupported = %q with every capability", got)
	}
	// A level outside the backend's list is unsupported even when others
	// are supported.
	all.Efforts = []agentcli.Effort{agentcli.EffortLow, agentcli.EffortHigh}
	if got := unsupported(all, req); !slices.Equal(got, []string{"effort max"}) {
		t.Fatalf("unsupported = %q", got)
	}
}

// TestStrictSettings: through the backend, an unsupported setting is a
// warning by default and an UnsupportedError under Strict, before anything
// starts; a malformed one is a RequestError either way.
func TestStrictSettings(t *testing.T) {
	var logs bytes.Buffer
	b := New(testSpec(), &agentcli.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}).(*Backend)
	req := &agentcli.Request{Prompt: "p", FallbackModel: "m"}
	if _, err := b.prepareRun(req, false, true); err != nil && !errors.Is(err, agentcli.ErrNotFound) {
		t.Fatalf("default: %v", err)
	}
	if !strings.Contains(logs.String(), "does not support fallback model") {
		t.Fatalf("no warning: %q", logs.String())
	}
	strict := New(testSpec(), &agentcli.Options{Strict: true}).(*Backend)
	_, err := strict.prepareRun(req, false, true)
	var ue *agentcli.UnsupportedError
	if !errors.As(err, &ue) || ue.Feature != "fallback model" {
		t.Fatalf("strict: %v", err)
	}
	_, err = strict.prepareRun(&agentcli.Request{Prompt: "p", Effort: "turbo"}, false, true)
	var re *agentcli.RequestError
	if !errors.As(err, &re) || re.Field != "Effort" {
		t.Fatalf("bad effort: %v", err)
	}
}

// TestCapabilitiesCopied: the Efforts a caller gets is a copy.
func TestCapabilitiesCopied(t *testing.T) {
	spec := testSpec()
	spec.Caps.Efforts = []agentcli.Effort{agentcli.EffortLow}
	b := New(spec, nil)
	c := b.Capabilities()
	c.Efforts[0] = agentcli.EffortMax
	if b.Capabilities().Efforts[0] != agentcli.EffortLow {
		t.Fatal("Capabilities shares Efforts with the backend")
	}
}

// TestStructured: the final answer becomes the structured value when it is
// JSON (surrounding space trimmed); otherwise the run fails with a
// ResultError carrying the result, marked IsError; a value the CLI
// reported is kept.
func TestStructured(t *testing.T) {
	x := NewErrors(&Spec{Name: "toy"}, nil, nil)
	res := &agentcli.Result{Text: " \n{\"a\": [1, 2]}\n"}
	if err := x.Structured(res); err != nil || string(res.StructuredOutput) != `{"a": [1, 2]}` {
		t.Fatalf("structured = %s, %v", res.StructuredOutput, err)
	}
	res = &agentcli.Result{Text: "{}", StructuredOutput: json.RawMessage(`{"b":1}`)}
	if err := x.Structured(res); err != nil || string(res.StructuredOutput) != `{"b":1}` {
		t.Fatalf("kept = %s, %v", res.StructuredOutput, err)
	}
	for _, text := range []string{"", "Here it is: {}", "{} trailing", "{"} {
		res = &agentcli.Result{Text: text}
		err := x.Structured(res)
		var re *agentcli.ResultError
		if !errors.As(err, &re) || re.Result != res || res.StructuredOutput != nil || !res.IsError || re.Backend != "toy" {
			t.Fatalf("%q: %v", text, err)
		}
	}
}

// TestRedactMCPSecrets: MCP env values and header values are secrets of
// the run's redactor; other values are not.
func TestRedactMCPSecrets(t *testing.T) {
	req := &agentcli.Request{MCPServers: []agentcli.MCPServer{
		{Name: "a", Command: "x", Env: []string{"GITHUB_TOKEN=ghp-secret-value-1", "MODE=verbose-mode"}},
		{Name: "b", URL: "http://h", Headers: map[string]string{"Authorization": "Bearer opaque-value-2", "X-Api-Key": "key-value-3", "Accept": "text/plain-4"}},
	}}
	red := NewRedactor(redactEnv([]string{"PATH=/bin"}, req))
	got := red.Redact("ghp-secret-value-1 opaque-value-2 key-value-3 verbose-mode text/plain-4")
	for _, s := range []string{"ghp-secret-value-1", "opaque-value-2", "key-value-3"} {
		if strings.Contains(got, s) {
			t.Errorf("%q not redacted: %q", s, got)
		}
	}
	if !strings.Contains(got, "verbose-mode") || !strings.Contains(got, "text/plain-4") {
		t.Errorf("non-secret values redacted: %q", got)
	}
	if env := redactEnv([]string{"A=1"}, &agentcli.Request{}); !slices.Equal(env, []string{"A=1"}) {
		t.Errorf("without MCP servers: %q", env)
	}
}

// TestDropUnsupported: what a backend does not support does not reach its
// Prepare (the caller's request is left alone); what it supports does.
func TestDropUnsupported(t *testing.T) {
	spec := testSpec()
	spec.Caps.Efforts = []agentcli.Effort{agentcli.EffortLow}
	spec.Caps.MaxBudget = true
	b := New(spec, &agentcli.Options{Logger: slog.New(slog.DiscardHandler), Path: "/bin/sh"}).(*Backend)
	req := &agentcli.Request{Prompt: "p", Effort: agentcli.EffortMax, FallbackModel: "m", MaxBudgetUSD: 2,
		OutputSchema: json.RawMessage(`{}`), MCPServers: []agentcli.MCPServer{{Name: "a", Command: "x"}}}
	r, err := b.prepareRun(req, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if g := r.Req; g.Effort != "" || g.FallbackModel != "" || g.OutputSchema != nil || g.MCPServers != nil || g.MaxBudgetUSD != 2 || g.Prompt != "p" {
		t.Fatalf("prepared request %+v", g)
	}
	if req.Effort != agentcli.EffortMax || req.FallbackModel != "m" || len(req.MCPServers) != 1 {
		t.Fatalf("the caller's request changed: %+v", req)
	}
	req = &agentcli.Request{Prompt: "p", Effort: agentcli.EffortLow, Permission: agentcli.PermissionDeny}
	if r, err := b.prepareRun(req, false, true); err != nil || r.Req != req {
		t.Fatalf("a supported request is not passed as it is: %v", err)
	}
	// The zero permission mode reaches Prepare as what it means.
	req = &agentcli.Request{Prompt: "p"}
	if r, err := b.prepareRun(req, false, true); err != nil || r.Req.Permission != agentcli.PermissionDeny || req.Permission != "" {
		t.Fatalf("zero mode: %v, prepared %q, caller's %q", err, r.Req.Permission, req.Permission)
	}
}
