package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/backendtest"

	// The backends under test register themselves on import.
	_ "github.com/agentcli/agentcli/claude"
	_ "github.com/agentcli/agentcli/codex"
	_ "github.com/agentcli/agentcli/copilot"
	_ "github.com/agentcli/agentcli/droid"
	_ "github.com/agentcli/agentcli/gemini"
	_ "github.com/agentcli/agentcli/opencode"
	_ "github.com/agentcli/agentcli/qwen"
)

// apiErr is the typed error a backend gives when every model call answers
// with one HTTP status.
type apiErr struct {
	// typ is "*agentcli.ResultError" (the CLI printed a terminal result
	// saying the run failed) or "*agentcli.ExitError" (it exited non-zero
	// with no result).
	typ string
	// status is ResultError.APIStatus; 0 when the CLI does not report it.
	status int
	// subtype is ResultError.Subtype.
	subtype string
	// code is the CLI's exit status (ResultError.ExitCode or ExitError.Code).
	code int
	// message: the error text carries the server's error message.
	message bool
	// timeout bounds the run (Request.Timeout).
	timeout time.Duration
}

// cliCase is what the suite knows about one CLI: everything that is
// documented to differ between them.
//
// The typed errors for API failures, every model call answering with the
// status (observed with the pinned CLIs; model calls include utility calls):
//
//	CLI       HTTP  error                  Subtype   APIStatus  exit  model calls          time
//	claude    400   *agentcli.ResultError  success   400        1     6 (5 retries)        ~1 s
//	claude    500   *agentcli.ResultError  success   500        1     1 (MAX_RETRIES=0)    ~1 s
//	codex     400   *agentcli.ResultError  -         400 (*)    1     1                    <1 s
//	codex     500   *agentcli.ResultError  -         500 (*)    1     1 (retries 0)        ~1 s
//	gemini    400   *agentcli.ResultError  Error     400        144   2 (router + main)    ~2 s
//	gemini    500   *agentcli.ResultError  Error     500        244   2 (maxAttempts 1)    ~2 s
//	opencode  400   *agentcli.ResultError  APIError  400        1     2 (title + main)     ~5 s
//	opencode  500   *agentcli.ResultError  APIError  500        1     7 (title + 6 tries)  ~75 s
//
// (*) codex prints no HTTP status; the backend infers it from codex's
// wording (a raw JSON error body for 400, "We're currently experiencing high
// demand" for 500). No CLI leaves the run without a result, so no backend
// gives a bare *agentcli.ExitError here. None of these errors matches
// ErrAuth or ErrRateLimited.
type cliCase struct {
	name string
	// usage: the CLI reports token usage for a run, so Result.Usage of a
	// one-turn run is non-zero.
	usage bool
	// resumeSameID: resuming keeps the session id.
	resumeSameID bool
	err400       apiErr
	err500       apiErr
	// model is the Request.Model of the model scenario and atServer the
	// model name the server must see; modelEnv, if set, returns extra
	// Request.Env entries that make the model known to the CLI.
	model, atServer string
	modelEnv        func(t testing.TB, w *agentclitest.Wiring) []string
	// retries5xx, when set, says why the CLI cannot fail on a 5xx within
	// any bound a test can wait for (it retries with growing back-off and
	// has no setting to stop it): the api500 scenario then checks that
	// Request.Timeout ends the run with a *TimeoutError and no process
	// left.
	retries5xx string
	// rewrites maps a tricky prompt to the text the model receives instead,
	// where the backend documents that it must change it (the CLI offers
	// no way to pass it untouched). Prompts not listed arrive verbatim.
	rewrites map[string]string
}

