package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/mcptest"
)

// TestMain lets the test binary serve as the stdio MCP server of the MCP
// scenarios (mcptest.StdioCommand re-executes it).
func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	maybeHost()
	os.Exit(m.Run())
}

// settingsCLIs are the CLIs whose settings are tested, slowest first.
var settingsCLIs = []string{"qwen", "opencode", "gemini", "claude", "codex", "copilot", "droid"}

// mcpToolName is the name under which cli offers tool of MCP server
// server to the model (as agentclitest records it).
func mcpToolName(cli, server, tool string) string {
	switch cli {
	case "gemini":
		return "mcp_" + server + "_" + tool
	case "opencode":
		return server + "_" + tool
	case "droid":
		return server + "___" + tool
	case "copilot":
		return server + "-" + tool
	case "codex":
		// codex's namespace for the server, with "-" made "_".
		return "mcp__" + strings.ReplaceAll(server, "-", "_") + "__" + tool
	}
	return "mcp__" + server + "__" + tool
}

// offered reports whether the model request offered tool: as a tool, or
// (claude defers MCP tools behind its ToolSearch tool, qwen behind
// tool_search) named in the list of deferred tools the request carries.
func offered(r agentclitest.ModelRequest, tool string) bool {
	return slices.Contains(r.Tools, tool) ||
		slices.Contains(r.Tools, "ToolSearch") && bytes.Contains(r.Body, []byte(`\n`+tool+`\n`)) ||
		slices.Contains(r.Tools, "tool_search") && bytes.Contains(r.Body, []byte(`\"`+tool+`\"`))
}

// mcpHostile are MCP server arguments that each CLI's configuration
// loader would rewrite if they were written as they are: environment
// references of every syntax the four CLIs expand ($NAME, ${NAME},
// ${NAME:-default}, {env:NAME}, {file:PATH}), escapes, quotes, flags.
var mcpHostile = []string{"plain", "$HOME", "${HOME}", "${NOPE_X:-dflt}", "{env:HOME}", "{file:/etc/hostname}",
	`back\slash \$x \\$y`, "with space", "--flag=x", "-", `"quoted" 'single' ` + "`tick`", "é😀"}

// mcpSecret is an MCP credential that must reach the server exactly and
// never appear on a command line.
const mcpSecret = "S3CR3T-mcp-$HOME-${HOME}-{env:HOME}-\\$x-end"

// TestMCPServers: a stdio MCP server given in Request.MCPServers (a Go
// test helper, this binary re-executed) is offered to the model by every
// CLI; a scripted call of its probe tool reaches the server (its request
// log), and the probe's answer, which reaches the model as the tool
// result, shows the server got its Args and Env byte for byte (no
// environment reference expanded, no escape left) and that no process
// above it (the CLI) carries the credential in its argv.
func TestMCPServers(t *testing.T) {
	for _, cli := range settingsCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			const server = "probe-srv"
			tool := mcpToolName(cli, server, mcptest.ToolProbe)
			e := newEnv(t, cli, agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: tool}}, agentclitest.Turn{Text: "done"})
			b := openBackend(t, cli, nil)
			logPath := filepath.Join(t.TempDir(), "mcp.log")
			cmd, env, err := mcptest.StdioCommand(logPath)
			if err != nil {
				t.Fatal(err)
			}
			req, tag := e.request("call the probe")
			req.Permission = agentcli.PermissionBypass // the tool runs
			req.MCPServers = []agentcli.MCPServer{{
				Name: server, Command: cmd, Args: mcpHostile,
				Env: append(env, mcptest.EnvPrefix+"SECRET="+mcpSecret, mcptest.EnvPrefix+"PLAIN=plain"),
			}}
			res, _, err := run(t, b, req, tag)
			if err != nil {
				t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			if res.Text != "done" {
				t.Errorf("Text = %q", res.Text)
			}
			checkStdioCall(t, e, tool, logPath)
		})
	}
}

