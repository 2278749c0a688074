//go:build unix

package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/mcptest"
)

// The orchestrator settings (MCP servers, output schema, effort, fallback
// model, budget) in live sessions and in one-shot runs with a permission
// mode other than bypass, which are one turn of a live session.

// liveMCPServers returns a stdio MCP server (this test binary, with
// hostile arguments and a credential in its environment) and an HTTP one
// (with the credential in a header), the stdio server's request log, and
// the HTTP server.
func liveMCPServers(t *testing.T) ([]agentcli.MCPServer, string, *mcptest.HTTP, string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "mcp.log")
	cmd, env, err := mcptest.StdioCommand(logPath)
	if err != nil {
		t.Fatal(err)
	}
	h := mcptest.NewHTTP()
	t.Cleanup(h.Close)
	query := "q=" + mcpHostile[1] + "-" + mcpHostile[2] + "-" + mcpHostile[4]
	return []agentcli.MCPServer{
		{Name: "probe-srv", Command: cmd, Args: mcpHostile,
			Env: append(env, mcptest.EnvPrefix+"SECRET="+mcpSecret, mcptest.EnvPrefix+"PLAIN=plain")},
		{Name: "web", URL: h.URL() + "?" + query, Headers: map[string]string{mcptest.HeaderPrefix + "Token": mcpSecret}},
	}, logPath, h, query
}

// TestLiveMCPServers: a live session with a stdio and an HTTP MCP server
// (hostile arguments, credentials in Env and Headers). Turn 1 is plain
// text; in turn 2 the model calls the stdio server's probe, in turn 3 the
// HTTP one's: each tool is offered, each call reaches its server with
// everything byte for byte, each answer reaches the model, no credential
// is on a command line, and one CLI process serves the three turns.
func TestLiveMCPServers(t *testing.T) {
	for _, cli := range settingsCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			stdioTool := mcpToolName(cli, "probe-srv", mcptest.ToolProbe)
			httpTool := mcpToolName(cli, "web", mcptest.ToolProbe)
			e := newEnv(t, cli,
				agentclitest.Turn{Text: "first"},
				agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: stdioTool}}, agentclitest.Turn{Text: "second"},
				agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: httpTool}}, agentclitest.Turn{Text: "third"})
			b := openBackend(t, cli, nil)
			servers, logPath, h, query := liveMCPServers(t)
			req, tag := e.liveRequest()
			req.MCPServers = servers
			req.Permission = agentcli.PermissionBypass // the tools run
			s := liveSession(t, b, req, tag)
			var pids []int
			for i, want := range []string{"first", "second", "third"} {
				res, err := s.Run(context.Background(), "turn "+want)
				if err != nil {
					t.Fatalf("turn %d: %s; requests: %s", i+1, errSummary(err), describe(e.srv.Requests()))
				}
				if res.Text != want {
					t.Errorf("turn %d: Text = %q, want %q", i+1, res.Text, want)
				}
				pids = append(pids, cliProcs(tag)...)
			}
			if len(pids) != 3 || pids[0] != pids[1] || pids[1] != pids[2] {
				t.Errorf("CLI processes per turn %v, want the same one", pids)
			}
			main := e.main()
			if len(main) != 5 {
				t.Fatalf("%d main model calls, want 5: %s", len(main), describe(e.srv.Requests()))
			}
			for _, tool := range []string{stdioTool, httpTool} {
				if !offered(main[1], tool) {
					t.Errorf("turn 2's model request does not offer %s: tools %v", tool, main[1].Tools)
				}
			}
			calls, err := mcptest.ReadLog(logPath)
			if err != nil {
				t.Fatalf("the stdio MCP server logged nothing: %v", err)
			}
			if got := mcptest.ToolCalls(calls); !slices.Equal(got, []string{mcptest.ToolProbe}) {
				t.Errorf("tool calls at the stdio server %v, want one %s", got, mcptest.ToolProbe)
			}
			checkStdioProbe(t, main[2])
			checkHTTPProbe(t, h, query, main[4])
		})
	}
}