// clis lists the CLIs under test, slowest first: the CLI groups run in
// parallel (as many at a time as go test's -parallel allows), so the longest
// group should start first.
var clis = []cliCase{
	{
		name:         "copilot",
		usage:        true,
		resumeSameID: true,
		// A session.error event (errorType "query", the status), a
		// result line with exitCode 1, exit 1. The server's message is
		// in the failed model call's errorMessage.
		err400: apiErr{typ: "*agentcli.ResultError", subtype: "query", status: 400, code: 1, message: true, timeout: time.Minute},
		// copilot retries a 500 five times (about 20 s; no knob).
		err500:   apiErr{typ: "*agentcli.ResultError", subtype: "query", status: 500, code: 1, message: true, timeout: 150 * time.Second},
		model:    "copilot-conformance-model",
		atServer: "copilot-conformance-model",
	},
	{
		name:         "droid",
		usage:        true,
		resumeSameID: true,
		// An "error" line from the agent loop ("400 Bad Request": the
		// status and its reason, not the server's message), one from
		// the CLI ("Exec failed"), no completion, exit 1.
		err400:     apiErr{typ: "*agentcli.ResultError", status: 400, code: 1, timeout: time.Minute},
		retries5xx: "droid retries a 5xx with growing back-off (5 s, 14 s, 35 s, ...; no setting bounds it, Retry-After is ignored)",
		err500:     apiErr{timeout: 20 * time.Second},
		// droid names custom (BYOK) models custom:MODEL, and only runs
		// models its settings declare: add one.
		model:    "custom:droid-conformance-model",
		atServer: "droid-conformance-model",
		modelEnv: droidExtraModel("droid-conformance-model"),
		// Documented in package droid: droid attaches a file the prompt
		// tags with "@"; the backend puts an invisible word joiner after
		// the "@".
		rewrites: map[string]string{"@README.md": "@\u2060README.md"},
	},
	{
		name:         "qwen",
		usage:        true,
		resumeSameID: true,
		// qwen prints "[API Error: 400 <the server's message>]" and a
		// result with is_error; with stream-json input it exits 0.
		err400: apiErr{typ: "*agentcli.ResultError", subtype: "error_during_execution", status: 400, code: 0, message: true, timeout: time.Minute},
		// qwen retries 5xx seven times with back-off (about 90 s); no
		// setting bounds it.
		err500:   apiErr{typ: "*agentcli.ResultError", subtype: "error_during_execution", status: 500, code: 0, message: true, timeout: 180 * time.Second},
		model:    "qwen-conformance-model",
		atServer: "qwen-conformance-model",
		// Documented in package qwen: qwen runs "/..." as a slash
		// command and expands "@path" in stream-json messages too; the
		// backend escapes both the way qwen understands.
		rewrites: map[string]string{"/help": " /help", "@README.md": `\@README.md`},
	},
	{
		name:         "opencode",
		usage:        true,
		resumeSameID: true,
		// An "error" line naming the error (APIError), then exit 1.
		err400: apiErr{typ: "*agentcli.ResultError", subtype: "APIError", status: 400, code: 1, message: true, timeout: time.Minute},
		// opencode retries 5xx about 70 s with no knob to turn it off.
		err500: apiErr{typ: "*agentcli.ResultError", subtype: "APIError", status: 500, code: 1, message: true, timeout: 150 * time.Second},
		// opencode names models provider/model, and the provider must
		// know the model: add one to the wired provider's config.
		model:    "agentclitest/opencode-conformance-model",
		atServer: "opencode-conformance-model",
		modelEnv: opencodeExtraModel("opencode-conformance-model"),
	},
	{
		name:         "gemini",
		usage:        true,
		resumeSameID: true,
		// exit status = HTTP status mod 256.
		err400:   apiErr{typ: "*agentcli.ResultError", subtype: "Error", status: 400, code: 144, message: true, timeout: time.Minute},
		err500:   apiErr{typ: "*agentcli.ResultError", subtype: "Error", status: 500, code: 244, message: true, timeout: time.Minute},
		model:    "gemini-conformance-model",
		atServer: "gemini-conformance-model",
		// Documented in package gemini: headless gemini runs "/..." as a
		// slash command and expands "@path"; the backend escapes both
		// the way gemini itself understands, and the escape stays in the
		// text.
		rewrites: map[string]string{"/help": " /help", "@README.md": `\@README.md`},
	},
	{
		name:         "claude",
		usage:        true,
		resumeSameID: true,
		// claude retries a 400 five times with fewer beta features, then
		// prints a result with is_error, api_error_status and exits 1.
		// claude's result keeps subtype "success" even then; the error
		// leaves that contradicting subtype out (Result.Subtype keeps it).
		err400: apiErr{typ: "*agentcli.ResultError", subtype: "", status: 400, code: 1, message: true, timeout: time.Minute},
		// Wire sets CLAUDE_CODE_MAX_RETRIES=0: one request, then the same.
		err500:   apiErr{typ: "*agentcli.ResultError", subtype: "", status: 500, code: 1, message: true, timeout: time.Minute},
		model:    "claude-conformance-model",
		atServer: "claude-conformance-model",
	},
	{
		name:         "codex",
		usage:        true,
		resumeSameID: true,
		// One request, then error + turn.failed events carrying the raw
		// response body and exit 1. codex prints no HTTP status; the
		// backend infers it from codex's wording of the error.
		err400: apiErr{typ: "*agentcli.ResultError", status: 400, code: 1, message: true, timeout: time.Minute},
		// Wire sets request_max_retries = 0. codex replaces the server's
		// message with "We're currently experiencing high demand...".
		err500:   apiErr{typ: "*agentcli.ResultError", status: 500, code: 1, timeout: time.Minute},
		model:    "codex-conformance-model",
		atServer: "codex-conformance-model",
	},
}

