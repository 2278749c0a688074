//go:build unix

package conformance

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/acpagent"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/mcptest"
)

// acpCase is one pinned CLI driven as a plain ACP agent by package
// acpagent: the generic backend ("acp", Options.Path and Options.Args)
// and the known agent of the same CLI.
type acpCase struct {
	// wire is the CLI (its binary and agentclitest's wiring); agent the
	// known agent's registry name; args what starts the CLI in ACP mode.
	wire, agent string
	args        []string
	// usage: the agent reports usage in session/prompt's answer.
	usage bool
	// resume: loading a session in a new process keeps its history
	// (gemini 0.61.0 loses it when the load comes in the minute the
	// session was created; the gemini backend waits, the generic one
	// does not).
	resume bool
	// env configures the agent for the generic backend, which runs it as
	// configured: it refuses only what the agent asks about.
	env []string
}

// acpCases are the pinned CLIs that speak ACP, slowest first.
var acpCases = []acpCase{
	{wire: "copilot", agent: "copilot-acp", args: []string{"--acp", "--no-auto-update"}, usage: true, resume: true},
	// opencode asks about nothing unless its permission config says
	// "ask" (the known agent sets it; a user of the generic backend sets
	// it too).
	{wire: "opencode", agent: "opencode-acp", args: []string{"acp"}, usage: true, resume: true,
		env: []string{`OPENCODE_PERMISSION={"bash":"ask","edit":"ask","webfetch":"ask"}`}},
	{wire: "gemini", agent: "gemini-acp", args: []string{"--acp", "--skip-trust"}},
}

