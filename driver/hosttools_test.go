package driver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostBackend is a backend with host tools and questions, for attachHost.
func hostBackend(questions bool) *Backend {
	spec := &Spec{Name: "fake", Caps: agentcli.Capabilities{HostTools: true, Questions: true, MCP: true, ToolFilter: true, PermissionModes: PermissionModes}}
	if questions {
		spec.Questions = func(*agentcli.Request) bool { return true }
	}
	return &Backend{spec: spec, opts: defaults(nil)}
}

// attach prepares a run of req with host tools, as prepareRun does.
func attach(t *testing.T, b *Backend, req *agentcli.Request) *Run {
	t.Helper()
	if err := CheckRequest(b.spec.Name, b.spec.Caps, req, true); err != nil {
		t.Fatalf("CheckRequest: %v", err)
	}
	c := *req
	if c.Permission == "" {
		c.Permission = Mode(req)
	}
	r := &Run{Req: &c, Logger: b.opts.Logger}
	if err := b.attachHost(r); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Cleanup)
	return r
}

// bearer adds an Authorization header to every request.
type bearer struct{ value string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", b.value)
	return http.DefaultTransport.RoundTrip(r)
}

// connect connects an MCP client to the run's host server, with auth as
// the Authorization header.
func connect(t *testing.T, s agentcli.MCPServer, auth string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &http.Client{Transport: bearer{auth}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// callText calls tool and returns its text and error flag.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, ""), res.IsError
}

type zoneIn struct {
	Zone string `json:"zone"`
}

func testTools(calls *[]string, mu *sync.Mutex) []agentcli.Tool {
	add := func(s string) {
		mu.Lock()
		*calls = append(*calls, s)
		mu.Unlock()
	}
	return []agentcli.Tool{
		agentcli.NewTool("now", "the time", func(ctx context.Context, in zoneIn) (string, error) {
			add("now:" + in.Zone)
			return "it is noon in " + in.Zone, nil
		}),
		agentcli.NewTool("fail", "fails", func(ctx context.Context, in struct{}) (string, error) {
			add("fail")
			return "", errors.New("boom")
		}),
		agentcli.NewTool("panics", "panics", func(ctx context.Context, in struct{}) (string, error) {
			add("panics")
			panic("oops")
		}),
	}
}

func TestHostToolsServe(t *testing.T) {
	var calls []string
	var mu sync.Mutex
	req := &agentcli.Request{Prompt: "p", Permission: agentcli.PermissionBypass, Tools: testTools(&calls, &mu),
		DisallowedTools: []string{"Bash", "mcp__agentcli__panics"}}
	r := attach(t, hostBackend(false), req)
	h := r.HostTools()
	if h == nil {
		t.Fatal("no host tools")
	}
	if got := r.Req.DisallowedTools; !slices.Equal(got, []string{"Bash"}) {
		t.Errorf("DisallowedTools handed on %v, want [Bash]", got)
	}
	if n := len(r.Req.MCPServers); n != 1 || r.Req.MCPServers[0].Name != agentcli.HostServerName {
		t.Fatalf("MCP servers %+v", r.Req.MCPServers)
	}
	if h.Listed() {
		t.Error("listed before anything connected")
	}
	// The wrong secret: refused, counted, and the tools are not listed.
	if _, err := connect(t, h.Server(), "Bearer wrong"); err == nil {
		t.Error("a client with the wrong secret connected")
	}
	if h.srv.Rejected() == 0 {
		t.Error("no rejected request counted")
	}
	var got error
	h.Wrap(func(ev agentcli.Event, err error) bool { got = err; return true })(agentcli.Event{Kind: agentcli.EventResult, Result: &agentcli.Result{}}, nil)
	var pe *agentcli.ProtocolError
	if !errors.As(got, &pe) || !strings.Contains(pe.Message, "never listed") || !strings.Contains(pe.Message, "refused") {
		t.Errorf("a result before the tools were listed: %v, want a ProtocolError", got)
	}

	cs, err := connect(t, h.Server(), h.Server().Headers["Authorization"])
	if err != nil {
		t.Fatal(err)
	}
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		if tool.Meta["anthropic/alwaysLoad"] != true {
			t.Errorf("%s lacks _meta anthropic/alwaysLoad", tool.Name)
		}
	}
	if !slices.Equal(names, []string{"fail", "now"}) && !slices.Equal(names, []string{"now", "fail"}) {
		t.Errorf("tools %v, want now and fail (panics is disallowed)", names)
	}
	if !h.Listed() {
		t.Error("not listed after tools/list")
	}
	if text, isErr := callText(t, cs, "now", map[string]any{"zone": "UTC"}); text != "it is noon in UTC" || isErr {
		t.Errorf("now: %q, %v", text, isErr)
	}
	if text, isErr := callText(t, cs, "now", map[string]any{"zone": 7}); !isErr || !strings.Contains(text, "invalid input") {
		t.Errorf("now with a number for the zone: %q, %v; want the schema's error", text, isErr)
	}
	if text, isErr := callText(t, cs, "fail", map[string]any{}); text != "error: boom" || !isErr {
		t.Errorf("fail: %q, %v", text, isErr)
	}
	mu.Lock()
	if !slices.Equal(calls, []string{"now:UTC", "fail"}) {
		t.Errorf("handler calls %v", calls)
	}
	mu.Unlock()

	// Events: a use of a host tool is named after the tool.
	var evs []agentcli.Event
	y := h.Wrap(func(ev agentcli.Event, err error) bool { evs = append(evs, ev); return err == nil })
	y(agentcli.Event{Kind: agentcli.EventToolUse, Tool: &agentcli.ToolUse{ID: "1", Name: "mcp__agentcli__now", RawName: "mcp__agentcli__now"}}, nil)
	y(agentcli.Event{Kind: agentcli.EventToolUse, Tool: &agentcli.ToolUse{ID: "2", Name: "agentcli_fail", RawName: "agentcli_fail"}}, nil)
	y(agentcli.Event{Kind: agentcli.EventToolUse, Tool: &agentcli.ToolUse{ID: "3", Name: "mcp_other_now", RawName: "mcp_other_now", Kind: agentcli.ToolRead}}, nil)
	y(agentcli.Event{Kind: agentcli.EventResult, Result: &agentcli.Result{}}, nil)
	if len(evs) != 4 || evs[0].Tool.Name != "now" || evs[0].Tool.Kind != agentcli.ToolOther ||
		evs[1].Tool.Name != "fail" || evs[2].Tool.Name != "mcp_other_now" || evs[2].Tool.Kind != agentcli.ToolRead || evs[3].Kind != agentcli.EventResult {
		t.Errorf("events %+v", evs)
	}
}