// TestMCPHTTPServer: an HTTP MCP server (URL and Headers) is offered to
// the model by every CLI, the scripted call reaches it with the header
// value byte for byte, and the answer reaches the model.
func TestMCPHTTPServer(t *testing.T) {
	for _, cli := range settingsCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			const server = "web"
			tool := mcpToolName(cli, server, mcptest.ToolProbe)
			h := mcptest.NewHTTP()
			t.Cleanup(h.Close)
			e := newEnv(t, cli, agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: tool}}, agentclitest.Turn{Text: "done"})
			b := openBackend(t, cli, nil)
			req, tag := e.request("call the probe")
			req.Permission = agentcli.PermissionBypass // the tool runs
			hdr := mcptest.HeaderPrefix + "Token"
			// Unescaped: the CLIs see the references as they are.
			query := "q=" + mcpHostile[1] + "-" + mcpHostile[2] + "-" + mcpHostile[4]
			req.MCPServers = []agentcli.MCPServer{{Name: server, URL: h.URL() + "?" + query, Headers: map[string]string{hdr: mcpSecret}}}
			res, _, err := run(t, b, req, tag)
			if err != nil {
				t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			if res.Text != "done" {
				t.Errorf("Text = %q", res.Text)
			}
			if main := e.main(); len(main) < 2 || !offered(main[0], tool) {
				t.Fatalf("the model was not offered %s: %s", tool, describe(e.srv.Requests()))
			}
			checkHTTPProbe(t, h, query, e.lastMain())
		})
	}
}

// checkStdioCall checks a run in which the model called the stdio probe
// (tool) once: the tool was offered, the server (logging to logPath) saw
// one call, and the probe's answer reached the model.
func checkStdioCall(t *testing.T, e *env, tool, logPath string) {
	t.Helper()
	main := e.main()
	if len(main) < 2 || !offered(main[0], tool) {
		var tools any
		if len(main) > 0 {
			tools = main[0].Tools
		}
		t.Fatalf("the model was not offered %s: %s; tools %v", tool, describe(e.srv.Requests()), tools)
	}
	calls, err := mcptest.ReadLog(logPath)
	if err != nil {
		t.Fatalf("the MCP server logged nothing: %v", err)
	}
	if got := mcptest.ToolCalls(calls); !slices.Equal(got, []string{mcptest.ToolProbe}) {
		t.Errorf("tool calls at the server %v, want one %s", got, mcptest.ToolProbe)
	}
	checkStdioProbe(t, e.lastMain())
}

// checkStdioProbe checks the stdio probe's answer the model got in r.
func checkStdioProbe(t *testing.T, r agentclitest.ModelRequest) {
	t.Helper()
	p := probeResult(t, r)
	if !slices.Equal(p.Args, mcpHostile) {
		t.Errorf("server args\n %q\nwant\n %q", p.Args, mcpHostile)
	}
	if p.Env[mcptest.EnvPrefix+"SECRET"] != mcpSecret || p.Env[mcptest.EnvPrefix+"PLAIN"] != "plain" {
		t.Errorf("server env %q; want SECRET=%q PLAIN=plain", p.Env, mcpSecret)
	}
	if len(p.Ancestors) == 0 {
		t.Errorf("the probe saw no parent process")
	}
	for _, a := range p.Ancestors {
		if strings.Contains(a, "S3CR3T") {
			t.Errorf("the credential is on a command line: %q", a)
		}
	}
}

// checkHTTPProbe checks what the HTTP MCP server received and what the
// model got from it in r.
func checkHTTPProbe(t *testing.T, h *mcptest.HTTP, query string, r agentclitest.ModelRequest) {
	t.Helper()
	hdr := mcptest.HeaderPrefix + "Token"
	var called bool
	for _, c := range h.Calls() {
		if c.Headers[hdr] != mcpSecret {
			t.Errorf("%s request with %s = %q, want %q", c.Method, hdr, c.Headers[hdr], mcpSecret)
		}
		if want, _ := url.QueryUnescape(query); c.Query != want {
			t.Errorf("%s request to query %q, want %q", c.Method, c.Query, want)
		}
		called = called || c.Method == "tools/call"
	}
	if !called {
		t.Errorf("no tools/call reached the HTTP server: %+v", h.Calls())
	}
	// The last tool result: earlier ones (the history) may hold other
	// probes' answers.
	if len(r.ToolResults) > 0 {
		r.ToolResults = r.ToolResults[len(r.ToolResults)-1:]
	}
	if p := probeResult(t, r); p.Headers[hdr] != mcpSecret {
		t.Errorf("the model got headers %q", p.Headers)
	}
}

