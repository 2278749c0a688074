package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// recorder records what the caller's functions saw, in the caller's
// process.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	r.log = append(r.log, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.log, "\n")
}

// callerFunctions returns host tools, an OnQuestion and hooks that record
// their calls in rec.
func callerFunctions(rec *recorder) ([]agentcli.Tool, agentcli.QuestionFunc, *agentcli.Hooks) {
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	tools := []agentcli.Tool{
		agentcli.NewTool("add", "Adds two numbers.", func(_ context.Context, in addIn) (string, error) {
			rec.add("add %d %d", in.A, in.B)
			return fmt.Sprint(in.A + in.B), nil
		}),
		{Name: "fails", Description: "Always fails.", Approved: true, Handler: func(context.Context, json.RawMessage) (string, error) {
			rec.add("fails")
			return "", errors.New("disk full")
		}},
		{Name: "panics", Handler: func(context.Context, json.RawMessage) (string, error) {
			rec.add("panics")
			panic("boom")
		}},
	}
	onQ := func(_ context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
		rec.add("question %s %q", q.ID, q.Items[0].Text)
		if q.Items[0].Text == "Which color?" {
			return &agentcli.Answer{Answers: [][]string{{"blue"}}}, nil
		}
		return nil, errors.New("no idea") // told to the model as no answer
	}
	hooks := &agentcli.Hooks{
		PreToolUse: func(_ context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
			rec.add("pre %s %s %s", in.Tool.ID, in.Tool.Name, in.Tool.Input)
			switch in.Tool.ID {
			case "deny":
				return agentcli.PreToolUseOutput{Deny: true, Reason: "not today"}
			case "rewrite":
				return agentcli.PreToolUseOutput{Input: json.RawMessage(`{"command":"ls"}`)}
			}
			return agentcli.PreToolUseOutput{}
		},
		PostToolUse: func(_ context.Context, in *agentcli.PostToolUseInput) agentcli.PostToolUseOutput {
			rec.add("post %s %q", in.Tool.ID, in.Result.Output)
			return agentcli.PostToolUseOutput{}
		},
		UserPromptSubmit: func(_ context.Context, in *agentcli.UserPromptSubmitInput) agentcli.UserPromptSubmitOutput {
			rec.add("prompt %q", in.Prompt)
			return agentcli.UserPromptSubmitOutput{}
		},
		Stop: func(_ context.Context, in *agentcli.StopInput) agentcli.StopOutput {
			rec.add("stop %q", in.Text)
			return agentcli.StopOutput{}
		},
	}
	return tools, onQ, hooks
}