// openACP opens the generic ACP backend running c's pinned CLI with its
// ACP arguments, or, when known, c's known agent.
func openACP(t *testing.T, c acpCase, known bool) agentcli.Backend {
	t.Helper()
	opts := &agentcli.Options{Path: cliPath(t, c.wire), KillGrace: killGrace}
	name := "acp"
	if known {
		name = c.agent
	} else {
		opts.Args, opts.Env = c.args, c.env
	}
	b, err := agentcli.Open(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestACP drives copilot, opencode and gemini through package acpagent,
// the way any ACP agent is driven: the generic backend ("acp" with
// Options.Path and Options.Args) for every scenario, and the known agent
// ("copilot-acp", ...) for Doctor, plan mode and capabilities:
//
//   - text: a one-shot Run (one turn of a session) answers with a session
//     id (and usage, where the agent reports it), no process left;
//   - deny: the zero mode refuses the scripted `touch MARKER` (the agent
//     asks, the session refuses) and the run succeeds;
//   - ask: PermissionAsk asks the callback about the shell command
//     (canonical Bash, kind execute, allow and reject options); allowed,
//     it runs;
//   - bypass: the command runs without asking;
//   - multiturn: two turns of one live session see the history, and
//     session/load in a new process does too (agents that keep it);
//   - interrupt: a stalled turn ends with ErrInterrupted, the next answers;
//   - prompts: "--help" reaches the model verbatim, "/help" behind a
//     zero-width space (agents run their slash commands);
//   - system: the system prompt is prepended to the first prompt;
//   - mcp: a stdio MCP server (session/new's mcpServers) is offered and
//     called;
//   - wire-log: a live run's wire log replays into the same events;
//   - unknown-session: loading a session the agent does not know is
//     ErrSessionNotFound;
//   - unsupported: tool lists are an UnsupportedError before anything
//     starts;
//   - known: the known agent's Doctor row (the version from initialize),
//     its capabilities before and after the agent said what it does, and
//     plan mode (the agent's own) refusing the command.
func TestACP(t *testing.T) {
	for _, c := range acpCases {
		t.Run(c.wire, func(t *testing.T) {
			t.Parallel()
			b := openACP(t, c, false)
			t.Run("text", func(t *testing.T) { testACPText(t, c, b) })
			t.Run("deny", func(t *testing.T) { testACPShell(t, c, b, "", false) })
			t.Run("ask", func(t *testing.T) { testACPShell(t, c, b, agentcli.PermissionAsk, true) })
			t.Run("bypass", func(t *testing.T) { testACPShell(t, c, b, agentcli.PermissionBypass, true) })
			t.Run("multiturn", func(t *testing.T) { testACPMultiTurn(t, c, b) })
			t.Run("interrupt", func(t *testing.T) { testLiveInterrupt(t, liveCase{name: c.wire}, b) })
			t.Run("prompts", func(t *testing.T) { testACPPrompts(t, c, b) })
			t.Run("system", func(t *testing.T) { testACPSystem(t, c, b) })
			t.Run("mcp", func(t *testing.T) { testACPMCP(t, c, b) })
			t.Run("wire-log", func(t *testing.T) { testACPWireLog(t, c, b) })
			t.Run("unknown-session", func(t *testing.T) { testACPUnknownSession(t, c, b) })
			t.Run("unsupported", func(t *testing.T) { testACPUnsupported(t, c, b) })
			t.Run("known", func(t *testing.T) { testACPKnown(t, c) })
		})
	}
}

func testACPText(t *testing.T, c acpCase, b agentcli.Backend) {
	e := newEnv(t, c.wire, agentclitest.Turn{Text: "Hello over ACP."})
	req, tag := e.request("Say hello.")
	res, d, err := run(t, b, req, tag)
	t.Logf("run took %v", d)
	if err != nil {
		t.Fatalf("Run: %s", errSummary(err))
	}
	if res.Text != "Hello over ACP." || res.SessionID == "" {
		t.Errorf("result %+v", res)
	}
	if c.usage && res.Usage.IsZero() {
		t.Errorf("no usage: %+v", res.Usage)
	}
	if got := e.lastMain().LastUserText(); got != "Say hello." {
		t.Errorf("the model saw %q", got)
	}
}

// testACPShell: the scripted model asks for `touch MARKER` under mode; it
// runs exactly when runs says, and under ask the callback was asked.
func testACPShell(t *testing.T, c acpCase, b agentcli.Backend, mode agentcli.PermissionMode, runs bool) {
	e := newEnv(t, c.wire, agentclitest.Turn{Shell: "touch MARKER"}, agentclitest.Turn{Text: "went on"})
	req, tag := e.request("Create the marker.")
	req.Permission = mode
	perms := &permissions{decide: func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}}
	if mode == agentcli.PermissionAsk {
		req.OnPermission = perms.callback
	}
	res, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("Run: %s; requests %s", errSummary(err), describe(e.srv.Requests()))
	}
	if got := fileExists(e.w.Dir, "MARKER"); got != runs {
		t.Fatalf("MARKER exists = %v, want %v (text %q)", got, runs, res.Text)
	}
	rs := perms.requests()
	if mode == agentcli.PermissionAsk {
		if len(rs) != 1 {
			t.Fatalf("%d permission requests, want 1", len(rs))
		}
		checkShellRequest(t, rs[0], "MARKER")
	}
	t.Logf("the turn ended with %q", res.Text)
}

func testACPMultiTurn(t *testing.T, c acpCase, b agentcli.Backend) {
	e := newEnv(t, c.wire, agentclitest.Turn{Text: "Apple noted."}, agentclitest.Turn{Text: "Pear noted."}, agentclitest.Turn{Text: "Apple and pear."})
	req, tag := e.liveRequest()
	s := liveSession(t, b, req, tag)
	for i, p := range []string{"Remember apple.", "Remember pear."} {
		if _, err := s.Run(context.Background(), p); err != nil {
			t.Fatalf("turn %d: %s", i+1, errSummary(err))
		}
	}
	last := e.lastMain()
	if !hasMessage(last.Messages, "user", "Remember apple.") || !hasMessage(last.Messages, "assistant", "Apple noted.") {
		t.Errorf("the second turn lacks the first: %+v", last.Messages)
	}
	id := s.ID()
	s.Close()
	if !c.resume {
		return
	}
	if !b.Capabilities().Resume {
		t.Fatalf("Capabilities().Resume = false after a session of an agent that loads sessions")
	}
	req, tag = e.liveRequest()
	req.SessionID = id
	s2 := liveSession(t, b, req, tag)
	if _, err := s2.Run(context.Background(), "Which fruits?"); err != nil {
		t.Fatalf("loaded session: %s", errSummary(err))
	}
	last = e.lastMain()
	if !hasMessage(last.Messages, "user", "Remember pear.") || !hasMessage(last.Messages, "assistant", "Pear noted.") {
		t.Errorf("the loaded session lacks the history: %+v", last.Messages)
	}
}