// probeResult finds the probe's answer among the tool results of r. CLIs
// pass an MCP result on as its text, as the list of its content blocks, or
// as a JSON string of either.
func probeResult(t *testing.T, r agentclitest.ModelRequest) mcptest.Probe {
	t.Helper()
	var find func(s string, depth int) (mcptest.Probe, bool)
	find = func(s string, depth int) (mcptest.Probe, bool) {
		var p mcptest.Probe
		if json.Unmarshal([]byte(s), &p) == nil && p.Args != nil {
			return p, true
		}
		if depth == 0 {
			return p, false
		}
		// gemini wraps a tool's answer in <untrusted_context> tags,
		// codex puts "Wall time: ...\nOutput:\n" before it.
		if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i > 0 && j > i {
			if p, ok := find(s[i:j+1], depth-1); ok {
				return p, true
			}
		}
		var str string
		if json.Unmarshal([]byte(s), &str) == nil {
			return find(str, depth-1)
		}
		var blocks []struct{ Text string }
		if json.Unmarshal([]byte(s), &blocks) == nil {
			for _, b := range blocks {
				if p, ok := find(b.Text, depth-1); ok {
					return p, true
				}
			}
		}
		var wrapped struct{ Content []struct{ Text string } }
		if json.Unmarshal([]byte(s), &wrapped) == nil {
			for _, b := range wrapped.Content {
				if p, ok := find(b.Text, depth-1); ok {
					return p, true
				}
			}
		}
		return p, false
	}
	for _, tr := range r.ToolResults {
		if p, ok := find(tr.Output, 3); ok {
			return p
		}
	}
	t.Fatalf("no probe answer among the tool results the model got: %+v", r.ToolResults)
	return mcptest.Probe{}
}

// outputSchema is the schema of the structured output scenarios.
const outputSchema = `{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string"}},"required":["n","s"],"additionalProperties":false}`

