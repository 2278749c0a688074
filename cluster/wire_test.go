package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/google/go-cmp/cmp"
)

// TestRequestFieldsCrossTheWire: every field of agentcli.Request is
// either carried by wireRequest (and comes back equal) or replaced by a
// flag the worker turns into a stand-in. A field added to Request fails
// this test until the wire carries it.
func TestRequestFieldsCrossTheWire(t *testing.T) {
	stand := map[string]bool{"OnText": true, "OnPermission": true, "WireLog": true,
		"Tools": true, "OnQuestion": true, "Hooks": true}
	// Continue is resolved in the caller, from the session store
	// (TestContinueThroughThePool): the worker resumes an id.
	refused := map[string]bool{"Continue": true}
	req := agentcli.Request{}
	v := reflect.ValueOf(&req).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if stand[f.Name] || refused[f.Name] {
			continue
		}
		fv := v.Field(i)
		switch fv.Kind() {
		case reflect.String:
			fv.SetString("x-" + f.Name)
		case reflect.Int, reflect.Int64:
			fv.SetInt(int64(7 + i))
		case reflect.Bool:
			fv.SetBool(true)
		case reflect.Float64:
			fv.SetFloat(1.25)
		case reflect.Slice:
			switch f.Type.Elem().Kind() {
			case reflect.String:
				fv.Set(reflect.ValueOf([]string{"a-" + f.Name, "b"}))
			case reflect.Uint8:
				fv.SetBytes([]byte(`{"type":"object"}`))
			case reflect.Struct:
				switch f.Type.Elem() {
				case reflect.TypeFor[agentcli.MCPServer]():
					fv.Set(reflect.ValueOf([]agentcli.MCPServer{{Name: "m", Command: "c", Args: []string{"1"},
						Env: []string{"K=v"}, Headers: map[string]string{"A": "b"}}}))
				case reflect.TypeFor[agentcli.Attachment]():
					// Loaded on the caller's side: content, never a path.
					fv.Set(reflect.ValueOf([]agentcli.Attachment{{Name: "a.png", MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")},
						{Name: "t", Data: []byte("text")}}))
				default:
					t.Fatalf("Request.%s: a slice of %v the test does not know: carry it on the wire and here", f.Name, f.Type.Elem())
				}
			default:
				t.Fatalf("Request.%s: a slice of %v the test does not know: carry it on the wire and here", f.Name, f.Type.Elem())
			}
		default:
			t.Fatalf("Request.%s: a %v the test does not know: carry it on the wire and here", f.Name, f.Type)
		}
	}
	req.OnText = func(string) {}
	req.OnPermission = func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{}
	}
	req.WireLog = &recordWriter{}
	req.Tools = []agentcli.Tool{
		{Name: "one", Description: "The first.", InputSchema: json.RawMessage(`{"type":"object"}`), Approved: true,
			Handler: func(context.Context, json.RawMessage) (string, error) { return "", nil }},
		{Name: "two", Handler: func(context.Context, json.RawMessage) (string, error) { return "", nil }},
	}
	req.OnQuestion = func(context.Context, *agentcli.Question) (*agentcli.Answer, error) { return nil, nil }
	req.Hooks = &agentcli.Hooks{
		PreToolUse: func(context.Context, *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
			return agentcli.PreToolUseOutput{}
		},
		Stop: func(context.Context, *agentcli.StopInput) agentcli.StopOutput { return agentcli.StopOutput{} },
	}

	data, err := json.Marshal(toWire(&req))
	if err != nil {
		t.Fatal(err)
	}
	var w wireRequest
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	if !w.OnText || !w.OnPermission || !w.WireLog {
		t.Errorf("callback flags lost: %+v", w)
	}
	got := w.request()
	want := req
	want.OnText, want.OnPermission, want.WireLog = nil, nil, nil
	want.Tools, want.OnQuestion, want.Hooks = nil, nil, nil
	// The stand-ins: the tools declared alike, with handlers of their
	// own; OnQuestion; the hooks that were set, and only those.
	withStandIns := got
	standIns(&withStandIns, &w, nil)
	if len(withStandIns.Tools) != 2 || withStandIns.OnQuestion == nil || withStandIns.Hooks == nil ||
		withStandIns.Hooks.PreToolUse == nil || withStandIns.Hooks.Stop == nil ||
		withStandIns.Hooks.PostToolUse != nil || withStandIns.Hooks.UserPromptSubmit != nil {
		t.Errorf("stand-ins: %+v", withStandIns)
	}
	for i, st := range withStandIns.Tools {
		o := req.Tools[i]
		if st.Name != o.Name || st.Description != o.Description || string(st.InputSchema) != string(o.InputSchema) ||
			st.Approved != o.Approved || st.Handler == nil {
			t.Errorf("tool %d after the wire: %+v, want %+v", i, st, o)
		}
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); d != "" {
		t.Errorf("request after the wire (-want +got):\n%s", d)
	}
	// A Path is the caller's to read: it never crosses.
	pr := agentcli.Request{Attachments: []agentcli.Attachment{{Path: "/etc/hostname"}}}
	if data, _ := json.Marshal(toWire(&pr)); strings.Contains(string(data), "/etc/hostname") {
		t.Errorf("a Path crossed the wire: %s", data)
	}
}