// droidExtraModel returns a modelEnv that declares model as a second
// custom model of droid's settings (Wire writes the first), pointing at
// the same server.
func droidExtraModel(model string) func(t testing.TB, w *agentclitest.Wiring) []string {
	return func(t testing.TB, w *agentclitest.Wiring) []string {
		t.Helper()
		var home string
		for _, kv := range w.Env {
			if v, ok := strings.CutPrefix(kv, "HOME="); ok {
				home = v
			}
		}
		f := filepath.Join(home, ".factory", "settings.json")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cfg map[string]any
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
		models, _ := cfg["customModels"].([]any)
		if len(models) == 0 {
			t.Fatalf("the wiring declares no custom model: %s", b)
		}
		m := maps.Clone(models[0].(map[string]any))
		m["model"], m["displayName"] = model, model
		cfg["customModels"] = append(models, m)
		if b, err = json.Marshal(cfg); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return nil
	}
}

// opencodeExtraModel returns a modelEnv that adds model to the provider that
// Wire configures in OPENCODE_CONFIG_CONTENT.
func opencodeExtraModel(model string) func(t testing.TB, w *agentclitest.Wiring) []string {
	return func(t testing.TB, w *agentclitest.Wiring) []string {
		t.Helper()
		const key = "OPENCODE_CONFIG_CONTENT="
		var raw string
		for _, kv := range w.Env {
			if strings.HasPrefix(kv, key) {
				raw = strings.TrimPrefix(kv, key)
			}
		}
		var cfg map[string]any
		if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
			t.Fatalf("wiring has no parsable %s: %v", key, err)
		}
		prov, _ := cfg["provider"].(map[string]any)
		p, _ := prov["agentclitest"].(map[string]any)
		models, _ := p["models"].(map[string]any)
		if models == nil {
			t.Fatalf("wiring's opencode config has no agentclitest provider models: %s", raw)
		}
		models[model] = map[string]any{"name": model, "tool_call": true,
			"limit": map[string]any{"context": 200000, "output": 32000}}
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return []string{key + string(b)}
	}
}

func TestConformance(t *testing.T) {
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			logs := &logBuffer{}
			b := openBackend(t, c.name, logs)
			// The 500 scenario is the slowest (opencode retries ~70 s):
			// its run starts now and goes on in the background while the
			// other scenarios run; the subtest resumes (t.Parallel) once
			// they are done, and checks the outcome.
			t.Run("api500", func(t *testing.T) {
				wait := startAPIError(t, c.name, b, 500, c.err500)
				t.Parallel()
				if c.retries5xx != "" {
					t.Logf("documented: %s", c.retries5xx)
					o := wait()
					assertNoProcs(t, o.tag)
					var te *agentcli.TimeoutError
					if !errors.As(o.err, &te) || len(o.requests) == 0 {
						t.Fatalf("%s after %d model calls; want the run's *TimeoutError", errSummary(o.err), len(o.requests))
					}
					return
				}
				checkAPIError(t, c.name, 500, c.err500, wait())
			})
			// 429 is retried as long as 5xx by opencode: in the background too.
			t.Run("api429", func(t *testing.T) {
				wait := startAPIError(t, c.name, b, 429, apiErr{timeout: 150 * time.Second})
				t.Parallel()
				checkAPIKind(t, 429, agentcli.ErrRateLimited, wait())
			})
			t.Run("text", func(t *testing.T) { testText(t, c, b) })
			t.Run("deltas", func(t *testing.T) { testDeltas(t, c, b) })
			t.Run("wirelog", func(t *testing.T) { testWireLog(t, c, b) })
			t.Run("tool", func(t *testing.T) { testTool(t, c, b) })
			t.Run("resume", func(t *testing.T) { testResume(t, c, b) })
			t.Run("api400", func(t *testing.T) {
				checkAPIError(t, c.name, 400, c.err400, startAPIError(t, c.name, b, 400, c.err400)())
			})
			t.Run("api401", func(t *testing.T) {
				checkAPIKind(t, 401, agentcli.ErrAuth, startAPIError(t, c.name, b, 401, apiErr{timeout: time.Minute})())
			})
			t.Run("prompts", func(t *testing.T) { testPrompts(t, c, b) })
			t.Run("bigprompt", func(t *testing.T) { testBigPrompt(t, c, b) })
			t.Run("system", func(t *testing.T) { testSystem(t, c, b, logs) })
			t.Run("model", func(t *testing.T) { testModel(t, c, b) })
			t.Run("cancel", func(t *testing.T) { testCancel(t, c, b) })
			t.Run("unknown-session", func(t *testing.T) { testUnknownSession(t, c, b) })
		})
	}
}