// TestOneShotAskMCPServers: Backend.Run with PermissionAsk and an MCP
// server (a run that goes through one live turn): the callback allows
// whatever the CLI asks about, the scripted call reaches the server and
// its answer the model.
func TestOneShotAskMCPServers(t *testing.T) {
	for _, cli := range settingsCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			tool := mcpToolName(cli, "probe-srv", mcptest.ToolProbe)
			e := newEnv(t, cli, agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: tool}}, agentclitest.Turn{Text: "done"})
			b := openBackend(t, cli, nil)
			servers, logPath, _, _ := liveMCPServers(t)
			req, tag := e.request("call the probe")
			req.MCPServers = servers[:1]
			req.Permission = agentcli.PermissionAsk
			perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
				return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
			}}
			req.OnPermission = perms.callback
			res, _, err := run(t, b, req, tag)
			if err != nil {
				t.Fatalf("Run: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
			}
			for _, r := range perms.requests() {
				t.Logf("permission request for %s (%s)", r.Tool.RawName, r.Tool.Name)
			}
			if res.Text != "done" {
				t.Errorf("Text = %q", res.Text)
			}
			checkStdioCall(t, e, tool, logPath)
		})
	}
}

// TestLiveEffort: Request.Effort reaches the model request of every turn
// of a live session, as each API's own setting (see TestEffort).
func TestLiveEffort(t *testing.T) {
	cases := []struct {
		cli, model string
		effort     agentcli.Effort
		path       []string
		want       any
	}{
		{"opencode", "", agentcli.EffortHigh, []string{"reasoning_effort"}, "high"},
		{"gemini", "", agentcli.EffortLow, []string{"generationConfig", "thinkingConfig", "thinkingLevel"}, "LOW"},
		{"claude", "", agentcli.EffortXHigh, []string{"output_config", "effort"}, "xhigh"},
		{"codex", "", agentcli.EffortMinimal, []string{"reasoning", "effort"}, "minimal"},
		{"qwen", "", agentcli.EffortLow, []string{"reasoning", "effort"}, "low"},
		{"copilot", "", agentcli.EffortLow, []string{"reasoning_effort"}, "low"},
	}
	for _, c := range cases {
		t.Run(c.cli+"-"+string(c.effort), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, c.cli, agentclitest.Turn{Text: "ok"}, agentclitest.Turn{Text: "ok again"})
			b := openBackend(t, c.cli, nil)
			req, tag := e.liveRequest()
			req.Effort = c.effort
			req.Model = c.model
			if c.cli == "opencode" {
				req.Env = append(req.Env, opencodeReasoning(t, e.w)...)
			}
			s := liveSession(t, b, req, tag)
			for i, want := range []string{"ok", "ok again"} {
				res, err := s.Run(context.Background(), "think")
				if err != nil {
					t.Fatalf("turn %d: %s", i+1, errSummary(err))
				}
				if res.Text != want {
					t.Errorf("turn %d: Text = %q, want %q", i+1, res.Text, want)
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
					t.Errorf("turn %d: %s = %v, want %v", i+1, strings.Join(c.path, "."), got, c.want)
				}
			}
		})
	}
}

