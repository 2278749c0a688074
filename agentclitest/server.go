// Package agentclitest provides test doubles for code that uses agentcli, in
// the spirit of net/http/httptest:
//
//   - Backend (NewBackend) is an in-memory agentcli.Backend that replays
//     scripted events, results, errors and delays and records every Request,
//     for testing code above agentcli without any CLI or model;
//   - Server (NewServer) is a scripted model server that the real CLIs talk
//     to, for testing real CLI runs hermetically.
//
// A Server listens on 127.0.0.1 and speaks the four model APIs those CLIs call,
// streaming each answer the way the CLI expects:
//
//   - Anthropic Messages (claude): POST /v1/messages, SSE.
//   - OpenAI Responses (codex): POST /v1/responses, SSE.
//   - Gemini API (gemini): POST /v1beta/models/{model}:streamGenerateContent,
//     :generateContent and :countTokens.
//   - OpenAI Chat Completions (opencode): POST /v1/chat/completions, SSE.
//
// Every model call that is not a utility call (see ModelRequest.Utility) answers
// with the next scripted Turn. Wire returns the environment, flags and config
// files that point a real CLI at the server with no network access.
package agentclitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultText is the assistant text of the turn a Server answers with once its
// script is exhausted. It ends the agent loop (no tool call), so a CLI that
// makes more model calls than scripted still finishes normally.
const DefaultText = "agentclitest: no more scripted turns"

// Model is the model name Wire configures for CLIs that need one (codex,
// opencode). The server accepts any model string and reports back the model the
// request asked for.
const Model = "agentclitest-model"

// Turn is one scripted model answer. The parts present are emitted in the
// order Thinking, Text, Tool, Shell; a turn with a tool call (Tool or Shell)
// ends with the API's "tool use" stop reason, otherwise with a normal stop.
// If Status is non-zero the turn is an HTTP error instead, and if Stall is set
// the response is held open instead.
type Turn struct {
	// Text is the assistant text. Streaming APIs receive it in several chunks.
	Text string
	// Thinking is reasoning text, sent on the API's reasoning channel:
	// an Anthropic "thinking" block, a Responses "reasoning" item with a
	// summary, a Gemini part with "thought":true, a Chat Completions
	// "reasoning_content" delta. Whether the CLI shows it is up to the CLI.
	Thinking string
	// Tool is a tool call, rendered in each API's own shape.
	Tool *ToolCall
	// Shell asks the CLI's own shell tool to run this command. The tool is
	// chosen by API: Anthropic "Bash" {command, description}, Responses
	// "exec_command" {cmd}, Gemini "run_shell_command" {command, description},
	// Chat Completions "bash" {command, description}. If the request offers
	// none of these names but offers another known shell tool name, that
	// one is used (Factory Droid's "Execute" {command, summary, riskLevel
	// "medium", riskLevelReason}).
	Shell string
	// Status, if non-zero, makes the server answer with this HTTP status and
	// an error body instead of a model answer.
	Status int
	// Body is the error body sent with Status. If empty, the API's own error
	// JSON is generated with Message.
	Body string
	// Message is the error message used when Body is empty. If empty too,
	// http.StatusText(Status) is used.
	Message string
	// Stall holds the request open, writing nothing, until the request's
	// context ends (the client goes away), the server is closed, or
	// StallFor has passed; then the request fails with a 400 whose
	// message says a stalled turn ran out, so that a Stall turn meant for
	// a run that ended before reaching the model cannot silently hang the
	// next run.
	Stall bool
	// StallFor bounds a Stall; zero means DefaultStallFor.
	StallFor time.Duration
	// Usage overrides the token counts reported for this turn.
	Usage *TurnUsage
	// Limit, if set, is what the API says of the account's rate limit
	// with this turn (headers, or a 429 for a rejected limit); see
	// Limit.
	Limit *Limit
	// Repeat answers this many further model calls with the same turn
	// before the script moves on; a negative Repeat answers every later
	// call with it. Useful for errors, since CLIs retry: claude, for one,
	// answers a 400 by retrying the request several times with fewer beta
	// features before it gives up.
	Repeat int
}