// testUnknownSession: resuming a session the CLI does not know fails with
// ErrSessionNotFound (callers reset the session on it), without a model
// call.
func testUnknownSession(t *testing.T, c cliCase, b agentcli.Backend) {
	e := newEnv(t, c.name, agentclitest.Turn{Text: "must not be used"})
	req, tag := e.request("Continue.")
	req.SessionID = "0195f0c2-1111-7222-8333-944455556666"
	if c.name == "opencode" {
		req.SessionID = "ses_0123456789abcdefABCDEFGHIJ" // opencode's id shape
	}
	_, _, err := run(t, b, req, tag)
	if !errors.Is(err, agentcli.ErrSessionNotFound) {
		t.Fatalf("err = %v; want one matching agentcli.ErrSessionNotFound", err)
	}
	for _, r := range e.srv.Requests() {
		if !r.Utility {
			t.Fatalf("a model call was made for an unknown session: %s %s", r.Method, r.Path)
		}
	}
}

// testText: a plain answer comes back with a session id and usage.
func testText(t *testing.T, c cliCase, b agentcli.Backend) {
	const answer = "Hello from the conformance suite."
	e := newEnv(t, c.name, agentclitest.Turn{Text: answer})
	req, tag := e.request("Say hello.")
	res, d, err := run(t, b, req, tag)
	t.Logf("run took %v", d)
	if err != nil {
		t.Fatalf("Run: %s", errSummary(err))
	}
	if res.Text != answer {
		t.Errorf("Result.Text = %q, want %q", res.Text, answer)
	}
	if res.SessionID == "" {
		t.Error("Result.SessionID is empty")
	}
	if res.IsError {
		t.Error("Result.IsError is set")
	}
	if c.usage && res.Usage.IsZero() {
		t.Errorf("Result.Usage is zero, but %s reports usage", c.name)
	}
	if !c.usage && !res.Usage.IsZero() {
		t.Errorf("Result.Usage = %+v, but %s is documented to report none", res.Usage, c.name)
	}
	if got := e.lastMain().LastUserText(); got != "Say hello." {
		t.Errorf("the model saw user text %q, want %q", got, "Say hello.")
	}
}

// testDeltas: a caller who prints only text deltas prints the whole answer
// exactly once, on every CLI (whether or not it streams deltas itself), and
// likewise for thinking deltas; Run's OnText gets the same text.
func testDeltas(t *testing.T, c cliCase, b agentcli.Backend) {
	const answer = "Deltas: one, two, three — and the end."
	const thought = "Thinking it over."
	e := newEnv(t, c.name, agentclitest.Turn{Thinking: thought, Text: answer}, agentclitest.Turn{Thinking: thought, Text: answer})
	req, tag := e.request("Say it.")
	evs, err := stream(t, context.Background(), b, req, tag)
	if err != nil {
		t.Fatalf("Stream: %s", errSummary(err))
	}
	var text, thinkDeltas, thinkBlocks strings.Builder
	var final *agentcli.Result
	for _, ev := range evs {
		switch {
		case ev.Kind == agentcli.EventTextDelta:
			text.WriteString(ev.Text)
		case ev.Kind == agentcli.EventThinking && ev.Delta:
			thinkDeltas.WriteString(ev.Text)
		case ev.Kind == agentcli.EventThinking:
			thinkBlocks.WriteString(ev.Text)
		case ev.Kind == agentcli.EventResult:
			final = ev.Result
		}
	}
	if final == nil {
		t.Fatal("no EventResult")
	}
	if text.String() != answer || final.Text != answer {
		t.Errorf("text deltas add up to %q, Result.Text %q; want %q for both", text.String(), final.Text, answer)
	}
	if thinkDeltas.String() != thinkBlocks.String() {
		t.Errorf("thinking deltas add up to %q, thinking blocks to %q", thinkDeltas.String(), thinkBlocks.String())
	}
	if b.Capabilities().Thinking && !strings.Contains(thinkDeltas.String(), thought) {
		t.Errorf("thinking deltas %q lack the model's reasoning %q", thinkDeltas.String(), thought)
	}
	var onText strings.Builder
	req, tag = e.request("Say it again.")
	req.OnText = func(s string) { onText.WriteString(s) }
	res, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("Run: %s", errSummary(err))
	}
	if onText.String() != answer || res.Text != answer {
		t.Errorf("OnText got %q, Result.Text %q; want %q for both", onText.String(), res.Text, answer)
	}
}

