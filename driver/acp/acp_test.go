package acp

// The client against a fake agent: the test binary itself, run with
// ACP_FAKE_AGENT=1, serves ACP with the SDK's own agent side
// (sdk.NewAgentSideConnection), so the client's messages are checked by an
// independent implementation of the protocol.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
)

func TestMain(m *testing.M) {
	if os.Getenv("ACP_FAKE_AGENT") == "1" {
		runAgent()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lockedWriter lets the fake write raw lines between the SDK's messages.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

type fakeAgent struct {
	conn *sdk.AgentSideConnection
	out  *lockedWriter
	mode string
	// mcp is what session/new or session/load got, set the config
	// options set, in order ("id=value").
	mcp   []sdk.McpServer
	set   []string
	model string
}

// configOptions are the fake's config options: a model, and with model
// "m2" an effort (in groups, as an agent may list them).
func (a *fakeAgent) configOptions() []sdk.SessionConfigOption {
	raw := `[{"id":"model","name":"Model","type":"select","currentValue":"m1","options":[{"value":"m1","name":"M1"},{"value":"m2","name":"M2"}]}`
	if a.model == "m2" {
		raw += `,{"id":"effort","name":"Effort","type":"select","currentValue":"default","options":[{"group":"g","name":"G","options":[{"value":"low","name":"Low"},{"value":"high","name":"High"}]}]}`
	}
	var out []sdk.SessionConfigOption
	if err := json.Unmarshal([]byte(raw+"]"), &out); err != nil {
		panic(err)
	}
	return out
}

func runAgent() {
	out := &lockedWriter{w: os.Stdout}
	a := &fakeAgent{out: out}
	a.conn = sdk.NewAgentSideConnection(a, out, os.Stdin)
	<-a.conn.Done()
}

func (a *fakeAgent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

func (a *fakeAgent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	if p.ClientCapabilities.Terminal || p.ClientCapabilities.Fs.ReadTextFile || p.ClientCapabilities.Fs.WriteTextFile {
		return sdk.InitializeResponse{}, sdk.NewInvalidParams("the client offers capabilities it does not have")
	}
	return sdk.InitializeResponse{ProtocolVersion: sdk.ProtocolVersionNumber, AgentCapabilities: sdk.AgentCapabilities{LoadSession: true}}, nil
}

func (a *fakeAgent) Cancel(context.Context, sdk.CancelNotification) error { return nil }

func (a *fakeAgent) CloseSession(context.Context, sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, nil
}

func (a *fakeAgent) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, nil
}

func (a *fakeAgent) NewSession(_ context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if p.Cwd == "" || p.McpServers == nil {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams("cwd and mcpServers are required")
	}
	a.mcp = p.McpServers
	return sdk.NewSessionResponse{SessionId: "sess_new", ConfigOptions: a.configOptions()}, nil
}

func (a *fakeAgent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if p.SessionId != "sess_old" {
		return sdk.LoadSessionResponse{}, sdk.NewInternalError(map[string]string{"details": "No previous sessions found for this project."})
	}
	a.mcp = p.McpServers
	// The history is replayed before the answer; no turn is running.
	a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: p.SessionId, Update: sdk.UpdateUserMessageText("old prompt")})
	a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: p.SessionId, Update: sdk.UpdateAgentMessageText("old answer")})
	return sdk.LoadSessionResponse{}, nil
}

func (a *fakeAgent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, nil
}

func (a *fakeAgent) SetSessionConfigOption(_ context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if v := p.ValueId; v != nil {
		a.set = append(a.set, string(v.ConfigId)+"="+string(v.Value))
		if v.ConfigId == "model" {
			a.model = string(v.Value)
		}
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: a.configOptions()}, nil
}

func (a *fakeAgent) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	if p.ModeId == "broken" {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams("no such mode")
	}
	a.mode = string(p.ModeId)
	return sdk.SetSessionModeResponse{}, nil
}

func (a *fakeAgent) say(ctx context.Context, sid sdk.SessionId, text string) {
	a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.UpdateAgentMessageText(text)})
}