// ToolCall is a tool call made by the model. An empty ID is replaced by a
// generated one; Args may be nil.
type ToolCall struct {
	// ID is the call id; empty means a generated one.
	ID string
	// Name is the tool's name as the CLI offered it (as ModelRequest.Tools
	// lists it).
	Name string
	// Args are the call's arguments; nil means none.
	Args map[string]any
}

// TurnUsage holds the token counts a turn reports. Zero InputTokens and
// OutputTokens default to 10 and 5.
type TurnUsage struct {
	// InputTokens is the input token count (default 10).
	InputTokens int
	// OutputTokens is the output token count (default 5).
	OutputTokens int
	// CachedTokens is the cache-read input token count.
	CachedTokens int
	// ReasoningTokens is the reasoning token count, where the API
	// reports it separately.
	ReasoningTokens int
}

// Message is one text part of a conversation as a CLI sent it.
type Message struct {
	// Role is "user", "assistant", "system" or "developer". Gemini's "model"
	// role is reported as "assistant".
	Role string
	// Text is the part's text.
	Text string
}

// ModelToolResult is a tool result a CLI sent back to the model.
type ModelToolResult struct {
	// CallID is the tool call id the result answers. Gemini results carry no
	// id unless the call had one; then CallID is the function name.
	CallID string
	// Output is the result's text.
	Output string
}

// ModelRequest is one recorded model call.
type ModelRequest struct {
	// API is "anthropic", "responses", "gemini" or "chat".
	API string
	// Method is the HTTP method.
	Method string
	// Path is the URL path, without the query.
	Path string
	// Query is the raw query, e.g. "beta=true" or "alt=sse".
	Query string
	// Model is the model the request asked for (from the body, or from the
	// URL path for Gemini).
	Model string
	// Stream reports whether a streamed answer was requested.
	Stream bool
	// System is the system prompt: Anthropic top-level "system" (text blocks
	// joined with "\n"), Responses "instructions", Gemini
	// "systemInstruction" text parts joined with "\n", Chat Completions
	// system messages joined with "\n".
	System string
	// Messages holds every text part of the conversation in order, one entry
	// per part. Responses developer-role input messages appear with role
	// "developer"; system-role messages inside the message list (Anthropic,
	// Chat) appear with role "system".
	Messages []Message
	// ToolResults holds the tool results in the conversation, in order.
	ToolResults []ModelToolResult
	// Tools lists the names of the tools the request offered. The
	// functions of a Responses "namespace" tool (codex offers each MCP
	// server's tools as one) are listed as "<namespace>__<function>",
	// e.g. "mcp__docs__search"; a ToolCall by that name is sent as a call
	// of the function in its namespace.
	Tools []string
	// Utility marks calls that the server answered on its own without
	// consuming a scripted turn: Gemini router/JSON-schema calls and
	// countTokens, Anthropic count_tokens and claude's one-token check of
	// a model it does not know, opencode title generation.
	Utility bool
	// Header holds the request's HTTP headers.
	Header http.Header
	// Body is the raw request body.
	Body []byte
}

// LastUserText returns the text of the last user-role message part, or "".
func (r ModelRequest) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text
		}
	}
	return ""
}

// Server is a scripted model server listening on 127.0.0.1. It is safe for
// concurrent use.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	url  string
	done chan struct{}

	mu     sync.Mutex
	turns  []Turn
	next   int
	reqs   []ModelRequest
	seq    int
	closed bool
}

// NewServer starts a Server on a random port of 127.0.0.1 with the given
// script and returns at once. It panics if it cannot listen, like
// httptest.NewServer. Call Close when done.
func NewServer(turns ...Turn) *Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("agentclitest: listen on 127.0.0.1: " + err.Error())
	}
	s := &Server{
		ln:    ln,
		url:   "http://" + ln.Addr().String(),
		done:  make(chan struct{}),
		turns: append([]Turn(nil), turns...),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveHTTP)}
	go s.srv.Serve(ln) //nolint:errcheck // returns when closed
	return s
}

// URL returns the server's base URL, "http://127.0.0.1:PORT", without a
// trailing slash or API version.
func (s *Server) URL() string { return s.url }