// TestErrorsCrossTheWire: the typed errors of agentcli come back with
// their type and fields; anything else keeps its message and the
// sentinels and typed errors it matched.
func TestErrorsCrossTheWire(t *testing.T) {
	cost := 0.5
	resets := time.Date(2026, 11, 26, 15, 4, 5, 0, time.UTC)
	errs := []error{
		&agentcli.RequestError{Backend: "b", Field: "Dir", Reason: "missing"},
		&agentcli.UnsupportedError{Backend: "b", Feature: "permission mode plan", Reason: "no"},
		&agentcli.BinaryError{Backend: "b", Path: "/x", Err: agentcli.ErrNotExecutable,
			Cause: &fs.PathError{Op: "fork/exec", Path: "/x", Err: syscall.ETXTBSY}, Hint: "h"},
		&agentcli.ExitError{Backend: "b", Code: -1, Stderr: "boom", Kind: agentcli.ErrRateLimited, Hint: "h"},
		&agentcli.TimeoutError{Backend: "b", Timeout: 3 * time.Second, Stderr: "tail"},
		&agentcli.CanceledError{Backend: "b", Err: context.DeadlineExceeded},
		&agentcli.ParseError{Backend: "b", Line: []byte("{oops"), Err: errors.New("unexpected end")},
		&agentcli.LineTooLongError{Limit: 10, Len: 20},
		&agentcli.NoResultError{Backend: "b", Code: 1, Stderr: "x"},
		&agentcli.ResultError{Backend: "b", Subtype: "error_max_turns", APIStatus: 529, TerminalReason: "api_error",
			Message: "overloaded", ExitCode: 1, Kind: agentcli.ErrAuth,
			Result: &agentcli.Result{Text: "partial", CostUSD: &cost, Raw: json.RawMessage(`not json`)}},
		&agentcli.UnknownBackendError{Name: "nope", Valid: []string{"claude"}},
		&WorkerLostError{Backend: "b", Worker: "w1", Started: true, Silence: time.Second, Reason: "no heartbeat"},
		&SessionNotSavedError{Backend: "b", Session: "s", Worker: "w", Err: errors.New("store down")},
		&agentcli.RateLimitError{Backend: "b", ResetsAt: resets, RetryAfter: 3 * time.Second,
			Limit: &agentcli.RateLimit{Status: agentcli.RateLimitRejected, ResetsAt: resets, Type: "five_hour", Utilization: 1},
			Err:   &agentcli.ResultError{Backend: "b", Subtype: "error", APIStatus: 429, Kind: agentcli.ErrRateLimited}},
		&agentcli.CredentialsError{Backend: "b", Variables: []string{"A_KEY", "B_KEY"}, Hint: "run `b login`"},
		&agentcli.ProtocolError{Backend: "b", Method: "session/load", Code: -32002, Message: "no such session",
			Kind: agentcli.ErrSessionNotFound},
	}
	// Every typed error of agentcli is in errs: a new one must cross too.
	covered := map[string]bool{}
	for _, e := range errs {
		covered[reflect.TypeOf(e).Elem().String()] = true
	}
	for _, name := range rootErrorTypes(t) {
		if !covered["agentcli."+name] {
			t.Errorf("agentcli.%s is not among the errors this test sends across the wire", name)
		}
	}
	for _, e := range errs {
		got := roundTrip(t, e)
		if reflect.TypeOf(got) != reflect.TypeOf(e) || got.Error() != e.Error() {
			t.Errorf("%T %q came back as %T %q", e, e, got, got)
		}
		for _, s := range sentinels {
			if errors.Is(e, s.err) != errors.Is(got, s.err) {
				t.Errorf("%T: errors.Is(%s) = %v before the wire, %v after", e, s.name, errors.Is(e, s.err), errors.Is(got, s.err))
			}
		}
		if agentcli.IsTransient(e) != agentcli.IsTransient(got) {
			t.Errorf("%T: IsTransient changed", e)
		}
		if d := cmp.Diff(e, got, cmp.Comparer(func(a, b error) bool {
			return a == b || a != nil && b != nil && a.Error() == b.Error()
		})); d != "" && !isUncomparable(e) {
			t.Errorf("%T fields (-sent +received):\n%s", e, d)
		}
	}
	// WithRetry waits for the reset a worker's CLI reported.
	if at, ok := agentcli.ResetTime(roundTrip(t, fmt.Errorf("run: %w", errs[len(errs)-3]))); !ok || !at.Equal(resets) {
		t.Errorf("ResetTime after the wire = %v, %v; want %v", at, ok, resets)
	}
	var re *agentcli.ResultError
	if got := roundTrip(t, errs[9]); !errors.As(got, &re) || re.Result.Text != "partial" || *re.Result.CostUSD != 0.5 ||
		string(re.Result.Raw) != "not json" {
		t.Errorf("ResultError.Result after the wire: %+v", re.Result)
	}

	// An error type of its own (like a backend's unexported ones).
	inner := &agentcli.ExitError{Backend: "b", Code: 2, Kind: agentcli.ErrSessionNotFound}
	own := fmt.Errorf("session closed: %w", errors.Join(agentcli.ErrSessionClosed, inner))
	got := roundTrip(t, own)
	var ee *agentcli.ExitError
	if got.Error() != own.Error() || !errors.Is(got, agentcli.ErrSessionClosed) ||
		!errors.Is(got, agentcli.ErrSessionNotFound) || !errors.As(got, &ee) || ee.Code != 2 {
		t.Errorf("wrapped error came back as %#v", got)
	}
	if roundTrip(t, nil) != nil {
		t.Error("nil error came back non-nil")
	}
}