// testWireLog: the wire log of a live run (thinking, a tool call, its
// result, text) replays into the same events, as a Stream and with Run.
func testWireLog(t *testing.T, c cliCase, b agentcli.Backend) {
	for _, stream := range []bool{true, false} {
		e := newEnv(t, c.name,
			agentclitest.Turn{Thinking: "Let me run it.", Shell: "echo wirelog"},
			agentclitest.Turn{Text: "It printed wirelog."},
		)
		req, tag := e.request("Run the command.")
		req.Permission = agentcli.PermissionBypass // the command runs
		evs, err := backendtest.ReplayRoundTrip(t, b, req, stream)
		assertNoProcs(t, tag)
		if err != nil {
			t.Fatalf("stream=%v: %s", stream, errSummary(err))
		}
		if len(evs) == 0 || evs[len(evs)-1].Result.Text != "It printed wirelog." {
			t.Fatalf("stream=%v: events %+v", stream, evs)
		}
	}
}

// testTool: the model asks for a shell command; the CLI runs it and sends
// its output back; the events name the tool "Bash".
func testTool(t *testing.T, c cliCase, b agentcli.Backend) {
	e := newEnv(t, c.name,
		agentclitest.Turn{Shell: "echo conformance"},
		agentclitest.Turn{Text: "done"},
	)
	req, tag := e.request("Run the conformance command.")
	req.Permission = agentcli.PermissionBypass // the command runs
	evs, err := stream(t, context.Background(), b, req, tag)
	if err != nil {
		t.Fatalf("Stream: %s", errSummary(err))
	}
	var use *agentcli.ToolUse
	var result *agentcli.ToolResult
	var final *agentcli.Result
	for _, ev := range evs {
		switch ev.Kind {
		case agentcli.EventToolUse:
			if use == nil {
				use = ev.Tool
			}
		case agentcli.EventToolResult:
			if result == nil && ev.ToolResult != nil && strings.Contains(ev.ToolResult.Output, "conformance") {
				result = ev.ToolResult
			}
		case agentcli.EventResult:
			final = ev.Result
		}
	}
	switch {
	case use == nil:
		t.Errorf("no EventToolUse among %d events", len(evs))
	case use.Name != "Bash":
		t.Errorf("EventToolUse name = %q (raw %q), want canonical %q", use.Name, use.RawName, "Bash")
	default:
		if !strings.Contains(string(use.Input), "echo conformance") {
			t.Errorf("EventToolUse input %s does not hold the command", use.Input)
		}
	}
	if result == nil {
		t.Errorf("no EventToolResult whose output contains %q", "conformance")
	} else if use != nil && result.ID != use.ID {
		t.Errorf("EventToolResult id %q, want the tool use's id %q", result.ID, use.ID)
	}
	if final == nil {
		t.Fatal("no EventResult")
	}
	if final.Text != "done" {
		t.Errorf("final text = %q, want %q", final.Text, "done")
	}
	// The command's output reached the model.
	found := false
	for _, r := range e.main() {
		for _, tr := range r.ToolResults {
			if strings.Contains(tr.Output, "conformance") {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no tool result containing %q reached the model; requests: %s", "conformance", describe(e.srv.Requests()))
	}
}

// testResume: a second run on the first run's session id sees the first
// turn's history.
func testResume(t *testing.T, c cliCase, b agentcli.Backend) {
	const (
		prompt1 = "Remember the word apple."
		answer1 = "I will remember apple."
		prompt2 = "What was the word?"
		answer2 = "The word was apple."
	)
	e := newEnv(t, c.name, agentclitest.Turn{Text: answer1}, agentclitest.Turn{Text: answer2})
	req, tag := e.request(prompt1)
	res1, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("first Run: %s", errSummary(err))
	}
	if res1.SessionID == "" {
		t.Fatal("first run has no SessionID")
	}
	n := len(e.main())
	req, tag = e.request(prompt2)
	req.SessionID = res1.SessionID
	res2, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("resumed Run: %s", errSummary(err))
	}
	if res2.Text != answer2 {
		t.Errorf("resumed Result.Text = %q, want %q", res2.Text, answer2)
	}
	if c.resumeSameID && res2.SessionID != res1.SessionID {
		t.Errorf("resumed SessionID = %q, want the first run's %q", res2.SessionID, res1.SessionID)
	}
	if len(e.main()) <= n {
		t.Fatalf("the resumed run made no model call; requests: %s", describe(e.srv.Requests()))
	}
	last := e.lastMain()
	if !hasMessage(last.Messages, "user", prompt1) {
		t.Errorf("resumed request lacks the first prompt %q as a user message: %+v", prompt1, last.Messages)
	}
	if !hasMessage(last.Messages, "assistant", answer1) {
		t.Errorf("resumed request lacks the first answer %q as an assistant message: %+v", answer1, last.Messages)
	}
	if got := last.LastUserText(); got != prompt2 {
		t.Errorf("resumed request's last user text = %q, want %q", got, prompt2)
	}
}