// TestCallbacksAcrossTheWire: a run's host tools, OnQuestion and hooks
// run in the caller's process; the worker's backend gets what they
// returned, worded as a local backend words it (a tool's error, a panic,
// a question not answered, a refusal and a rewrite by PreToolUse), and
// the pool's Capabilities offer them.
func TestCallbacksAcrossTheWire(t *testing.T) {
	n := startNATS(t)
	call := agentclitest.Reply("done", "s")
	call.PreToolUse = []agentcli.ToolUse{
		{ID: "deny", Name: "Bash", Input: json.RawMessage(`{"command":"rm -rf /"}`)},
		{ID: "rewrite", Name: "Bash", Input: json.RawMessage(`{"command":"rm x"}`)},
	}
	call.Questions = []agentcli.Question{
		{ID: "q1", Items: []agentcli.QuestionItem{{Text: "Which color?", Options: []agentcli.QuestionOption{{Label: "blue"}, {Label: "red"}}}}},
		{ID: "q2", Items: []agentcli.QuestionItem{{Text: "Why?"}}},
	}
	call.HostCalls = []agentclitest.HostCall{
		{ID: "h1", Tool: "add", Input: json.RawMessage(`{"a":2,"b":3}`)},
		{ID: "h2", Tool: "fails"},
		{ID: "h3", Tool: "panics"},
		{ID: "h4", Tool: "add", Input: json.RawMessage(`{"a":"two"}`)},
	}
	local := scripted(call, hostCaps)
	startWorker(t, n, local, looseWorkerOptions())
	b := newPoolBackend(t, n, looseOptions())
	waitCaps(t, b, func(c agentcli.Capabilities) bool { return c.HostTools && c.Questions && c.Hooks.PreToolUse != "" })

	rec := &recorder{}
	tools, onQ, hooks := callerFunctions(rec)
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "go", Permission: agentcli.PermissionBypass,
		Tools: tools, OnQuestion: onQ, Hooks: hooks})
	if err != nil || res.Text != "done" {
		t.Fatalf("Run = %+v, %v", res, err)
	}

	want := []string{
		`prompt "go"`,
		`pre deny Bash {"command":"rm -rf /"}`,
		`pre rewrite Bash {"command":"rm x"}`,
		`question q1 "Which color?"`,
		`question q2 "Why?"`,
		`pre h1 add {"a":2,"b":3}`,
		`add 2 3`,
		`post h1 "5"`,
		`pre h2 fails {}`,
		`fails`,
		`post h2 "error: disk full"`,
		`pre h3 panics {}`,
		`panics`,
		`post h3 "error: the tool panics failed (it panicked)"`,
		`pre h4 add {"a":"two"}`,
	}
	got := rec.String()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("the caller's functions did not see %s; they saw:\n%s", w, got)
		}
	}
	if !strings.Contains(got, `stop "done"`) {
		t.Errorf("Stop was not called with the result; calls:\n%s", got)
	}

	hd := local.HookDecisions()
	if len(hd) < 2 || !hd[0].Output.Deny || hd[0].Output.Reason != "not today" ||
		hd[1].Output.Deny || string(hd[1].Output.Input) != `{"command":"ls"}` {
		t.Errorf("PreToolUse decisions at the worker: %+v", hd)
	}
	ans := local.Answers()
	if len(ans) != 2 || ans[0].Answer == nil || len(ans[0].Answer.Answers) != 1 || ans[0].Answer.Answers[0][0] != "blue" ||
		ans[1].Answer != nil || ans[1].Message != agentcli.NoAnswerMessage {
		t.Errorf("answers at the worker: %+v", ans)
	}
	hr := local.HostResults()
	wantHR := []struct {
		out   string
		isErr bool
	}{{"5", false}, {"error: disk full", true}, {"error: the tool panics failed (it panicked)", true}, {"error: invalid input", true}}
	if len(hr) != len(wantHR) {
		t.Fatalf("host results at the worker: %+v", hr)
	}
	for i, w := range wantHR {
		if !strings.HasPrefix(hr[i].Output, w.out) || hr[i].IsError != w.isErr {
			t.Errorf("host result %d = %q (error %v), want %q… (error %v)", i, hr[i].Output, hr[i].IsError, w.out, w.isErr)
		}
	}
	reqs := local.Requests()
	if len(reqs) != 1 || len(reqs[0].Tools) != 3 || reqs[0].Tools[0].Name != "add" || !reqs[0].Tools[1].Approved ||
		!strings.Contains(string(reqs[0].Tools[0].InputSchema), `"a"`) || reqs[0].Tools[1].Description != "Always fails." {
		t.Errorf("the worker's backend got tools %+v", reqs[0].Tools)
	}
}

// hostCaps are the capabilities of a scripted backend with host tools,
// questions and every hook.
var hostCaps = agentcli.Capabilities{Sessions: true, HostTools: true, Questions: true,
	PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny},
	Hooks: agentcli.HookSupport{PreToolUse: agentcli.HookAll, DenyReason: true, Rewrite: true, PostToolUse: true,
		PostOutput: true, UserPromptSubmit: true, Stop: true}}