func TestHostToolsPanic(t *testing.T) {
	var calls []string
	var mu sync.Mutex
	req := &agentcli.Request{Prompt: "p", Permission: agentcli.PermissionBypass, Tools: testTools(&calls, &mu)}
	r := attach(t, hostBackend(false), req)
	cs, err := connect(t, r.HostTools().Server(), r.HostTools().Server().Headers["Authorization"])
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callText(t, cs, "panics", map[string]any{}); !isErr || !strings.Contains(text, "panicked") {
		t.Errorf("panics: %q, %v", text, isErr)
	}
	// The server survives.
	if text, isErr := callText(t, cs, "now", map[string]any{"zone": "CET"}); isErr || text != "it is noon in CET" {
		t.Errorf("now after a panic: %q, %v", text, isErr)
	}
}

func TestHostToolsPermission(t *testing.T) {
	var calls []string
	var mu sync.Mutex
	tools := testTools(&calls, &mu)
	tools[1].Approved = true // fail
	var asked []agentcli.PermissionRequest
	req := &agentcli.Request{Prompt: "p", Permission: agentcli.PermissionAsk, Tools: tools,
		OnPermission: func(ctx context.Context, pr *agentcli.PermissionRequest) agentcli.PermissionDecision {
			asked = append(asked, *pr)
			if len(asked) == 1 {
				return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "not now"}
			}
			// Allowed with an edited input, for the rest of the run.
			return agentcli.PermissionDecision{Kind: agentcli.AllowAlways, Input: json.RawMessage(`{"zone":"edited"}`)}
		}}
	r := attach(t, hostBackend(false), req)
	h := r.HostTools()
	cs, err := connect(t, h.Server(), h.Server().Headers["Authorization"])
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callText(t, cs, "now", map[string]any{"zone": "UTC"}); !isErr || text != "error: not now" {
		t.Errorf("refused now: %q, %v", text, isErr)
	}
	if text, _ := callText(t, cs, "now", map[string]any{"zone": "UTC"}); text != "it is noon in edited" {
		t.Errorf("allowed now with edited input: %q", text)
	}
	if text, _ := callText(t, cs, "now", map[string]any{"zone": "UTC"}); text != "it is noon in UTC" {
		t.Errorf("now after allow_always: %q (asked %d times)", text, len(asked))
	}
	if _, isErr := callText(t, cs, "fail", map[string]any{}); !isErr {
		t.Error("fail did not fail")
	}
	if len(asked) != 2 || asked[0].Tool.Name != "now" || asked[0].Tool.Kind != agentcli.ToolOther || string(asked[0].Tool.Input) != `{"zone":"UTC"}` {
		t.Errorf("permission requests %+v, want two about now", asked)
	}

	// Deny: refused with the default message, unless approved.
	calls = nil
	req = &agentcli.Request{Prompt: "p", Tools: testTools(&calls, &mu)}
	req.Tools[0].Approved = true
	r = attach(t, hostBackend(false), req)
	h = r.HostTools()
	cs, err = connect(t, h.Server(), h.Server().Headers["Authorization"])
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callText(t, cs, "now", map[string]any{"zone": "UTC"}); isErr || text != "it is noon in UTC" {
		t.Errorf("approved now under deny: %q, %v", text, isErr)
	}
	if text, isErr := callText(t, cs, "fail", map[string]any{}); !isErr || text != "error: "+DeniedMessage {
		t.Errorf("fail under deny: %q, %v", text, isErr)
	}
	if !slices.Equal(calls, []string{"now:UTC"}) {
		t.Errorf("handler calls under deny %v", calls)
	}
}