func testACPPrompts(t *testing.T, c acpCase, b agentcli.Backend) {
	e := newEnv(t, c.wire, agentclitest.Turn{Text: "ok"}, agentclitest.Turn{Text: "ok"})
	req, tag := e.liveRequest()
	s := liveSession(t, b, req, tag)
	for _, p := range []struct{ prompt, want string }{{"--help", "--help"}, {"/help", "\u200b/help"}} {
		if _, err := s.Run(context.Background(), p.prompt); err != nil {
			t.Fatalf("%q: %s", p.prompt, errSummary(err))
		}
		if got := e.lastMain().LastUserText(); got != p.want {
			t.Errorf("the model saw %q, want %q", got, p.want)
		}
	}
}

func testACPSystem(t *testing.T, c acpCase, b agentcli.Backend) {
	if got := b.Capabilities().SystemPrompt; got != agentcli.SystemPromptPrepend {
		t.Fatalf("Capabilities().SystemPrompt = %q", got)
	}
	e := newEnv(t, c.wire, agentclitest.Turn{Text: "hello"})
	req, tag := e.request("Say hello.")
	req.SystemPrompt = "ACP-SYSTEM: be brief."
	if _, _, err := run(t, b, req, tag); err != nil {
		t.Fatalf("Run: %s", errSummary(err))
	}
	if got := e.lastMain().LastUserText(); got != "ACP-SYSTEM: be brief.\n\nSay hello." {
		t.Errorf("the model saw %q", got)
	}
}

// testACPMCP: an MCP server given in Request.MCPServers reaches the agent
// in session/new, is offered and called: a stdio server (benign values:
// agents expand references in them their own ways, which their
// first-class backends escape), or for copilot, whose ACP agent ignores
// stdio servers (refused before anything starts), an HTTP one.
func testACPMCP(t *testing.T, c acpCase, b agentcli.Backend) {
	logPath := filepath.Join(t.TempDir(), "mcp.log")
	cmd, env, err := mcptest.StdioCommand(logPath)
	if err != nil {
		t.Fatal(err)
	}
	stdio := agentcli.MCPServer{Name: "probe-srv", Command: cmd, Env: env}
	server := stdio
	var h *mcptest.HTTP
	if c.wire == "copilot" {
		e := newEnv(t, c.wire)
		req, tag := e.request("hi")
		req.MCPServers = []agentcli.MCPServer{stdio}
		_, _, err := run(t, b, req, tag)
		var ue *agentcli.UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(ue.Feature, "stdio MCP server") || len(e.srv.Requests()) != 0 {
			t.Fatalf("a stdio server: %s; want an UnsupportedError", errSummary(err))
		}
		h = mcptest.NewHTTP()
		t.Cleanup(h.Close)
		server = agentcli.MCPServer{Name: "probe-srv", URL: h.URL()}
	}
	tool := mcpToolName(c.wire, "probe-srv", mcptest.ToolEcho)
	e := newEnv(t, c.wire, agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: tool, Args: map[string]any{"text": "echoed"}}}, agentclitest.Turn{Text: "done"})
	req, tag := e.request("Call the echo tool.")
	req.Permission = agentcli.PermissionBypass
	req.MCPServers = []agentcli.MCPServer{server}
	res, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("Run: %s; requests %s", errSummary(err), describe(e.srv.Requests()))
	}
	if main := e.main(); len(main) < 2 || !offered(main[0], tool) {
		var tools []string
		if len(main) > 0 {
			tools = main[0].Tools
		}
		t.Fatalf("the model was not offered %s (result %q): %s; tools %q", tool, res.Text, describe(e.srv.Requests()), tools)
	}
	calls, _ := mcptest.ReadLog(logPath)
	if h != nil {
		calls = h.Calls()
	}
	if got := mcptest.ToolCalls(calls); !slices.Equal(got, []string{mcptest.ToolEcho}) {
		t.Errorf("tool calls at the server %v", got)
	}
	if res.Text != "done" {
		t.Errorf("Text = %q", res.Text)
	}
}