// rootErrorTypes lists the exported struct types named *Error declared in
// the agentcli package's non-test files.
func rootErrorTypes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, sp := range g.Specs {
				ts := sp.(*ast.TypeSpec)
				if _, isStruct := ts.Type.(*ast.StructType); isStruct && ts.Name.IsExported() && strings.HasSuffix(ts.Name.Name, "Error") {
					names = append(names, ts.Name.Name)
				}
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("found only %d error types in ../*.go: %v", len(names), names)
	}
	return names
}

// isUncomparable: errors whose fields hold what the wire keeps only as a
// message (an *fs.PathError cause) or a Result compared above.
func isUncomparable(e error) bool {
	switch e.(type) {
	case *agentcli.BinaryError, *agentcli.ResultError, *agentcli.ParseError, *SessionNotSavedError:
		return true
	}
	return false
}

func roundTrip(t *testing.T, err error) error {
	t.Helper()
	data, e := json.Marshal(encodeError(err))
	if e != nil {
		t.Fatal(e)
	}
	var w *wireError
	if e := json.Unmarshal(data, &w); e != nil {
		t.Fatal(e)
	}
	return decodeError(w)
}

// TestEventsCrossTheWire: events whose Raw or tool input is not JSON, a
// notice's error, a result's structured output and OnText pieces come
// back as they were.
func TestEventsCrossTheWire(t *testing.T) {
	code := 3
	evs := []agentcli.Event{
		{Kind: agentcli.EventNotice, Text: "not json", Raw: json.RawMessage("plain text line\xff"),
			Err: &agentcli.ParseError{Backend: "b", Line: []byte("plain"), Err: errors.New("x")}},
		{Kind: agentcli.EventToolUse, Tool: &agentcli.ToolUse{ID: "1", Name: "Bash", RawName: "bash",
			Kind: agentcli.ToolKind("execute"), Input: json.RawMessage("{broken")}, Raw: json.RawMessage(`{"a":1}`)},
		{Kind: agentcli.EventToolResult, ToolResult: &agentcli.ToolResult{ID: "1", Output: "out", IsError: true, ExitCode: &code}},
		{Kind: agentcli.EventResult, SessionID: "s", Result: &agentcli.Result{Text: "t", SessionID: "s",
			StructuredOutput: json.RawMessage(`{"ok":true}`), Duration: time.Second, Raw: json.RawMessage(`{"type":"result"}`)}},
		{Kind: agentcli.EventTextDelta, Text: "héllo", Subagent: "task-1"},
	}
	for _, ev := range evs {
		for _, texts := range [][]string{nil, {ev.Text}, {"a", "b"}} {
			data, err := encodeEvent(ev, texts)
			if err != nil {
				t.Fatal(err)
			}
			got, w, err := decodeEvent(data)
			if err != nil {
				t.Fatal(err)
			}
			opt := cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error()) })
			if d := cmp.Diff(ev, got, opt); d != "" {
				t.Errorf("%s event (-sent +received):\n%s", ev.Kind, d)
			}
			if d := cmp.Diff(texts, w.onTexts(got)); d != "" && len(texts) > 0 {
				t.Errorf("OnText pieces (-sent +received):\n%s", d)
			}
		}
	}
}