// TestStructuredOutput: with Request.OutputSchema, claude offers the model
// its StructuredOutput tool with the schema as input schema, and codex
// asks the Responses API for a json_schema text format with the schema; a
// scripted answer that follows it is Result.StructuredOutput, and the
// run's wire log replays to the same result. A final answer that is not
// JSON fails the run with a *ResultError. gemini and opencode have no
// such setting: under Options.Strict the run fails with an
// *UnsupportedError before any model call.
func TestStructuredOutput(t *testing.T) {
	want := `{"n":3,"s":"a \"q\" $HOME"}`
	answer := map[string]any{"n": 3, "s": `a "q" $HOME`}
	for _, cli := range []string{"claude", "codex"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			turn := agentclitest.Turn{Text: want}
			if cli == "claude" {
				turn = agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: "StructuredOutput", Args: answer}}
			}
			e := newEnv(t, cli, turn)
			b := openBackend(t, cli, nil)
			req, tag := e.request("answer in JSON")
			req.OutputSchema = json.RawMessage(outputSchema)
			evs, err := backendtest.ReplayRoundTrip(t, b, req, true)
			assertNoProcs(t, tag)
			if err != nil {
				t.Fatalf("Stream: %s", errSummary(err))
			}
			res := evs[len(evs)-1].Result
			if res == nil || !jsonEqual(res.StructuredOutput, want) {
				t.Fatalf("StructuredOutput = %s, want %s", res.StructuredOutput, want)
			}
			schema := requestSchema(t, cli, e.main()[0])
			if !jsonEqual(schema, outputSchema) {
				t.Errorf("the model request carries schema %s, want %s", schema, outputSchema)
			}
		})
	}
	t.Run("codex-not-json", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "codex", agentclitest.Turn{Text: "not JSON at all"})
		b := openBackend(t, "codex", nil)
		req, tag := e.request("answer in JSON")
		req.OutputSchema = json.RawMessage(outputSchema)
		res, _, err := run(t, b, req, tag)
		var re *agentcli.ResultError
		if !errors.As(err, &re) || res == nil || !res.IsError || res.Text != "not JSON at all" || res.StructuredOutput != nil {
			t.Fatalf("Run = %+v, %s; want a ResultError with the text", res, errSummary(err))
		}
	})
	for _, cli := range []string{"gemini", "opencode", "copilot"} {
		t.Run(cli+"-strict", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cli)
			b, err := agentcli.Open(cli, &agentcli.Options{Path: cliPath(t, cli), Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			req, tag := e.request("answer in JSON")
			req.OutputSchema = json.RawMessage(outputSchema)
			_, _, err = run(t, b, req, tag)
			var ue *agentcli.UnsupportedError
			if !errors.As(err, &ue) || ue.Backend != cli || !strings.Contains(ue.Feature, "structured output") {
				t.Fatalf("err = %s; want an UnsupportedError for structured output", errSummary(err))
			}
			if n := len(e.srv.Requests()); n != 0 {
				t.Errorf("%d model requests", n)
			}
		})
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && jsonString(x) == jsonString(y)
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestEffort: Request.Effort reaches the model request as each API's own
// setting: Anthropic output_config.effort, Responses reasoning.effort,
// Gemini generationConfig.thinkingConfig (thinkingLevel for a Gemini 3
// model, thinkingBudget for a Gemini 2.5 one), Chat Completions
// reasoning_effort (opencode's variant of that name, for a model declared
// with reasoning).
func TestEffort(t *testing.T) {
	cases := []struct {
		cli, model string
		effort     agentcli.Effort
		path       []string
		want       any
	}{
		{"opencode", "", agentcli.EffortHigh, []string{"reasoning_effort"}, "high"},
		{"gemini", "", agentcli.EffortLow, []string{"generationConfig", "thinkingConfig", "thinkingLevel"}, "LOW"},
		{"gemini", "gemini-2.5-flash", agentcli.EffortMedium, []string{"generationConfig", "thinkingConfig", "thinkingBudget"}, 8192.0},
		{"claude", "", agentcli.EffortXHigh, []string{"output_config", "effort"}, "xhigh"},
		{"codex", "", agentcli.EffortMinimal, []string{"reasoning", "effort"}, "minimal"},
		{"qwen", "", agentcli.EffortHigh, []string{"reasoning", "effort"}, "high"},
		{"copilot", "", agentcli.EffortXHigh, []string{"reasoning_effort"}, "xhigh"},
	}
	for _, c := range cases {
		t.Run(c.cli+"-"+string(c.effort), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, c.cli, agentclitest.Turn{Text: "ok"})
			b := openBackend(t, c.cli, nil)
			req, tag := e.request("think")
			req.Effort = c.effort
			req.Model = c.model
			if c.cli == "opencode" {
				req.Env = append(req.Env, opencodeReasoning(t, e.w)...)
			}
			if _, _, err := run(t, b, req, tag); err != nil {
				t.Fatalf("Run: %s", errSummary(err))
			}
			var body any
			if err := json.Unmarshal(e.lastMain().Body, &body); err != nil {
				t.Fatal(err)
			}
			got := body
			for _, k := range c.path {
				m, _ := got.(map[string]any)
				got = m[k]
			}
			if got != c.want {
				t.Errorf("%s = %v, want %v", strings.Join(c.path, "."), got, c.want)
			}
		})
	}
}

// opencodeReasoning returns an OPENCODE_CONFIG_CONTENT that declares the
// wired model with reasoning, which gives it the low, medium and high
// variants.
func opencodeReasoning(t *testing.T, w *agentclitest.Wiring) []string {
	const key = "OPENCODE_CONFIG_CONTENT="
	var cfg map[string]any
	for _, kv := range w.Env {
		if v, ok := strings.CutPrefix(kv, key); ok {
			if err := json.Unmarshal([]byte(v), &cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	m, _ := cfg["provider"].(map[string]any)["agentclitest"].(map[string]any)["models"].(map[string]any)[agentclitest.Model].(map[string]any)
	if m == nil {
		t.Fatalf("the wiring declares no %s", agentclitest.Model)
	}
	m["reasoning"] = true
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return []string{key + string(b)}
}

// TestFallbackModel: claude switches to Request.FallbackModel after the
// main model answered 529 (overloaded) three times in a row, and the result
// names the fallback model.
func TestFallbackModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "claude", agentclitest.Turn{Status: 529, Message: "Overloaded", Repeat: 2}, agentclitest.Turn{Text: "from the fallback"})
	b := openBackend(t, "claude", nil)
	req, tag := e.request("hi")
	req.Model = "claude-main-model"
	req.FallbackModel = "claude-fallback-model"
	// Wire turns retries off; claude falls back only after retried 529s.
	req.Env = append(req.Env, "CLAUDE_CODE_MAX_RETRIES=3")
	res, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
	}
	if res.Text != "from the fallback" || res.Model != "claude-fallback-model" {
		t.Errorf("Text %q Model %q", res.Text, res.Model)
	}
	var models []string
	for _, r := range e.main() {
		models = append(models, r.Model)
	}
	if len(models) < 4 || models[0] != "claude-main-model" || models[len(models)-1] != "claude-fallback-model" {
		t.Errorf("models asked for: %v", models)
	}
}

