package agentcli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	_ "github.com/agentcli/agentcli/claude" // registers "claude"
)

// A program that streams an answer. Text deltas add up to the whole answer
// on every backend, so printing them prints it exactly once. Here the
// backend is agentclitest's scripted one, so the output is known; with
// agentcli.Open("claude", nil) the same loop runs Claude Code.
func Example() {
	var b agentcli.Backend = agentclitest.NewBackend(agentclitest.Reply("Hello, world!", "session-1"))
	req := &agentcli.Request{Prompt: "Say hello.", Timeout: 5 * time.Minute}
	for ev, err := range b.Stream(context.Background(), req) {
		if err != nil {
			log.Fatal(err) // typed: see ExampleResultError
		}
		switch ev.Kind {
		case agentcli.EventTextDelta:
			fmt.Print(ev.Text)
		case agentcli.EventToolUse:
			fmt.Println("tool:", ev.Tool.Name) // canonical: Bash, Read, Edit, ...
		case agentcli.EventResult:
			fmt.Println("\nsession:", ev.Result.SessionID)
		}
	}
	// Output:
	// Hello, world!
	// session: session-1
}

// Configuration from the environment (AGENT_BACKEND, BACKEND_CLI_PATH,
// BACKEND_MODEL, BACKEND_MAX_TURNS, ALLOWED_TOOLS), and what to do with the
// typed errors.
func ExampleConfigFromEnv() {
	cfg := agentcli.ConfigFromEnv(nil)
	b, err := cfg.Open(nil)
	if err != nil {
		log.Fatal(err) // e.g. unknown backend "gtp" (valid: claude, codex, gemini, opencode)
	}
	req := &agentcli.Request{Prompt: "List the failing tests.", Timeout: 10 * time.Minute}
	cfg.Apply(req, b.Capabilities())
	res, err := b.Run(context.Background(), req)
	switch {
	case errors.Is(err, agentcli.ErrSessionNotFound):
		// start a fresh session
	case errors.Is(err, agentcli.ErrTimeout), errors.Is(err, agentcli.ErrRateLimited):
		// retry later
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println(res.Text)
	}
}

// Errors are typed: match a class with errors.Is, get details with
// errors.As.
func ExampleResultError() {
	var err error = &agentcli.ResultError{Backend: "claude", APIStatus: 429, Kind: agentcli.ErrRateLimited}
	var re *agentcli.ResultError
	if errors.As(err, &re) {
		fmt.Println(re.APIStatus, errors.Is(err, agentcli.ErrRateLimited), errors.Is(err, agentcli.ErrResult))
	}
	// Output: 429 true true
}

// A request is checked before any CLI starts: an empty prompt is an
// *agentcli.RequestError naming the field.
func ExampleRequestError() {
	b, err := agentcli.Open("claude", &agentcli.Options{Path: "/bin/true"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "  "})
	var re *agentcli.RequestError
	fmt.Println(errors.As(err, &re), re.Field, errors.Is(err, agentcli.ErrBadRequest))
	// Output: true Prompt true
}

// When a backend is not linked in, the error names the blank import that is
// missing, as database/sql does for drivers.
func ExampleUnknownBackendError() {
	fmt.Println(&agentcli.UnknownBackendError{Name: "codex", Valid: []string{"claude"}})
	// Output: unknown backend "codex" (forgotten import? _ "github.com/agentcli/agentcli/codex") (valid: claude)
}