// waitCaps waits until the pool's Capabilities (from a worker's
// registration) satisfy ok.
func waitCaps(t *testing.T, b *Backend, ok func(agentcli.Capabilities) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(b.Capabilities()) {
		if time.Now().After(deadline) {
			t.Fatalf("Capabilities = %+v", b.Capabilities())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCallbackDeadlines: a question and a PreToolUse hook that do not
// answer within PermissionTimeout see their context end in the caller,
// and the worker's backend answers as it does locally (no answer; the
// call refused); a host tool's call has no deadline but the run's, and
// its context in the caller ends when the run is cancelled.
func TestCallbackDeadlines(t *testing.T) {
	n := startNATS(t)
	local := agentclitest.NewBackend()
	startWorker(t, n, local, looseWorkerOptions())
	b := newPoolBackend(t, n, looseOptions())
	ctx := context.Background()

	ended := make(chan string, 4)
	slowQ := func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
		<-ctx.Done()
		ended <- "question"
		return &agentcli.Answer{Answers: [][]string{{"late"}}}, nil
	}
	slowPre := func(ctx context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
		<-ctx.Done()
		ended <- "pre"
		return agentcli.PreToolUseOutput{}
	}
	call := agentclitest.Reply("done", "s")
	call.PreToolUse = []agentcli.ToolUse{{ID: "p1", Name: "Bash"}}
	call.Questions = []agentcli.Question{{ID: "q1", Items: []agentcli.QuestionItem{{Text: "Now?"}}}}
	local.Push(call)
	start := time.Now()
	res, err := b.Run(ctx, &agentcli.Request{Prompt: "go", Permission: agentcli.PermissionBypass, PermissionTimeout: 300 * time.Millisecond,
		OnQuestion: slowQ, Hooks: &agentcli.Hooks{PreToolUse: slowPre}})
	if err != nil || res.Text != "done" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the run took %v: the deadlines did not hold", d)
	}
	for range 2 {
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatal("a late function's context did not end")
		}
	}
	if hd := local.HookDecisions(); len(hd) != 1 || !hd[0].Output.Deny {
		t.Errorf("PreToolUse at the worker: %+v, want the call refused", hd)
	}
	if ans := local.Answers(); len(ans) != 1 || ans[0].Answer != nil || ans[0].Message != agentcli.NoAnswerMessage {
		t.Errorf("answers at the worker: %+v", ans)
	}

	// A host tool's call waits as long as the run; cancelling the run
	// ends its context in the caller.
	started := make(chan struct{})
	tool := agentcli.Tool{Name: "build", Approved: true, Handler: func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-ctx.Done()
		ended <- "tool"
		return "", ctx.Err()
	}}
	hc := agentclitest.Reply("built", "s")
	hc.HostCalls = []agentclitest.HostCall{{Tool: "build"}}
	local.Push(hc)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := b.Run(rctx, &agentcli.Request{Prompt: "build", Permission: agentcli.PermissionBypass,
			PermissionTimeout: 100 * time.Millisecond, Tools: []agentcli.Tool{tool}})
		done <- err
	}()
	<-started
	time.Sleep(500 * time.Millisecond) // well past PermissionTimeout: no deadline applies
	select {
	case what := <-ended:
		t.Fatalf("%s's context ended before the run was cancelled", what)
	default:
	}
	cancel()
	select {
	case what := <-ended:
		if what != "tool" {
			t.Fatalf("ended: %s", what)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the tool's context did not end when the run was cancelled")
	}
	if err := <-done; !errors.Is(err, agentcli.ErrCanceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

// TestLargeToolOutput: a host tool's output too large for a NATS message
// reaches the worker's backend whole, through the object store.
func TestLargeToolOutput(t *testing.T) {
	n := startNATS(t) // 1 MiB messages
	big := strings.Repeat("0123456789abcdef", 3<<20/16)
	call := agentclitest.Reply("read it", "s")
	call.HostCalls = []agentclitest.HostCall{{Tool: "dump"}}
	local := scripted(call, agentcli.Capabilities{})
	// Megabytes through a worker, a caller and a server in one process
	// under the race detector, on a loaded machine, can starve the
	// heartbeats: a realistic silence allowance, as TestLargeMessages.
	startWorker(t, n, local, looseWorkerOptions())
	b := newPoolBackend(t, n, looseOptions())
	tool := agentcli.Tool{Name: "dump", Approved: true, Handler: func(context.Context, json.RawMessage) (string, error) { return big, nil }}
	// A lost return would leave the call waiting as long as the run.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := b.Run(ctx, &agentcli.Request{Prompt: "go", Permission: agentcli.PermissionBypass, Tools: []agentcli.Tool{tool}}); err != nil {
		t.Fatal(err)
	}
	if hr := local.HostResults(); len(hr) != 1 || hr[0].Output != big || hr[0].IsError {
		if len(hr) == 1 {
			t.Fatalf("the worker got %d bytes (error %v), want %d", len(hr[0].Output), hr[0].IsError, len(big))
		}
		t.Fatalf("host results: %d", len(hr))
	}
}

// TestLiveSessionHostCallbacks: a live session's host tools, OnQuestion
// and hooks run in the caller on every turn (UserPromptSubmit with each
// turn's prompt).
func TestLiveSessionHostCallbacks(t *testing.T) {
	n := startNATS(t)
	local := agentclitest.NewBackend()
	startWorker(t, n, local, looseWorkerOptions())
	b := newPoolBackend(t, n, looseOptions())
	ctx := context.Background()
	rec := &recorder{}
	tools, onQ, hooks := callerFunctions(rec)
	s, err := b.StartSession(ctx, &agentcli.Request{Permission: agentcli.PermissionBypass, Tools: tools, OnQuestion: onQ, Hooks: hooks})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	one := agentclitest.Reply("one", "sid")
	one.HostCalls = []agentclitest.HostCall{{ID: "h1", Tool: "add", Input: json.RawMessage(`{"a":1,"b":1}`)}}
	two := agentclitest.Reply("two", "sid")
	two.Questions = []agentcli.Question{{ID: "q1", Items: []agentcli.QuestionItem{{Text: "Which color?"}}}}
	local.Push(one, two)
	for _, p := range []string{"first", "second"} {
		if _, err := s.Run(ctx, p); err != nil {
			t.Fatalf("turn %q: %v", p, err)
		}
	}
	got := rec.String()
	for _, w := range []string{`prompt "first"`, `add 1 1`, `post h1 "2"`, `stop "one"`, `prompt "second"`, `question q1 "Which color?"`, `stop "two"`} {
		if !strings.Contains(got, w) {
			t.Errorf("the caller's functions did not see %s; they saw:\n%s", w, got)
		}
	}
	if hr := local.HostResults(); len(hr) != 1 || hr[0].Output != "2" {
		t.Errorf("host results at the worker: %+v", hr)
	}
	if ans := local.Answers(); len(ans) != 1 || ans[0].Answer == nil || ans[0].Answer.Answers[0][0] != "blue" {
		t.Errorf("answers at the worker: %+v", ans)
	}
}

// TestStandInsMeetFunctions: the worker's stand-ins and the caller's
// functions, joined by a relay that passes each call and return through
// JSON as the wire does: tool inputs that are not JSON (a CLI's broken
// input seen by a hook, a hook's rewrite that is not JSON) arrive as the
// bytes they were, for the worker's backend to judge as it judges local
// hooks; a failed function, or none, gives the worker's failure answer.
func TestStandInsMeetFunctions(t *testing.T) {
	var sawInput string
	c := &call{req: &agentcli.Request{
		Tools: []agentcli.Tool{{Name: "echo", Handler: func(_ context.Context, in json.RawMessage) (string, error) { return "got " + string(in), nil }}},
		Hooks: &agentcli.Hooks{
			PreToolUse: func(_ context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
				sawInput = string(in.Tool.Input)
				return agentcli.PreToolUseOutput{Input: json.RawMessage(`{"broken`)}
			},
			Stop: func(context.Context, *agentcli.StopInput) agentcli.StopOutput { panic("boom") },
		},
	}}
	relay := func(ctx context.Context, wc wireCall) (wireReturn, bool) {
		b, err := json.Marshal(wc)
		if err != nil {
			t.Fatalf("call not encodable: %v", err)
		}
		var got wireCall
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		f := c.function(&got)
		if f == nil {
			return wireReturn{Failed: true}, true
		}
		b, err = json.Marshal(f(ctx))
		if err != nil {
			t.Fatalf("return not encodable: %v", err)
		}
		var r wireReturn
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r, true
	}
	var req agentcli.Request
	standIns(&req, &wireRequest{Tools: []wireTool{{Name: "echo"}, {Name: "gone"}}, OnQuestion: true,
		Hooks: &wireHooks{PreToolUse: true, Stop: true, PostToolUse: true}}, relay)
	ctx := context.Background()
	out := req.Hooks.PreToolUse(ctx, &agentcli.PreToolUseInput{Tool: agentcli.ToolUse{ID: "t", Input: json.RawMessage("{not json")}})
	if sawInput != "{not json" || out.Deny || string(out.Input) != `{"broken` {
		t.Errorf("PreToolUse: the hook saw %q and answered %+v", sawInput, out)
	}
	if text, err := req.Tools[0].Handler(ctx, json.RawMessage(`{"a":1}`)); err != nil || text != `got {"a":1}` {
		t.Errorf("echo = %q, %v", text, err)
	}
	if _, err := req.Tools[1].Handler(ctx, json.RawMessage(`{}`)); err == nil {
		t.Error("a tool the caller does not have: no error")
	}
	if a, err := req.OnQuestion(ctx, &agentcli.Question{Items: []agentcli.QuestionItem{{Text: "?"}}}); a != nil || err == nil {
		t.Errorf("a question without OnQuestion at the caller = %+v, %v; want no answer", a, err)
	}
	if o := req.Hooks.Stop(ctx, &agentcli.StopInput{Text: "x"}); o != (agentcli.StopOutput{}) {
		t.Errorf("a panicking Stop = %+v, want the zero output", o)
	}
	if o := req.Hooks.PostToolUse(ctx, &agentcli.PostToolUseInput{}); o != (agentcli.PostToolUseOutput{}) {
		t.Errorf("a PostToolUse the caller does not have = %+v", o)
	}
	// A PreToolUse that fails is a refusal.
	c.req.Hooks.PreToolUse = func(context.Context, *agentcli.PreToolUseInput) agentcli.PreToolUseOutput { panic("boom") }
	if out := req.Hooks.PreToolUse(ctx, &agentcli.PreToolUseInput{}); !out.Deny || out.Reason != hookNoAnswer {
		t.Errorf("a panicking PreToolUse = %+v, want a refusal", out)
	}
}