// FuzzFrames: whatever bytes a peer sends, parsing a frame and decoding
// its payload as any message neither panics nor loops.
func FuzzFrames(f *testing.F) {
	ev, _ := encodeEvent(agentcli.Event{Kind: agentcli.EventText, Text: "x"}, []string{"x"})
	f.Add(newFrame(kindEvent, 1, ev))
	f.Add(newFrame(kindAck, 0, []byte{1, 2, 0}))
	f.Add([]byte{kindEnd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add(newFrame(kindPermit, 3, []byte(`{"id":1,"req":{"tool":{"input":"e30="}},"input_b":"AA=="}`)))
	f.Add(newFrame(kindCall, 4, []byte(`{"id":2,"kind":"tool","tool":"echo","body":{"a":1}}`)))
	f.Add(newFrame(kindCall, 5, []byte(`{"id":3,"kind":"pre_tool_use","body":{"tool":{"id":"t"}},"input_b":"AA=="}`)))
	f.Add(newFrame(kindCall, 6, []byte(`{"id":4,"kind":"question","body":{"items":[{"text":"?"}]}}`)))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, payload, err := parseFrame(b)
		if err != nil {
			return
		}
		_, _, _ = decodeEvent(payload)
		_, _ = unmarshalPermit(payload)
		_, _ = unmarshalDecision(payload)
		_, _ = parseReply(b)
		var wc wireCall
		if json.Unmarshal(payload, &wc) == nil {
			// A call of any kind, with any input, runs the caller's
			// function or none, and never panics.
			if fn := fuzzCall.function(&wc); fn != nil {
				_ = fn(context.Background())
			}
		}
		var e wireEnd
		if json.Unmarshal(payload, &e) == nil {
			_ = decodeError(e.Err)
		}
		o := &outbox{next: 5, room: make(chan struct{}, 1), dead: make(chan struct{})}
		o.ack(payload)
		if o.recv > 4 || o.consumed > o.recv {
			t.Fatalf("ack moved the window past what was sent: recv %d consumed %d", o.recv, o.consumed)
		}
	})
}

// fuzzCall is a caller with every kind of function, for FuzzFrames.
var fuzzCall = &call{req: &agentcli.Request{
	Tools: []agentcli.Tool{{Name: "echo", Handler: func(_ context.Context, in json.RawMessage) (string, error) { return string(in), nil }}},
	OnQuestion: func(_ context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
		return &agentcli.Answer{Answers: [][]string{{fmt.Sprint(len(q.Items))}}}, nil
	},
	Hooks: &agentcli.Hooks{
		PreToolUse: func(_ context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
			return agentcli.PreToolUseOutput{Input: in.Tool.Input}
		},
		PostToolUse: func(_ context.Context, in *agentcli.PostToolUseInput) agentcli.PostToolUseOutput {
			return agentcli.PostToolUseOutput{Context: in.Result.Output}
		},
		UserPromptSubmit: func(_ context.Context, in *agentcli.UserPromptSubmitInput) agentcli.UserPromptSubmitOutput {
			return agentcli.UserPromptSubmitOutput{Context: in.Prompt}
		},
		Stop: func(_ context.Context, in *agentcli.StopInput) agentcli.StopOutput {
			return agentcli.StopOutput{Continue: in.Text}
		},
	},
}}