// A wire log (Request.WireLog) holds everything needed to rebuild a run's
// events: here one written by hand for a claude run, replayed without any
// CLI.
func ExampleReplay() {
	log := `{"t":"start","v":1,"backend":"claude","deltas":true}
{"t":"out","line":{"type":"system","subtype":"init","session_id":"s-1","model":"claude-test"}}
{"t":"out","line":{"type":"assistant","message":{"model":"claude-test","content":[{"type":"text","text":"Hello!"}]},"session_id":"s-1"}}
{"t":"out","line":{"type":"result","subtype":"success","is_error":false,"result":"Hello!","session_id":"s-1"}}
{"t":"exit","code":0}
`
	b, _ := agentcli.Open("claude", nil) // nothing runs: replay needs no binary
	for ev, err := range agentcli.Replay(b, strings.NewReader(log)) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(strings.TrimSpace(string(ev.Kind) + " " + ev.Text))
	}
	// Output:
	// init
	// text_delta Hello!
	// text Hello!
	// result
}

// A live session's wire log replays turn by turn: each turn's events end
// with its result (or error). Here a hand-written log of a claude session
// with one turn.
func ExampleReplay_session() {
	log := `{"t":"start","v":2,"backend":"claude","deltas":true,"live":true}
{"t":"in","text":"{\"type\":\"control_request\",\"request_id\":\"agentcli_1\",\"request\":{\"subtype\":\"initialize\"}}\n"}
{"t":"out","line":{"type":"control_response","response":{"subtype":"success","request_id":"agentcli_1","response":{}}}}
{"t":"ready"}
{"t":"turn"}
{"t":"in","text":"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"Hi\"}}\n"}
{"t":"out","line":{"type":"assistant","message":{"model":"claude-test","content":[{"type":"text","text":"Hello!"}]},"session_id":"s-1"}}
{"t":"out","line":{"type":"result","subtype":"success","is_error":false,"result":"Hello!","session_id":"s-1"}}
{"t":"close"}
{"t":"exit","code":0}
`
	b, _ := agentcli.Open("claude", nil)
	for ev, err := range agentcli.Replay(b, strings.NewReader(log)) {
		if err != nil {
			fmt.Println("error:", err)
			continue // a failed turn; the next one follows
		}
		fmt.Println(strings.TrimSpace(string(ev.Kind) + " " + ev.Text))
	}
	// Output:
	// text_delta Hello!
	// text Hello!
	// result
}

// A live session's CLI that refuses a protocol request (or breaks the
// protocol) is a *ProtocolError: it matches ErrProtocol, and the kind its
// message names.
func ExampleProtocolError() {
	var err error = &agentcli.ProtocolError{Backend: "gemini", Method: "session/load", Message: "session not found", Kind: agentcli.ErrSessionNotFound}
	var pe *agentcli.ProtocolError
	fmt.Println(errors.As(err, &pe), pe.Method, errors.Is(err, agentcli.ErrProtocol), errors.Is(err, agentcli.ErrSessionNotFound))
	fmt.Println(err)
	// Output:
	// true session/load true true
	// gemini: session/load failed (session not found): session not found
}

// Doctor reports every registered backend without making a model call:
// the CLI it would run, its version against the one agentcli was tested
// with, and which credential variables are set (by name only).
func ExampleDoctor() {
	for _, d := range agentcli.Doctor(context.Background(), nil) {
		fmt.Printf("%-8s %-7s %s (tested %s) %v %s\n", d.Backend, d.Status, d.Version, d.Tested, d.Credentials, d.Hint)
	}
}

// A host tool: a Go function the agent may call. The scripted backend
// makes the call as a CLI would, so the handler, the permission mode and
// the hooks are tested without any CLI.
func ExampleNewTool() {
	type input struct {
		City string `json:"city" jsonschema:"the city, such as Paris"`
	}
	weather := agentcli.NewTool("weather", "Today's weather in a city.", func(ctx context.Context, in input) (string, error) {
		if in.City == "" {
			return "", errors.New("no city")
		}
		return "sunny in " + in.City, nil
	})
	weather.Approved = true // runs without asking, in every mode
	fmt.Println(string(weather.InputSchema))

	b := agentclitest.NewBackend(agentclitest.Call{
		HostCalls: []agentclitest.HostCall{
			{Tool: "weather", Input: json.RawMessage(`{"city":"Paris"}`)},
			{Tool: "weather", Input: json.RawMessage(`{"city":""}`)},
		},
		Result: &agentcli.Result{Text: "done"},
	})
	_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "weather?", Tools: []agentcli.Tool{weather}})
	fmt.Println(err)
	for _, r := range b.HostResults() {
		fmt.Printf("%s -> %q (error %v)\n", r.Call.Input, r.Output, r.IsError)
	}
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"the city, such as Paris"}},"required":["city"],"additionalProperties":false}
	// <nil>
	// {"city":"Paris"} -> "sunny in Paris" (error false)
	// {"city":""} -> "error: no city" (error true)
}