func testACPWireLog(t *testing.T, c acpCase, b agentcli.Backend) {
	e := newEnv(t, c.wire, agentclitest.Turn{Shell: "echo wirelog"}, agentclitest.Turn{Text: "It printed wirelog."})
	req, tag := e.request("Run the command.")
	req.Permission = agentcli.PermissionBypass
	evs, err := backendtest.ReplayRoundTrip(t, b, req, true)
	assertNoProcs(t, tag)
	if err != nil {
		t.Fatalf("%s", errSummary(err))
	}
	if len(evs) == 0 || evs[len(evs)-1].Result.Text != "It printed wirelog." {
		t.Fatalf("events %+v", evs)
	}
}

func testACPUnknownSession(t *testing.T, c acpCase, b agentcli.Backend) {
	e := newEnv(t, c.wire, agentclitest.Turn{Text: "must not be used"})
	req, tag := e.request("Continue.")
	req.SessionID = "0195f0c2-1111-7222-8333-944455556666"
	if c.wire == "opencode" {
		req.SessionID = "ses_0123456789abcdefABCDEFGHIJ"
	}
	_, _, err := run(t, b, req, tag)
	if !errors.Is(err, agentcli.ErrSessionNotFound) {
		t.Fatalf("err = %s; want one matching ErrSessionNotFound", errSummary(err))
	}
	if len(e.main()) != 0 {
		t.Fatalf("a model call for an unknown session")
	}
}

func testACPUnsupported(t *testing.T, c acpCase, b agentcli.Backend) {
	e := newEnv(t, c.wire)
	req, tag := e.request("hi")
	req.AllowedTools = []string{"Read"}
	_, _, err := run(t, b, req, tag)
	var ue *agentcli.UnsupportedError
	if !errors.As(err, &ue) || !strings.Contains(ue.Feature, "tools") {
		t.Fatalf("err = %s; want an UnsupportedError for tool lists", errSummary(err))
	}
}

// testACPKnown: the known agent of c: Doctor's row (binary, the version
// the agent reports at initialize, no model call), its capabilities before
// and after, and its plan mode refusing the command.
func testACPKnown(t *testing.T, c acpCase) {
	b := openACP(t, c, true)
	if b.Capabilities().Resume {
		t.Errorf("Capabilities().Resume before the agent said anything")
	}
	e := newEnv(t, c.wire)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wired, err := agentcli.Open(c.agent, &agentcli.Options{Path: cliPath(t, c.wire), Env: append(e.w.Env, tagKey+"="+newTag())})
	if err != nil {
		t.Fatal(err)
	}
	info, path, err := acpagent.Probe(ctx, wired)
	if err != nil {
		t.Fatalf("Probe: %s", errSummary(err))
	}
	t.Logf("%s at %s: %+v", info.Name, path, info)
	if info.Version == "" || wired.Capabilities().Resume != info.LoadSession {
		t.Errorf("info %+v, Capabilities().Resume %v", info, wired.Capabilities().Resume)
	}
	d := wired.(interface {
		Diagnose(context.Context) agentcli.Diagnosis
	}).Diagnose(ctx)
	if d.Version != info.Version || !d.InRange || d.Status == agentcli.DiagnosisFailure {
		t.Errorf("Doctor: %+v", d)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("Probe and Doctor made %d model calls", n)
	}

	e = newEnv(t, c.wire, agentclitest.Turn{Shell: "touch PLANNED"}, agentclitest.Turn{Text: "planned"})
	req, tag := e.request("Plan it.")
	req.Permission = agentcli.PermissionPlan
	res, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("plan: %s", errSummary(err))
	}
	if fileExists(e.w.Dir, "PLANNED") {
		t.Errorf("the command ran in plan mode (text %q)", res.Text)
	}
}