func (a *fakeAgent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	text := ""
	for _, b := range p.Prompt {
		if b.Text != nil {
			text += b.Text.Text
		}
	}
	sid := p.SessionId
	switch {
	case text == "hello":
		a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.UpdateAgentThoughtText("hm")})
		a.say(ctx, sid, "hi ")
		a.say(ctx, sid, "there (mode "+a.mode+")")
		in, out := 7, 3
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn, Usage: &sdk.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}}, nil
	case text == "tool":
		a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.StartToolCall("call_1", "bash",
			sdk.WithStartKind(sdk.ToolKindExecute), sdk.WithStartStatus(sdk.ToolCallStatusPending), sdk.WithStartRawInput(map[string]any{"cwd": "/w"}))})
		kind := sdk.ToolKindExecute
		title := "touch X"
		// Not cancelled by session/cancel, so that the client's answer
		// to a cancelled turn is seen.
		bg := context.WithoutCancel(ctx)
		resp, err := a.conn.RequestPermission(bg, sdk.RequestPermissionRequest{
			SessionId: sid,
			ToolCall:  sdk.ToolCallUpdate{ToolCallId: "call_1", Title: &title, Kind: &kind, RawInput: map[string]any{"command": "touch X"}},
			Options: []sdk.PermissionOption{
				{OptionId: "yes-always", Kind: sdk.PermissionOptionKindAllowAlways, Name: "Always"},
				{OptionId: "yes", Kind: sdk.PermissionOptionKindAllowOnce, Name: "Once"},
				{OptionId: "no", Kind: sdk.PermissionOptionKindRejectOnce, Name: "No"},
			},
		})
		outcome := "error"
		switch {
		case err != nil:
		case resp.Outcome.Selected != nil:
			outcome = string(resp.Outcome.Selected.OptionId)
		case resp.Outcome.Cancelled != nil:
			outcome = "cancelled"
		}
		status := sdk.ToolCallStatusFailed
		if strings.HasPrefix(outcome, "yes") {
			status = sdk.ToolCallStatusCompleted
		}
		a.conn.SessionUpdate(bg, sdk.SessionNotification{SessionId: sid, Update: sdk.UpdateToolCall("call_1",
			sdk.WithUpdateStatus(status), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("output of " + outcome))}))})
		if ctx.Err() != nil {
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		}
		a.say(ctx, sid, "outcome "+outcome)
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case text == "report":
		// What the session was set up with, as JSON.
		b, _ := json.Marshal(map[string]any{"mcp": a.mcp, "set": a.set})
		a.say(ctx, sid, string(b))
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case text == "stall":
		a.say(ctx, sid, "waiting")
		<-ctx.Done() // the SDK cancels the prompt on session/cancel
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case text == "future":
		a.out.Write([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + string(sid) + `","update":{"sessionUpdate":"hologram","beam":1}}}` + "\n"))
		a.out.Write([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + string(sid) + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"},"newField":[1,2]}}}` + "\n"))
		a.out.Write([]byte("not json\n"))
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case text == "big":
		a.say(ctx, sid, strings.Repeat("b", 10<<20+1)) // over the SDK's own 10 MiB line limit
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case text == "notes":
		// An agent's own notes sent as message text, then the model's
		// answer, whose second chunk starts like a note but continues a
		// message.
		a.say(ctx, sid, "Info: Disabled tools: bash")
		a.say(ctx, sid, "Info: Unknown tool x")
		a.say(ctx, sid, "The answer ")
		a.say(ctx, sid, "Info: goes on")
		a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.StartToolCall("call_r", "a description",
			sdk.WithStartKind(sdk.ToolKindRead), sdk.WithStartStatus(sdk.ToolCallStatusInProgress))})
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case text == "fail":
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]string{"error": "API error: status 429 Too Many Requests"})
	case text == "refuse":
		return sdk.PromptResponse{StopReason: sdk.StopReasonRefusal}, nil
	}
	a.say(ctx, sid, "echo:"+text)
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