// apiOutcome is how a run against a failing model ended.
type apiOutcome struct {
	res      *agentcli.Result
	err      error
	d        time.Duration
	tag      string
	requests []agentclitest.ModelRequest
}

// startAPIError starts a run whose every model call answers status and
// returns a function that waits for its outcome.
func startAPIError(t *testing.T, cli string, b agentcli.Backend, status int, want apiErr) func() apiOutcome {
	t.Helper()
	e := newEnv(t, cli, agentclitest.Turn{Status: status, Message: fmt.Sprintf("conformance scripted %d", status), Repeat: -1})
	req, tag := e.request("Say hello.")
	req.Timeout = want.timeout
	ch := make(chan apiOutcome, 1)
	go func() {
		start := time.Now()
		res, err := b.Run(context.Background(), req)
		ch <- apiOutcome{res: res, err: err, d: time.Since(start), tag: tag, requests: e.srv.Requests()}
	}()
	return func() apiOutcome { return <-ch }
}

// checkAPIKind asserts that a model failing with status gives a
// *agentcli.ResultError carrying that status and matching kind (ErrAuth,
// ErrRateLimited), so callers can react without parsing messages.
func checkAPIKind(t *testing.T, status int, kind error, o apiOutcome) {
	assertNoProcs(t, o.tag)
	t.Logf("%d after %v and %d model calls: %s", status, o.d, len(o.requests), errSummary(o.err))
	if errors.Is(o.err, agentcli.ErrTimeout) {
		t.Fatalf("the run hung until its timeout: %s", errSummary(o.err))
	}
	var re *agentcli.ResultError
	if !errors.As(o.err, &re) || re.APIStatus != status || !errors.Is(o.err, kind) {
		t.Fatalf("error %s; want a *agentcli.ResultError with APIStatus %d matching %v", errSummary(o.err), status, kind)
	}
}

// checkAPIError asserts the documented typed error of a failing model.
func checkAPIError(t *testing.T, cli string, status int, want apiErr, o apiOutcome) {
	assertNoProcs(t, o.tag)
	t.Logf("%d after %v and %d model calls: %s", status, o.d, len(o.requests), errSummary(o.err))
	if o.err == nil {
		t.Fatalf("Run succeeded (text %q); want an error", o.res.Text)
	}
	if errors.Is(o.err, agentcli.ErrTimeout) || errors.Is(o.err, context.DeadlineExceeded) {
		t.Fatalf("the run hung until its %v timeout: %s", want.timeout, errSummary(o.err))
	}
	if o.d >= want.timeout {
		t.Errorf("the run took %v, not less than its timeout %v", o.d, want.timeout)
	}
	if len(o.requests) == 0 {
		t.Error("no model call reached the server")
	}
	if msg := fmt.Sprintf("conformance scripted %d", status); want.message && !strings.Contains(o.err.Error(), msg) {
		t.Errorf("error text %q lacks the server's message %q", o.err.Error(), msg)
	}
	switch want.typ {
	case "*agentcli.ResultError":
		var re *agentcli.ResultError
		if !errors.As(o.err, &re) {
			t.Fatalf("error %s, want %s", errSummary(o.err), want.typ)
		}
		if !errors.Is(o.err, agentcli.ErrResult) {
			t.Error("error does not match ErrResult")
		}
		if re.Backend != cli {
			t.Errorf("ResultError.Backend = %q, want %q", re.Backend, cli)
		}
		if re.Subtype != want.subtype {
			t.Errorf("ResultError.Subtype = %q, want %q", re.Subtype, want.subtype)
		}
		if re.APIStatus != want.status {
			t.Errorf("ResultError.APIStatus = %d, want %d", re.APIStatus, want.status)
		}
		if re.ExitCode != want.code {
			t.Errorf("ResultError.ExitCode = %d, want %d", re.ExitCode, want.code)
		}
		if re.Kind != nil || errors.Is(o.err, agentcli.ErrAuth) || errors.Is(o.err, agentcli.ErrRateLimited) {
			t.Errorf("ResultError.Kind = %v, want none for HTTP %d", re.Kind, status)
		}
		if o.res == nil || !o.res.IsError {
			t.Errorf("Run returned result %+v with the ResultError; want one with IsError", o.res)
		}
	case "*agentcli.ExitError":
		var ee *agentcli.ExitError
		if !errors.As(o.err, &ee) {
			t.Fatalf("error %s, want %s", errSummary(o.err), want.typ)
		}
		if !errors.Is(o.err, agentcli.ErrExit) {
			t.Error("error does not match ErrExit")
		}
		if ee.Code != want.code {
			t.Errorf("ExitError.Code = %d, want %d", ee.Code, want.code)
		}
	default:
		t.Fatalf("bad table entry %q", want.typ)
	}
}