// Questions from the agent reach Request.OnQuestion, whichever CLI asks.
func ExampleQuestionFunc() {
	b := agentclitest.NewBackend(agentclitest.Call{
		Questions: []agentcli.Question{{Items: []agentcli.QuestionItem{{Header: "Color", Text: "Which color?",
			Options: []agentcli.QuestionOption{{Label: "Red"}, {Label: "Blue"}}}}}},
		Result: &agentcli.Result{Text: "done"},
	})
	req := &agentcli.Request{Prompt: "paint it", Permission: agentcli.PermissionBypass,
		OnQuestion: func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
			it := q.Items[0]
			fmt.Printf("[%s] %s %d options\n", it.Header, it.Text, len(it.Options))
			return &agentcli.Answer{Answers: [][]string{{it.Options[1].Label}}}, nil
		}}
	if _, err := b.Run(context.Background(), req); err != nil {
		fmt.Println(err)
	}
	a := b.Answers()[0]
	fmt.Println(a.Answer.Answers[0][0])
	// Output:
	// [Color] Which color? 2 options
	// Blue
}

// A PreToolUse hook sees a tool call before it runs, in every permission
// mode, and may refuse it with a reason for the model.
func ExampleHooks() {
	b := agentclitest.NewBackend(agentclitest.Call{
		PreToolUse: []agentcli.ToolUse{
			{Name: agentcli.ToolNameBash, Input: json.RawMessage(`{"command":"rm -rf build"}`)},
			{Name: agentcli.ToolNameBash, Input: json.RawMessage(`{"command":"go test ./..."}`)},
		},
		Result: &agentcli.Result{Text: "done"},
	})
	req := &agentcli.Request{Prompt: "clean up", Permission: agentcli.PermissionBypass, Hooks: &agentcli.Hooks{
		PreToolUse: func(ctx context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
			if strings.Contains(string(in.Tool.Input), "rm ") {
				return agentcli.PreToolUseOutput{Deny: true, Reason: "no rm in this repository"}
			}
			return agentcli.PreToolUseOutput{}
		},
	}}
	if _, err := b.Run(context.Background(), req); err != nil {
		fmt.Println(err)
	}
	for _, d := range b.HookDecisions() {
		fmt.Printf("%s %s: deny %v %s\n", d.Tool.Name, d.Tool.Input, d.Output.Deny, d.Output.Reason)
	}
	// Output:
	// Bash {"command":"rm -rf build"}: deny true no rm in this repository
	// Bash {"command":"go test ./..."}: deny false
}

// A bot that answers each new conversation on a session started before
// the conversation arrived: the CLI's start-up is off the first answer's
// path.
func ExamplePool() {
	b := agentclitest.NewBackend(agentclitest.Reply("Hi! How can I help?", "conv-1"))
	req := &agentcli.Request{
		Permission: agentcli.PermissionAsk,
		OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
			return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "read-only bot"}
		},
	}
	pool, err := agentcli.NewPool(b, req, &agentcli.PoolOptions{Warm: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	// A conversation starts: take a ready session (the pool starts another).
	ctx := context.Background()
	s, err := pool.Take(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(ctx, "Hello")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text)
	fmt.Println("session:", res.SessionID)
	// Output:
	// Hi! How can I help?
	// session: conv-1
}