// Close shuts the server down: it releases stalled requests, closes all
// connections and blocks until every handler has returned. Close is
// idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	// Shutdown closes the listener and idle connections and waits for
	// running handlers; stalled handlers were released by closing done.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		s.srv.Close()
	}
}

// Push appends turns to the script.
func (s *Server) Push(turns ...Turn) {
	s.mu.Lock()
	s.turns = append(s.turns, turns...)
	s.mu.Unlock()
}

// Requests returns a copy of the model calls recorded so far, in the order
// they arrived (utility calls included, with Utility set).
func (s *Server) Requests() []ModelRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ModelRequest(nil), s.reqs...)
}

// Remaining returns how many scripted turns have not been consumed yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

// take records r and, unless r is a utility call, consumes the next turn.
// It also returns a per-server sequence number for generating ids.
func (s *Server) take(r ModelRequest) (Turn, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	s.seq++
	if r.Utility {
		return Turn{}, s.seq
	}
	if s.next < len(s.turns) {
		t := &s.turns[s.next]
		switch {
		case t.Repeat > 0:
			t.Repeat--
		case t.Repeat == 0:
			s.next++
		}
		return *t, s.seq
	}
	return Turn{Text: DefaultText}, s.seq
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
		s.handleAnthropicCount(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		s.handleAnthropic(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		s.handleResponses(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/chat/completions"):
		s.handleChat(w, r)
	case r.Method == http.MethodPost && strings.Contains(p, "/models/") && strings.Contains(p, ":"):
		s.handleGemini(w, r)
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && p == "/"):
		// Reachability probes (claude sends HEAD /).
		w.WriteHeader(http.StatusOK)
	default:
		// Anything else (model listings, WebSocket upgrade attempts, ...)
		// gets a harmless 404 so the CLI falls back or moves on.
		http.NotFound(w, r)
	}
}

// readBody reads the whole request body.
func readBody(r *http.Request) ([]byte, error) {
	return io.ReadAll(r.Body)
}

// newRequest fills the fields common to every API.
func newRequest(api string, r *http.Request, body []byte) ModelRequest {
	return ModelRequest{
		API:    api,
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
		Body:   body,
	}
}

// DefaultStallFor is how long a Stall turn holds a request when
// Turn.StallFor is zero.
const DefaultStallFor = time.Minute

// stall blocks until the request's context ends, the server closes or the
// turn's stall time runs out; it reports the last.
func (s *Server) stall(ctx context.Context, t Turn) bool {
	d := t.StallFor
	if d <= 0 {
		d = DefaultStallFor
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-s.done:
	case <-timer.C:
		return true
	}
	return false
}

// stallError is the error a stalled request gets when its time runs out.
func stallError(t Turn) Turn {
	d := t.StallFor
	if d <= 0 {
		d = DefaultStallFor
	}
	return Turn{Status: http.StatusBadRequest, Message: fmt.Sprintf("agentclitest: a Stall turn held this request for %v and gave up; "+
		"if this run was not meant to stall, the Stall turn was scripted for an earlier run that ended before it reached the model", d)}
}

// writeJSON writes v as a JSON response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck
}

// writeError writes t's scripted error: t.Body verbatim, or body(msg).
// refuse answers a request that turn t does not answer with a reply: a
// body that did not parse (perr), a stall, or a scripted error. It reports
// whether it answered; body builds the API's error object.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, t Turn, perr error, body func(status int, msg string) any) bool {
	switch {
	case perr != nil:
		writeJSON(w, http.StatusBadRequest, body(400, "agentclitest: bad JSON: "+perr.Error()))
	case t.Stall:
		if s.stall(r.Context(), t) {
			writeError(w, stallError(t), body)
		}
	case t.Status != 0:
		writeError(w, t, body)
	default:
		return false
	}
	return true
}