// trickyPrompts look like flags, an end-of-options marker, a slash command
// and a file include; each must reach the model as it is.
var trickyPrompts = []struct{ name, prompt string }{
	{"dash-help", "--help"},
	{"dash-p", "-p x"},
	{"dashdash", "--"},
	{"slash-help", "/help"},
	{"at-readme", "@README.md"},
}

// testPrompts: prompts that a CLI could read as flags, commands or file
// includes reach the model verbatim.
func testPrompts(t *testing.T, c cliCase, b agentcli.Backend) {
	for _, p := range trickyPrompts {
		t.Run(p.name, func(t *testing.T) {
			e := newEnv(t, c.name, agentclitest.Turn{Text: "ok"})
			req, tag := e.request(p.prompt)
			res, _, err := run(t, b, req, tag)
			if err != nil {
				t.Fatalf("Run(%q): %s", p.prompt, errSummary(err))
			}
			if res.Text != "ok" {
				t.Errorf("Result.Text = %q, want %q", res.Text, "ok")
			}
			want, rewritten := c.rewrites[p.prompt]
			if rewritten {
				t.Logf("documented fallback: %s changes %q to %q", c.name, p.prompt, want)
			} else {
				want = p.prompt
			}
			m := e.lastMain()
			if got := m.LastUserText(); got != want {
				t.Errorf("the model saw user text %s, want %q", shorten(got), want)
			}
			if strings.Contains(string(m.Body), readmeMarker) {
				t.Errorf("the request carries README.md's content: the prompt %q was expanded", p.prompt)
			}
		})
	}
}

// testBigPrompt: a 1 MiB prompt reaches the model intact.
func testBigPrompt(t *testing.T, c cliCase, b agentcli.Backend) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "line %06d: the quick brown fox jumps over the lazy dog — ünïcödé ✓\n", i)
	}
	prompt := sb.String()[:1<<20-len("END")] + "END"
	prompt = strings.ToValidUTF8(prompt, "?")
	e := newEnv(t, c.name, agentclitest.Turn{Text: "got it"})
	req, tag := e.request(prompt)
	res, d, err := run(t, b, req, tag)
	t.Logf("run with a %d-byte prompt took %v", len(prompt), d)
	if err != nil {
		t.Fatalf("Run: %s", errSummary(err))
	}
	if res.Text != "got it" {
		t.Errorf("Result.Text = %q, want %q", res.Text, "got it")
	}
	got := e.lastMain().LastUserText()
	if got != prompt {
		i := 0
		for i < len(got) && i < len(prompt) && got[i] == prompt[i] {
			i++
		}
		t.Errorf("the model saw a %d-byte user text, want the %d-byte prompt; first difference at byte %d", len(got), len(prompt), i)
	}
}

// testSystem: the system prompt reaches the model the way the backend's
// capabilities say.
func testSystem(t *testing.T, c cliCase, b agentcli.Backend, logs *logBuffer) {
	const (
		system = "CONFORMANCE-SYSTEM: always answer in lowercase.\nSecond line with \"quotes\", \\backslashes\\ and $HOME."
		prompt = "Say hello."
	)
	e := newEnv(t, c.name, agentclitest.Turn{Text: "hello"})
	req, tag := e.request(prompt)
	req.SystemPrompt = system
	res, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("Run: %s", errSummary(err))
	}
	if res.Text != "hello" {
		t.Errorf("Result.Text = %q, want %q", res.Text, "hello")
	}
	m := e.lastMain()
	mode := b.Capabilities().SystemPrompt
	t.Logf("Capabilities().SystemPrompt = %q", mode)
	switch mode {
	case agentcli.SystemPromptAppend:
		if !strings.Contains(m.System, system) {
			t.Errorf("the request's system prompt does not contain the appended one; system = %s", shorten(m.System))
		}
		if got := m.LastUserText(); got != prompt {
			t.Errorf("user text = %s, want %q", shorten(got), prompt)
		}
	case agentcli.SystemPromptDeveloper:
		found := false
		for _, msg := range m.Messages {
			if msg.Role == "developer" && strings.Contains(msg.Text, system) {
				found = true
			}
		}
		if !found {
			t.Errorf("no developer-role message carries the system prompt; messages: %+v", m.Messages)
		}
		if got := m.LastUserText(); got != prompt {
			t.Errorf("user text = %s, want %q", shorten(got), prompt)
		}
	case agentcli.SystemPromptPrepend:
		got := m.LastUserText()
		if !strings.HasPrefix(got, system) || !strings.HasSuffix(got, prompt) {
			t.Errorf("user text = %s, want the system prompt, then the prompt %q", shorten(got), prompt)
		}
	case agentcli.SystemPromptNone:
		// The documented fallback: ignored with a warning.
		if strings.Contains(string(m.Body), "CONFORMANCE-SYSTEM") {
			t.Errorf("mode %q, but the system prompt reached the model", mode)
		}
		if !strings.Contains(logs.String(), "system prompt") {
			t.Errorf("mode %q, but no warning was logged; log:\n%s", mode, logs.String())
		}
	default:
		t.Fatalf("unknown SystemPromptMode %q", mode)
	}
}