func TestHostToolsTurnContext(t *testing.T) {
	started := make(chan struct{})
	req := &agentcli.Request{Prompt: "p", Permission: agentcli.PermissionBypass, Tools: []agentcli.Tool{
		agentcli.NewTool("wait", "waits", func(ctx context.Context, in struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			return "", ctx.Err()
		})}}
	r := attach(t, hostBackend(false), req)
	h := r.HostTools()
	end := h.BeginTurn(context.Background())
	cs, err := connect(t, h.Server(), h.Server().Headers["Authorization"])
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	go func() {
		text, _ := callText(t, cs, "wait", map[string]any{})
		done <- text
	}()
	<-started
	end() // the turn ends: the handler's context with it
	select {
	case text := <-done:
		if !strings.Contains(text, "context canceled") {
			t.Errorf("wait: %q", text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's context did not end with the turn")
	}
}

func TestHostQuestionTool(t *testing.T) {
	var got *agentcli.Question
	req := &agentcli.Request{Prompt: "p", OnQuestion: func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
		got = q
		return &agentcli.Answer{Answers: [][]string{{"Blue"}, {"S", "L"}}}, nil
	}}
	r := attach(t, hostBackend(false), req)
	h := r.HostTools()
	if h == nil || !slices.Equal(h.Names(), []string{QuestionTool}) {
		t.Fatalf("question tool not served: %+v", h)
	}
	cs, err := connect(t, h.Server(), h.Server().Headers["Authorization"])
	if err != nil {
		t.Fatal(err)
	}
	text, isErr := callText(t, cs, QuestionTool, map[string]any{"questions": []any{
		map[string]any{"header": "Color", "question": "Which color?", "options": []any{map[string]any{"label": "Red"}, map[string]any{"label": "Blue"}}},
		map[string]any{"question": "Which sizes?", "multiSelect": true},
	}})
	if isErr || text != "The user answered:\n\"Which color?\": \"Blue\"\n\"Which sizes?\": \"S\", \"L\"" {
		t.Errorf("answer text %q, %v", text, isErr)
	}
	if got == nil || len(got.Items) != 2 || got.Items[0].Header != "Color" || len(got.Items[0].Options) != 2 || !got.Items[1].MultiSelect {
		t.Errorf("question %+v", got)
	}

	// A CLI that asks its own way gets no question tool.
	if r := attach(t, hostBackend(true), req); r.HostTools() != nil {
		t.Error("a question tool for a CLI that asks itself")
	}
}

func TestAskQuestion(t *testing.T) {
	q := &agentcli.Question{Items: []agentcli.QuestionItem{{Text: "Why?"}}}
	if a, msg := AskQuestion(context.Background(), nil, nil, 0, q); a != nil || msg != agentcli.NotAvailableMessage {
		t.Errorf("no OnQuestion: %v, %q", a, msg)
	}
	fail := func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) { return nil, errors.New("x") }
	if a, msg := AskQuestion(context.Background(), fail, nil, 0, q); a != nil || msg != agentcli.NoAnswerMessage {
		t.Errorf("failing OnQuestion: %v, %q", a, msg)
	}
	slow := func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
		<-ctx.Done()
		return &agentcli.Answer{Answers: [][]string{{"late"}}}, nil
	}
	if a, msg := AskQuestion(context.Background(), slow, nil, 50*time.Millisecond, q); a != nil || msg != agentcli.NoAnswerMessage {
		t.Errorf("slow OnQuestion: %v, %q", a, msg)
	}
	panics := func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) { panic("x") }
	if a, msg := AskQuestion(context.Background(), panics, nil, 0, q); a != nil || msg != agentcli.NoAnswerMessage {
		t.Errorf("panicking OnQuestion: %v, %q", a, msg)
	}
}