func writeError(w http.ResponseWriter, t Turn, body func(status int, msg string) any) {
	if t.Body != "" {
		ct := "text/plain; charset=utf-8"
		if json.Valid([]byte(t.Body)) {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(t.Status)
		io.WriteString(w, t.Body) //nolint:errcheck
		return
	}
	msg := t.Message
	if msg == "" {
		msg = http.StatusText(t.Status)
	}
	writeJSON(w, t.Status, body(t.Status, msg))
}

// sse writes server-sent events and flushes after each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	s := &sse{w: w, f: f}
	s.flush()
	return s
}

func (s *sse) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

// event writes "event: name\ndata: json\n\n"; an empty name omits the event
// line. term is the frame terminator ("\n\n" or "\r\n\r\n").
func (s *sse) frame(name string, data any, term string) {
	var b bytes.Buffer
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	b.WriteString("data: ")
	if raw, ok := data.(string); ok {
		b.WriteString(raw)
	} else {
		j, _ := json.Marshal(data)
		b.Write(j)
	}
	b.WriteString(term)
	s.w.Write(b.Bytes()) //nolint:errcheck
	s.flush()
}

// chunks splits s into up to three pieces at rune boundaries, so streamed
// text arrives in several deltas. An empty s gives no pieces.
func chunks(s string) []string {
	if s == "" {
		return nil
	}
	n := utf8.RuneCountInString(s)
	parts := 3
	if n < parts {
		parts = n
	}
	var out []string
	size := (n + parts - 1) / parts
	for len(s) > 0 {
		i, c := 0, 0
		for i < len(s) && c < size {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			c++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// usage returns t's usage with defaults applied.
func (t Turn) usage() TurnUsage {
	u := TurnUsage{}
	if t.Usage != nil {
		u = *t.Usage
	}
	if u.InputTokens == 0 {
		u.InputTokens = 10
	}
	if u.OutputTokens == 0 {
		u.OutputTokens = 5
	}
	return u
}

// call returns the tool call of t for an API, or nil. shells lists the shell
// tool names the API's CLIs use (first is the default); offered are the tool
// names the request offered.
func (t Turn) call(seq int, idPrefix string, offered []string, shell func(name, cmd string) map[string]any, shells ...string) *ToolCall {
	if t.Tool != nil {
		c := *t.Tool
		if c.ID == "" {
			c.ID = fmt.Sprintf("%s%d", idPrefix, seq)
		}
		if c.Args == nil {
			c.Args = map[string]any{}
		}
		return &c
	}
	if t.Shell == "" {
		return nil
	}
	name := pickName(offered, shells)
	return &ToolCall{ID: fmt.Sprintf("%s%d", idPrefix, seq), Name: name, Args: shell(name, t.Shell)}
}

// knownShells lists every CLI's shell tool name, in order of preference after
// the API's own.
var knownShells = []string{"Bash", "exec_command", "run_shell_command", "bash", "shell", "Execute"}

// pickName returns the first of prefer offered by the request, else the first
// other known shell tool offered, else prefer[0].
func pickName(offered, prefer []string) string {
	has := map[string]bool{}
	for _, o := range offered {
		has[o] = true
	}
	for _, p := range prefer {
		if has[p] {
			return p
		}
	}
	for _, p := range knownShells {
		if has[p] {
			return p
		}
	}
	return prefer[0]
}

// shellArgs builds the arguments of a shell tool call for the named tool.
func shellArgs(name, cmd string) map[string]any {
	switch name {
	case "exec_command":
		return map[string]any{"cmd": cmd}
	case "shell":
		return map[string]any{"command": []any{"bash", "-lc", cmd}}
	case "Execute":
		// Factory Droid: summary must be 3 to 8 words, sentence case;
		// the risk level is the model's own claim, which droid's
		// autonomy levels trust.
		return map[string]any{"command": cmd, "summary": "Run the scripted command",
			"riskLevel": "medium", "riskLevelReason": "Runs a command the test scripted"}
	default:
		return map[string]any{"command": cmd, "description": "Run " + cmd}
	}
}

// argsJSON encodes tool arguments as a JSON object string.
func argsJSON(args map[string]any) string {
	if args == nil {
		return "{}"
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// textOf returns the text of a JSON value that is either a string or a list of
// content blocks with "text" fields (joined with "\n"); other JSON is
// returned as its encoding.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != nil {
				parts = append(parts, *b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}