// testModel: Request.Model reaches the model server.
func testModel(t *testing.T, c cliCase, b agentcli.Backend) {
	e := newEnv(t, c.name, agentclitest.Turn{Text: "ok"})
	req, tag := e.request("Which model are you?")
	req.Model = c.model
	if c.modelEnv != nil {
		req.Env = append(req.Env, c.modelEnv(t, e.w)...)
	}
	res, _, err := run(t, b, req, tag)
	if err != nil {
		t.Fatalf("Run: %s", errSummary(err))
	}
	if res.Text != "ok" {
		t.Errorf("Result.Text = %q, want %q", res.Text, "ok")
	}
	for _, r := range e.main() {
		if r.Model != c.atServer {
			t.Errorf("a model call asked for model %q, want %q", r.Model, c.atServer)
		}
	}
	if len(e.main()) == 0 {
		t.Errorf("no model call; requests: %s", describe(e.srv.Requests()))
	}
}

// testCancel: cancelling the context while the model stalls ends the run
// promptly with context.Canceled, and no process of the CLI survives.
func testCancel(t *testing.T, c cliCase, b agentcli.Backend) {
	e := newEnv(t, c.name, agentclitest.Turn{Stall: true})
	req, tag := e.request("Say hello, slowly.")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		evs []agentcli.Event
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		for ev, err := range b.Stream(ctx, req) {
			if err != nil {
				o.err = err
				break
			}
			o.evs = append(o.evs, ev)
		}
		done <- o
	}()
	wait := time.NewTimer(time.Minute)
	defer wait.Stop()
	for len(e.main()) == 0 {
		select {
		case o := <-done:
			t.Fatalf("the run ended before the model call: %s; requests: %s", errSummary(o.err), describe(e.srv.Requests()))
		case <-wait.C:
			cancel()
			<-done
			t.Fatalf("the model call never came; requests: %s", describe(e.srv.Requests()))
		case <-time.After(20 * time.Millisecond):
		}
	}
	alive := procsWithTag(tag)
	if len(alive) == 0 {
		t.Error("the /proc scan found no process of the running CLI: the leak check below proves nothing")
	}
	t.Logf("running: %d process(es): %s", len(alive), strings.Join(alive, "; "))
	start := time.Now()
	cancel()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(killGrace + 30*time.Second):
		t.Fatal("the run did not return within 30 s of the kill grace after cancel")
	}
	d := time.Since(start)
	t.Logf("returned %v after cancel: %s", d, errSummary(o.err))
	if left := procsWithTag(tag); len(left) > 0 {
		t.Errorf("processes still alive after the run returned:\n%s", strings.Join(left, "\n"))
	}
	if !errors.Is(o.err, context.Canceled) {
		t.Errorf("error %s does not match context.Canceled", errSummary(o.err))
	}
	if !errors.Is(o.err, agentcli.ErrCanceled) {
		t.Errorf("error %s does not match agentcli.ErrCanceled", errSummary(o.err))
	}
	var ce *agentcli.CanceledError
	if !errors.As(o.err, &ce) {
		t.Errorf("error %s is not a *agentcli.CanceledError", errSummary(o.err))
	}
	if errors.Is(o.err, agentcli.ErrTimeout) {
		t.Errorf("error %s matches ErrTimeout", errSummary(o.err))
	}
	// SIGTERM, at most killGrace, SIGKILL, reap: allow scheduling slack.
	if d > killGrace+5*time.Second {
		t.Errorf("the run took %v to return after cancel, want at most %v", d, killGrace+5*time.Second)
	}
}