func TestCheckHost(t *testing.T) {
	ok := agentcli.NewTool("ok", "", func(ctx context.Context, in struct{}) (string, error) { return "", nil })
	caps := agentcli.Capabilities{HostTools: true, Questions: true, MCP: true}
	for _, c := range []struct {
		name  string
		req   agentcli.Request
		caps  agentcli.Capabilities
		field string // "" for an UnsupportedError
	}{
		{"unsupported", agentcli.Request{Tools: []agentcli.Tool{ok}}, agentcli.Capabilities{}, ""},
		{"questions unsupported", agentcli.Request{OnQuestion: func(context.Context, *agentcli.Question) (*agentcli.Answer, error) { return nil, nil }}, agentcli.Capabilities{HostTools: true}, ""},
		{"bad name", agentcli.Request{Tools: []agentcli.Tool{{Name: "a b", Handler: ok.Handler}}}, caps, "Tools[0].Name"},
		{"empty name", agentcli.Request{Tools: []agentcli.Tool{{Handler: ok.Handler}}}, caps, "Tools[0].Name"},
		{"duplicate", agentcli.Request{Tools: []agentcli.Tool{ok, {Name: "OK", Handler: ok.Handler}}}, caps, "Tools[1].Name"},
		{"no handler", agentcli.Request{Tools: []agentcli.Tool{{Name: "x"}}}, caps, "Tools[0].Handler"},
		{"bad schema", agentcli.Request{Tools: []agentcli.Tool{{Name: "x", Handler: ok.Handler, InputSchema: json.RawMessage(`{"type":"string"}`)}}}, caps, "Tools[0].InputSchema"},
		{"no schema", agentcli.Request{Tools: []agentcli.Tool{agentcli.NewTool("x", "", func(ctx context.Context, in chan int) (string, error) { return "", nil })}}, caps, "Tools[0]"},
		{"not an object", agentcli.Request{Tools: []agentcli.Tool{agentcli.NewTool("x", "", func(ctx context.Context, in string) (string, error) { return "", nil })}}, caps, "Tools[0]"},
		{"reserved server", agentcli.Request{Tools: []agentcli.Tool{ok}, MCPServers: []agentcli.MCPServer{{Name: "agentcli_x", URL: "http://x"}}}, caps, "MCPServers[0].Name"},
		{"allow list names a host tool", agentcli.Request{Tools: []agentcli.Tool{ok}, AllowedTools: []string{"Read", "ok"}}, caps, "AllowedTools[1]"},
		{"allow list names the server", agentcli.Request{OnQuestion: func(context.Context, *agentcli.Question) (*agentcli.Answer, error) { return nil, nil }, AllowedTools: []string{"mcp__agentcli"}}, caps, "AllowedTools[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.req.Prompt = "p"
			c.req.Permission = agentcli.PermissionBypass
			err := checkHost("fake", c.caps, &c.req)
			var re *agentcli.RequestError
			var ue *agentcli.UnsupportedError
			switch {
			case c.field == "" && !errors.As(err, &ue):
				t.Errorf("err = %v, want an UnsupportedError", err)
			case c.field != "" && (!errors.As(err, &re) || re.Field != c.field):
				t.Errorf("err = %v, want a RequestError for %s", err, c.field)
			}
		})
	}
	// Without host tools or questions, a server may have any name.
	if err := checkHost("fake", caps, &agentcli.Request{MCPServers: []agentcli.MCPServer{{Name: "agentcli", URL: "http://x"}}}); err != nil {
		t.Error(err)
	}
}