// TestLiveStructuredOutput: with Request.OutputSchema, every turn of a
// claude or codex live session is asked for the schema (claude's
// StructuredOutput tool, codex's json_schema text format) and its answer
// is Result.StructuredOutput. A codex turn whose answer is not JSON fails
// with a *ResultError, and the session takes the next turn.
func TestLiveStructuredOutput(t *testing.T) {
	answers := []map[string]any{{"n": 1, "s": "one $HOME"}, {"n": 2, "s": `two "q"`}}
	for _, cli := range []string{"claude", "codex"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			var turns []agentclitest.Turn
			if cli == "codex" {
				turns = append(turns, agentclitest.Turn{Text: "not JSON at all"})
			}
			for _, a := range answers {
				switch cli {
				case "claude":
					turns = append(turns, agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: "StructuredOutput", Args: a}})
				default:
					turns = append(turns, agentclitest.Turn{Text: jsonString(a)})
				}
			}
			e := newEnv(t, cli, turns...)
			b := openBackend(t, cli, nil)
			req, tag := e.liveRequest()
			req.OutputSchema = json.RawMessage(outputSchema)
			s := liveSession(t, b, req, tag)
			if cli == "codex" {
				res, err := s.Run(context.Background(), "answer in JSON")
				var re *agentcli.ResultError
				if !errors.As(err, &re) || re.Backend != cli || res == nil || !res.IsError || res.Text != "not JSON at all" || res.StructuredOutput != nil {
					t.Fatalf("a turn whose answer is not JSON: %+v, %s; want a ResultError with the text", res, errSummary(err))
				}
			}
			for i, a := range answers {
				res, err := s.Run(context.Background(), "answer in JSON")
				if err != nil {
					t.Fatalf("turn %d: %s; requests: %s", i+1, errSummary(err), describe(e.srv.Requests()))
				}
				if !jsonEqual(res.StructuredOutput, jsonString(a)) {
					t.Errorf("turn %d: StructuredOutput = %s, want %s", i+1, res.StructuredOutput, jsonString(a))
				}
				if schema := requestSchema(t, cli, e.lastMain()); !jsonEqual(schema, outputSchema) {
					t.Errorf("turn %d: the model request carries schema %s, want %s", i+1, schema, outputSchema)
				}
			}
		})
	}
}

// TestLiveMaxBudget: claude's --max-budget-usd caps what the whole live
// session spends: the turn that reaches it fails with
// error_max_budget_usd, and so does the next one, without a model call.
func TestLiveMaxBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "claude", agentclitest.Turn{Shell: "echo spent"}, agentclitest.Turn{Text: "never"}, agentclitest.Turn{Text: "never either"})
	b := openBackend(t, "claude", nil)
	req, tag := e.liveRequest()
	req.MaxBudgetUSD = 0.00001
	req.Permission = agentcli.PermissionBypass
	s := liveSession(t, b, req, tag)
	for i := range 2 {
		res, err := s.Run(context.Background(), "spend")
		var re *agentcli.ResultError
		if !errors.As(err, &re) || re.Subtype != "error_max_budget_usd" || res == nil || res.CostUSD == nil {
			t.Fatalf("turn %d: %+v, %s; want a ResultError error_max_budget_usd", i+1, res, errSummary(err))
		}
		t.Logf("turn %d: terminal reason %q, cost %v", i+1, re.TerminalReason, *res.CostUSD)
	}
	if n := len(e.main()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
	if err := s.Err(); err != nil {
		t.Errorf("the session died: %s", errSummary(err))
	}
}

// TestLiveUnsupportedSettings: a setting a backend cannot carry in a live
// session is a warning by default (the session starts and works) and,
// under Options.Strict, an *UnsupportedError naming backend and setting
// before the CLI starts, for StartSession and for a one-shot run with a
// permission mode alike.
func TestLiveUnsupportedSettings(t *testing.T) {
	cases := []struct {
		cli     string
		feature string
		set     func(*agentcli.Request)
	}{
		{"codex", "fallback model", func(r *agentcli.Request) { r.FallbackModel = "other" }},
		{"gemini", "structured output", func(r *agentcli.Request) { r.OutputSchema = json.RawMessage(outputSchema) }},
		{"opencode", "fallback model", func(r *agentcli.Request) { r.FallbackModel = "other" }},
		{"qwen", "structured output", func(r *agentcli.Request) { r.OutputSchema = json.RawMessage(outputSchema) }},
		{"copilot", "fallback model", func(r *agentcli.Request) { r.FallbackModel = "other" }},
	}
	for _, c := range cases {
		t.Run(c.cli+"-"+c.feature, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, c.cli, agentclitest.Turn{Text: "ok"})
			logs := &logBuffer{}
			b := openBackend(t, c.cli, logs)
			req, tag := e.liveRequest()
			c.set(req)
			s := liveSession(t, b, req, tag)
			res, err := s.Run(context.Background(), "hi")
			if err != nil || res.Text != "ok" {
				t.Fatalf("Run: %+v, %s", res, errSummary(err))
			}
			if !strings.Contains(logs.String(), c.feature) {
				t.Errorf("no warning about %s in the log:\n%s", c.feature, logs.String())
			}
			strict, err := agentcli.Open(c.cli, &agentcli.Options{Path: cliPath(t, c.cli), Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			n := len(e.srv.Requests())
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sreq, stag := e.liveRequest()
			c.set(sreq)
			ss, err := agentcli.StartSession(ctx, strict, sreq)
			if ss != nil {
				ss.Close()
			}
			var ue *agentcli.UnsupportedError
			if !errors.As(err, &ue) || ue.Backend != c.cli || !strings.Contains(ue.Feature, c.feature) {
				t.Errorf("strict StartSession: %s; want an UnsupportedError for %s", errSummary(err), c.feature)
			}
			oreq, otag := e.request("hi")
			c.set(oreq)
			oreq.Permission = agentcli.PermissionAsk
			oreq.OnPermission = func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
				return agentcli.PermissionDecision{}
			}
			_, err = strict.Run(ctx, oreq)
			if !errors.As(err, &ue) || ue.Backend != c.cli || !strings.Contains(ue.Feature, c.feature) {
				t.Errorf("strict Run with PermissionAsk: %s; want an UnsupportedError for %s", errSummary(err), c.feature)
			}
			assertNoProcs(t, stag)
			assertNoProcs(t, otag)
			if len(e.srv.Requests()) != n {
				t.Errorf("a strict start reached the model")
			}
		})
	}
}