// TestMaxBudget: claude stops a run whose cost reached Request.MaxBudgetUSD
// (here after the first model call) with a *ResultError whose Subtype is
// error_max_budget_usd and TerminalReason budget_exhausted; the tool the
// model asked for does not run another model call.
func TestMaxBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "claude", agentclitest.Turn{Shell: "echo spent"}, agentclitest.Turn{Text: "never"})
	b := openBackend(t, "claude", nil)
	req, tag := e.request("spend")
	req.MaxBudgetUSD = 0.00001
	req.Permission = agentcli.PermissionBypass
	res, _, err := run(t, b, req, tag)
	var re *agentcli.ResultError
	if !errors.As(err, &re) || !errors.Is(err, agentcli.ErrResult) {
		t.Fatalf("err = %s; want a ResultError", errSummary(err))
	}
	if re.Subtype != "error_max_budget_usd" || re.TerminalReason != "budget_exhausted" || res == nil || res.CostUSD == nil {
		t.Errorf("ResultError %+v, result %+v", re, res)
	}
	if n := len(e.main()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
}

// TestUnsupportedSettings: a setting a backend cannot honour is a warning
// by default (the run goes on) and, under Options.Strict, an
// *UnsupportedError naming backend and setting before the CLI starts.
func TestUnsupportedSettings(t *testing.T) {
	cases := []struct {
		cli     string
		feature string
		set     func(*agentcli.Request)
	}{
		{"codex", "fallback model", func(r *agentcli.Request) { r.FallbackModel = "other" }},
		{"gemini", "fallback model", func(r *agentcli.Request) { r.FallbackModel = "other" }},
		{"gemini", "effort max", func(r *agentcli.Request) { r.Effort = agentcli.EffortMax }},
		{"opencode", "fallback model", func(r *agentcli.Request) { r.FallbackModel = "other" }},
		{"droid", "structured output", func(r *agentcli.Request) { r.OutputSchema = json.RawMessage(outputSchema) }},
		{"qwen", "structured output", func(r *agentcli.Request) { r.OutputSchema = json.RawMessage(outputSchema) }},
		{"copilot", "fallback model", func(r *agentcli.Request) { r.FallbackModel = "other" }},
	}
	for _, c := range cases {
		t.Run(c.cli+"-"+c.feature, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, c.cli, agentclitest.Turn{Text: "ok"})
			logs := &logBuffer{}
			b := openBackend(t, c.cli, logs)
			req, tag := e.request("hi")
			c.set(req)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := b.Run(ctx, req); err != nil {
				t.Fatalf("Run: %s", errSummary(err))
			}
			assertNoProcs(t, tag)
			if !strings.Contains(logs.String(), "does not support "+c.feature) {
				t.Errorf("no warning about %s in the log:\n%s", c.feature, logs.String())
			}
			strict, err := agentcli.Open(c.cli, &agentcli.Options{Path: cliPath(t, c.cli), Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			n := len(e.srv.Requests())
			_, err = strict.Run(ctx, req)
			var ue *agentcli.UnsupportedError
			if !errors.As(err, &ue) || ue.Backend != c.cli || !strings.Contains(ue.Feature, c.feature) {
				t.Fatalf("strict: %s; want an UnsupportedError for %s", errSummary(err), c.feature)
			}
			if len(e.srv.Requests()) != n {
				t.Errorf("the strict run reached the model")
			}
		})
	}
}

// requestSchema returns the output schema a model request carries:
// claude's StructuredOutput tool's input schema, the Responses json_schema
// text format's schema.
func requestSchema(t *testing.T, cli string, r agentclitest.ModelRequest) json.RawMessage {
	t.Helper()
	var body struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		Text struct {
			Format struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"text"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	switch cli {
	case "claude":
		for _, tl := range body.Tools {
			if tl.Name == "StructuredOutput" {
				return tl.InputSchema
			}
		}
		return nil
	}
	if body.Text.Format.Type == "json_schema" {
		return body.Text.Format.Schema
	}
	return nil
}