// TestLocalOnlyRefused: the pool offers what its workers' backend offers
// of host tools, questions and hooks (their functions run in the caller,
// see TestCallbacksAcrossTheWire), of forking and of choosing session ids
// (TestForkAndNewIDThroughThePool); it continues and lists sessions from
// its own store wherever the workers' backend resumes
// (TestContinueThroughThePool); and it checks here what of a host tool
// does not cross the wire (its handler). It reports the attachments the
// workers' backend takes, which it carries. A job with host tools,
// OnQuestion, hooks, ForkSession or NewSessionID is sent as protocol
// version 2, which a worker of version 1 refuses rather than running it
// without them; any other job as version 1.
func TestLocalOnlyRefused(t *testing.T) {
	hooks := agentcli.HookSupport{PreToolUse: agentcli.HookAll, Stop: true}
	all := agentcli.SessionModes{OneShot: true, Live: true}
	b := &Backend{opts: Options{Backend: "scripted", Capabilities: &agentcli.Capabilities{HostTools: true, Questions: true,
		Hooks: hooks, Attachments: []agentcli.AttachmentKind{agentcli.AttachmentImage},
		ForkSession: all, NewSessionID: all, Resume: true, Sessions: true}}}
	if c := b.Capabilities(); !c.HostTools || !c.Questions || c.Hooks != hooks || c.ForkSession != all || c.NewSessionID != all {
		t.Errorf("Capabilities %+v do not offer the workers' host tools, questions, hooks, forks and chosen ids", c)
	}
	if c := b.Capabilities(); c.ContinueSession != all || !c.ListSessions {
		t.Errorf("Capabilities %+v do not offer continuing and listing where the workers resume", c)
	}
	if c := b.Capabilities(); len(c.Attachments) != 1 || c.Attachments[0] != agentcli.AttachmentImage {
		t.Errorf("Capabilities().Attachments = %v, want the workers' [image]", c.Attachments)
	}
	resumeless := &Backend{opts: Options{Backend: "scripted", Capabilities: &agentcli.Capabilities{Sessions: true}}}
	if c := resumeless.Capabilities(); c.ContinueSession != (agentcli.SessionModes{}) {
		t.Errorf("Capabilities %+v offer continuing where the workers do not resume", c)
	}
	noSchema := agentcli.NewTool("ch", "No schema.", func(context.Context, chan int) (string, error) { return "", nil })
	for field, tool := range map[string]agentcli.Tool{
		"Tools[0].Handler": {Name: "nohandler"},
		"Tools[0]":         noSchema,
	} {
		err := b.checkLocalOnly(&agentcli.Request{Prompt: "p", Tools: []agentcli.Tool{tool}})
		var re *agentcli.RequestError
		if !errors.As(err, &re) || re.Field != field {
			t.Errorf("tool %s: %v, want an *agentcli.RequestError on %s", tool.Name, err, field)
		}
	}
	tool := agentcli.NewTool("now", "The time.", func(context.Context, struct{}) (string, error) { return "t", nil })
	onQ := func(context.Context, *agentcli.Question) (*agentcli.Answer, error) { return nil, nil }
	for name, req := range map[string]*agentcli.Request{
		"plain":        {Prompt: "p"},
		"Tools":        {Prompt: "p", Tools: []agentcli.Tool{tool}},
		"OnQuestion":   {Prompt: "p", OnQuestion: onQ},
		"Hooks":        {Prompt: "p", Hooks: &agentcli.Hooks{}},
		"ForkSession":  {Prompt: "p", SessionID: "s", ForkSession: true},
		"NewSessionID": {Prompt: "p", NewSessionID: "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"},
	} {
		if err := b.checkLocalOnly(req); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		want := protocolVersion
		if name == "plain" {
			want = protocolVersionV1
		}
		if v := jobVersion(toWire(req)); v != want {
			t.Errorf("%s: sent as version %d, want %d", name, v, want)
		}
	}
}