// TestLiveMCPPermissions: the tools of the request's MCP servers follow
// the session's permission mode. Under PermissionAsk the callback is asked
// about the call (canonical name "mcp__SERVER__TOOL"-style raw name, the
// tool's input) and refuses it; under PermissionDeny nothing is asked.
// Either way the call never reaches the server and the session goes on.
func TestLiveMCPPermissions(t *testing.T) {
	for _, cli := range settingsCLIs {
		for _, mode := range []agentcli.PermissionMode{agentcli.PermissionAsk, agentcli.PermissionDeny} {
			t.Run(cli+"-"+string(mode), func(t *testing.T) {
				t.Parallel()
				tool := mcpToolName(cli, "probe-srv", mcptest.ToolProbe)
				e := newEnv(t, cli, agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: tool}}, agentclitest.Turn{Text: "refused"}, agentclitest.Turn{Text: "next"})
				b := openBackend(t, cli, nil)
				servers, logPath, _, _ := liveMCPServers(t)
				req, tag := e.liveRequest()
				req.MCPServers = servers[:1]
				req.Permission = mode
				perms := &permissions{decide: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
					return agentcli.PermissionDecision{Kind: agentcli.RejectOnce}
				}}
				req.OnPermission = perms.callback
				s := liveSession(t, b, req, tag)
				res, err := s.Run(context.Background(), "call the probe")
				if err != nil {
					t.Fatalf("turn: %s; requests: %s", errSummary(err), describe(e.srv.Requests()))
				}
				t.Logf("the refused turn ended with %q", res.Text)
				rs := perms.requests()
				want := 0
				if mode == agentcli.PermissionAsk {
					want = 1
				}
				if len(rs) != want {
					t.Errorf("%d permission requests, want %d: %+v", len(rs), want, rs)
				}
				for _, r := range rs {
					t.Logf("permission request for %s (%s, %s): %q", r.Tool.RawName, r.Tool.Name, r.Tool.Kind, r.Title)
					if !strings.Contains(r.Tool.RawName, mcptest.ToolProbe) || !strings.Contains(r.Tool.RawName, "probe-srv") {
						t.Errorf("permission request for %q (%q), want the MCP tool", r.Tool.RawName, r.Tool.Name)
					}
				}
				calls, _ := mcptest.ReadLog(logPath)
				if got := mcptest.ToolCalls(calls); len(got) != 0 {
					t.Errorf("the refused call reached the server: %v", got)
				}
				if _, err := s.Run(context.Background(), "go on"); err != nil {
					t.Fatalf("the next turn: %s", errSummary(err))
				}
			})
		}
	}
}