// start starts a session on the fake agent.
func start(t *testing.T, req *agentcli.Request, cfg Config) (*live.Session, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if req == nil {
		req = &agentcli.Request{}
	}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	s, err := live.Start(context.Background(), live.Config{
		Backend: "fake", Path: self, Options: agentcli.Options{KillGrace: 300 * time.Millisecond},
		Env:     append(os.Environ(), "ACP_FAKE_AGENT=1"),
		Request: req,
		Proto:   func(h *live.Host) live.Proto { return New(h, cfg) },
	})
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func collect(t *testing.T, s *live.Session, prompt string) ([]agentcli.Event, *agentcli.Result, error) {
	t.Helper()
	var evs []agentcli.Event
	for ev, err := range s.Stream(context.Background(), prompt) {
		if err != nil {
			return evs, nil, err
		}
		if ev.Kind == agentcli.EventResult {
			return evs, ev.Result, nil
		}
		evs = append(evs, ev)
	}
	return evs, nil, errors.New("no result")
}

func TestTurn(t *testing.T) {
	s, err := start(t, nil, Config{Mode: "careful", FirstPrefix: "SYS\n\n"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "sess_new" {
		t.Errorf("ID() = %q", s.ID())
	}
	evs, res, err := collect(t, s, "hello")
	if err != nil {
		// The prefix is sent with the first prompt: "SYS\n\nhello" is
		// not "hello", so the fake echoes it.
		t.Fatal(err)
	}
	if res.Text != "echo:SYS\n\nhello" {
		t.Errorf("first turn text %q", res.Text)
	}
	_ = evs
	evs, res, err = collect(t, s, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hi there (mode careful)" || res.StopReason != "end_turn" || res.SessionID != "sess_new" {
		t.Errorf("result %+v", res)
	}
	if res.Usage.InputTokens != 7 || res.Usage.OutputTokens != 3 {
		t.Errorf("usage %+v", res.Usage)
	}
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, string(ev.Kind))
	}
	if got := strings.Join(kinds, ","); got != "thinking,text_delta,text_delta,usage" {
		t.Errorf("events %s", got)
	}
}

func TestPermission(t *testing.T) {
	var got []agentcli.PermissionRequest
	var mu sync.Mutex
	decide := agentcli.AllowAlways
	req := &agentcli.Request{
		Permission: agentcli.PermissionAsk,
		OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
			mu.Lock()
			got = append(got, *r)
			mu.Unlock()
			return agentcli.PermissionDecision{Kind: decide}
		},
	}
	s, err := start(t, req, Config{RawName: func(id, title string) string {
		if title == "bash" {
			return "bash"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	evs, res, err := collect(t, s, "tool")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "outcome yes-always" {
		t.Errorf("text %q: the decision did not pick the option by kind", res.Text)
	}
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	r := got[0]
	if r.Tool.Name != "Bash" || r.Tool.RawName != "bash" || r.Tool.Kind != agentcli.ToolExecute || r.Title != "touch X" ||
		string(r.Tool.Input) != `{"command":"touch X"}` || r.SessionID != "sess_new" || len(r.Options) != 3 {
		t.Errorf("request %+v", r)
	}
	var use *agentcli.ToolUse
	var result *agentcli.ToolResult
	for _, ev := range evs {
		switch ev.Kind {
		case agentcli.EventToolUse:
			if use != nil {
				t.Error("two tool uses for one call")
			}
			use = ev.Tool
		case agentcli.EventToolResult:
			result = ev.ToolResult
		}
	}
	if use == nil || use.ID != "call_1" || result == nil || result.Output != "output of yes-always" || result.IsError {
		t.Errorf("tool events %+v %+v", use, result)
	}
	decide = agentcli.RejectAlways // not offered: falls back to reject_once
	_, res, err = collect(t, s, "tool")
	if err != nil || res.Text != "outcome no" {
		t.Fatalf("refusal: %+v, %v", res, err)
	}
}

// Interrupting a turn that waits for a permission answers the request
// "cancelled", as ACP wants, and ends the turn with ErrInterrupted.
func TestInterruptPendingPermission(t *testing.T) {
	asked := make(chan struct{}, 1)
	req := &agentcli.Request{
		Permission: agentcli.PermissionAsk,
		OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
			asked <- struct{}{}
			<-ctx.Done()
			return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
		},
	}
	s, err := start(t, req, Config{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var evs []agentcli.Event
	go func() {
		var err error
		evs, _, err = collect(t, s, "tool")
		done <- err
	}()
	<-asked
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("turn: %v", err)
	}
	found := false
	for _, ev := range evs {
		if ev.Kind == agentcli.EventToolResult && ev.ToolResult.Output == "output of cancelled" {
			found = true
		}
	}
	if !found {
		t.Errorf("the agent did not get a cancelled outcome: %+v", evs)
	}
	if _, res, err := collect(t, s, "again"); err != nil || res.Text != "echo:again" {
		t.Fatalf("next turn: %+v, %v", res, err)
	}
}

func TestCancel(t *testing.T) {
	s, err := start(t, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := collect(t, s, "stall")
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("turn: %v", err)
	}
}

// Unknown update kinds and fields are kept raw, malformed lines become
// notices, and a line over the SDK's own 10 MiB limit arrives whole.
func TestTolerance(t *testing.T) {
	s, err := start(t, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	evs, res, err := collect(t, s, "future")
	if err != nil || res.Text != "ok" {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, string(ev.Kind))
	}
	if got := strings.Join(kinds, ","); got != "unknown,text_delta,notice" {
		t.Errorf("events %s", got)
	}
	if !strings.Contains(string(evs[0].Raw), "hologram") {
		t.Errorf("unknown update without its raw line: %s", evs[0].Raw)
	}
	_, res, err = collect(t, s, "big")
	if err != nil || len(res.Text) != 10<<20+1 {
		t.Fatalf("big: %d bytes, %v", len(res.Text), err)
	}
}

func TestErrors(t *testing.T) {
	s, err := start(t, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = collect(t, s, "fail")
	var re *agentcli.ResultError
	if !errors.As(err, &re) || re.APIStatus != 429 || !errors.Is(err, agentcli.ErrRateLimited) {
		t.Errorf("failed prompt: %#v", err)
	}
	_, _, err = collect(t, s, "refuse")
	if !errors.As(err, &re) || re.Subtype != "refusal" {
		t.Errorf("refusal: %v", err)
	}
	if s.Err() != nil {
		t.Fatalf("the session died: %v", s.Err())
	}
	_, err = start(t, nil, Config{SessionID: "sess_gone"})
	var pe *agentcli.ProtocolError
	if !errors.As(err, &pe) || !errors.Is(err, agentcli.ErrSessionNotFound) || !errors.Is(err, agentcli.ErrProtocol) || pe.Method != "session/load" {
		t.Errorf("loading an unknown session: %v", err)
	}
	_, err = start(t, nil, Config{Mode: "broken"})
	if !errors.As(err, &pe) || !errors.Is(err, agentcli.ErrProtocol) || pe.Method != "session/set_mode" {
		t.Errorf("a mode the agent refuses: %v", err)
	}
}

// A loaded session's history replay is not part of any turn; the guard
// rewrites the prompt.
func TestLoadAndGuard(t *testing.T) {
	s, err := start(t, nil, Config{SessionID: "sess_old", Guard: func(p string) string { return "[" + p + "]" }, FirstPrefix: "unused"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "sess_old" {
		t.Errorf("ID() = %q", s.ID())
	}
	evs, res, err := collect(t, s, "/x")
	if err != nil || res.Text != "echo:[/x]" {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	for _, ev := range evs {
		if strings.Contains(ev.Text, "old") {
			t.Errorf("the replayed history leaked into the turn: %+v", ev)
		}
	}
}

func TestStatusOf(t *testing.T) {
	for msg, want := range map[string]int{
		`{"statusCode":400,"x":1}`:              400,
		"API error: status 429 Too Many":        429,
		"[500 Internal Server Error]":           500,
		"got error code\":503":                  503,
		"status 4290":                           0,
		"nothing here":                          0,
		"status 200 then status: 404 Not Found": 404,
	} {
		if got := statusOf(msg); got != want {
			t.Errorf("statusOf(%q) = %d, want %d", msg, got, want)
		}
	}
}

func TestCanonical(t *testing.T) {
	for _, c := range []struct {
		backend, raw, kind, name string
		k                        agentcli.ToolKind
		want                     string
		wantKind                 agentcli.ToolKind
	}{
		{"gemini", "run_shell_command", "execute", "", "", "Bash", agentcli.ToolExecute},
		{"opencode", "", "execute", "", "", "Bash", agentcli.ToolExecute},
		{"opencode", "", "read", "", "", "read", agentcli.ToolRead},
		{"opencode", "mystery", "fetch", "", "", "mystery", agentcli.ToolFetch},
		{"opencode", "", "", "Edit", agentcli.ToolEdit, "Edit", agentcli.ToolEdit},
		{"opencode", "", "warp", "", "", "other", agentcli.ToolOther},
	} {
		tools := driver.Tools{"run_shell_command": agentcli.ToolNameBash, "bash": agentcli.ToolNameBash}
		if c.backend == "opencode" {
			delete(tools, "run_shell_command")
		}
		n, k := canonical(tools, c.raw, c.kind, c.name, c.k)
		if n != c.want || k != c.wantKind {
			t.Errorf("canonical(%q, %q, %q) = %q, %q; want %q, %q", c.backend, c.raw, c.kind, n, k, c.want, c.wantKind)
		}
	}
}

// TestSettings: MCP servers reach session/new (and session/load) in ACP's
// form, every list present; an option set only if offered is set when the
// agent's latest answer offers its value (here once the model that has it
// is chosen), and skipped otherwise.
func TestSettings(t *testing.T) {
	servers := MCPServers([]agentcli.MCPServer{
		{Name: "local", Command: "/bin/srv", Env: []string{"B=2", "A=$1", "B=3"}},
		{Name: "bare", Command: "srv"},
		{Name: "web", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X-B": "b", "Authorization": "Bearer $t"}},
	}, func(v string) string { return strings.ReplaceAll(v, "$", `\$`) })
	got, _ := json.Marshal(servers)
	want := `[{"args":[],"command":"/bin/srv","env":[{"name":"A","value":"\\$1"},{"name":"B","value":"3"}],"name":"local"},` +
		`{"args":[],"command":"srv","env":[],"name":"bare"},` +
		`{"headers":[{"name":"Authorization","value":"Bearer \\$t"},{"name":"X-B","value":"b"}],"name":"web","type":"http","url":"http://127.0.0.1:1/mcp"}]`
	if string(got) != want {
		t.Errorf("MCPServers:\n%s\nwant\n%s", got, want)
	}
	for _, c := range []struct {
		name    string
		cfg     Config
		wantSet []string
	}{
		{"offered", Config{MCPServers: servers, Options: []Option{{ID: "model", Value: "m2"}, {ID: "effort", Value: "high", IfOffered: true}}},
			[]string{"model=m2", "effort=high"}},
		{"not offered for the model", Config{Options: []Option{{ID: "effort", Value: "high", IfOffered: true}, {ID: "model", Value: "m1"}}},
			[]string{"model=m1"}},
		{"value not offered", Config{Options: []Option{{ID: "model", Value: "m2"}, {ID: "effort", Value: "max", IfOffered: true}}},
			[]string{"model=m2"}},
		{"loaded", Config{SessionID: "sess_old", MCPServers: servers[:1]}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := start(t, nil, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, res, err := collect(t, s, "report")
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				MCP json.RawMessage `json:"mcp"`
				Set []string        `json:"set"`
			}
			if err := json.Unmarshal([]byte(res.Text), &rep); err != nil {
				t.Fatalf("%v: %q", err, res.Text)
			}
			wantMCP, _ := json.Marshal(c.cfg.MCPServers)
			if c.cfg.MCPServers == nil {
				wantMCP = []byte("[]")
			}
			if string(rep.MCP) != string(wantMCP) {
				t.Errorf("the agent got MCP servers %s, want %s", rep.MCP, wantMCP)
			}
			if !slices.Equal(rep.Set, c.wantSet) {
				t.Errorf("options set %q, want %q", rep.Set, c.wantSet)
			}
		})
	}
}

// Config.Notice keeps an agent's notes out of the turn's text (a chunk
// that starts a message only), and Config.KindNames names a call without
// a raw name by its kind's canonical tool.
func TestNoticeAndKindNames(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg := Config{}
		if on {
			cfg.Notice = func(text string) bool { return strings.HasPrefix(text, "Info: ") }
			cfg.KindNames = true
		}
		s, err := start(t, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		evs, res, err := collect(t, s, "notes")
		if err != nil {
			t.Fatal(err)
		}
		var notices []string
		var use *agentcli.ToolUse
		for _, ev := range evs {
			switch ev.Kind {
			case agentcli.EventNotice:
				notices = append(notices, ev.Text)
			case agentcli.EventToolUse:
				use = ev.Tool
			}
		}
		wantText, wantName := "Info: Disabled tools: bashInfo: Unknown tool xThe answer Info: goes on", "read"
		var wantNotices []string
		if on {
			wantText, wantName = "The answer Info: goes on", agentcli.ToolNameRead
			wantNotices = []string{"Info: Disabled tools: bash", "Info: Unknown tool x"}
		}
		if res.Text != wantText || !slices.Equal(notices, wantNotices) {
			t.Errorf("on=%v: text %q, notices %q", on, res.Text, notices)
		}
		if use == nil || use.Name != wantName || use.Kind != agentcli.ToolRead {
			t.Errorf("on=%v: tool use %+v, want %s", on, use, wantName)
		}
	}
}
