// Package mcptest is a minimal MCP server for tests: just enough of the
// Model Context Protocol (initialize, tools/list, tools/call, ping) for a
// real CLI to list its tools and call them, over stdio (a test binary that
// re-executes itself, see MaybeServe) or Streamable HTTP (NewHTTP).
//
// The server offers two tools:
//
//   - ToolProbe ("agentcli_probe") takes no input and answers with a JSON
//     object holding the server's command-line arguments (after argv[0]),
//     the environment variables whose names start with EnvPrefix, and, over
//     HTTP, the request headers whose names start with HeaderPrefix: what a
//     test needs to check that an MCPServer's Args, Env and Headers arrived
//     intact.
//   - ToolEcho ("agentcli_echo") answers with its "text" input.
//
// Every request the server receives is appended, one JSON object a line, to
// a log: the file named by EnvLog (stdio) or HTTP.Calls.
package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Tool names offered by the server.
const (
	ToolProbe = "agentcli_probe"
	ToolEcho  = "agentcli_echo"
)

// EnvServe, when set in a test binary's environment, makes MaybeServe run
// the stdio server. EnvLog names the file requests are logged to.
const (
	EnvServe = "AGENTCLI_MCPTEST_SERVE"
	EnvLog   = "AGENTCLI_MCPTEST_LOG"
)

// EnvPrefix and HeaderPrefix select what ToolProbe reports.
const (
	EnvPrefix    = "MCPTEST_"
	HeaderPrefix = "X-Mcptest-"
)

// Probe is what ToolProbe answers, as JSON.
type Probe struct {
	// Args are the server's arguments, Env its EnvPrefix variables.
	Args []string          `json:"args"`
	Env  map[string]string `json:"env"`
	// Headers are the request's HeaderPrefix headers (HTTP).
	Headers map[string]string `json:"headers,omitempty"`
	// Ancestors are the command lines (arguments joined with spaces) of
	// the stdio server's parent, its parent's parent and so on, up to
	// four, on Linux: the CLI that started it, whose argv a test can
	// check for leaked secrets.
	Ancestors []string `json:"ancestors,omitempty"`
}

// Call is one logged request.
type Call struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	// Headers holds the HTTP headers starting with HeaderPrefix, and
	// Query the request URL's decoded query (HTTP only).
	Headers map[string]string `json:"headers,omitempty"`
	Query   string            `json:"query,omitempty"`
}

// MaybeServe runs the stdio server and exits when EnvServe is set; it
// returns at once otherwise. Call it first in TestMain.
func MaybeServe() {
	if os.Getenv(EnvServe) == "" {
		return
	}
	var log io.Writer = io.Discard
	if p := os.Getenv(EnvLog); p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcptest:", err)
			os.Exit(2)
		}
		log = f
	}
	serveStdio(os.Stdin, os.Stdout, log, os.Args[1:])
	os.Exit(0)
}

// StdioCommand returns the command and environment that start the stdio
// server: the running test binary (whose TestMain calls MaybeServe), and
// EnvServe plus EnvLog=logPath.
func StdioCommand(logPath string) (string, []string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	return exe, []string{EnvServe + "=1", EnvLog + "=" + logPath}, nil
}

// ReadLog returns the calls logged to path.
func ReadLog(path string) ([]Call, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Call
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var c Call
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ToolCalls returns the names and arguments of the tools/call requests in
// calls.
func ToolCalls(calls []Call) []string {
	var out []string
	for _, c := range calls {
		if c.Method != "tools/call" {
			continue
		}
		var p struct {
			Name string `json:"name"`
		}
		json.Unmarshal(c.Params, &p) //nolint:errcheck
		out = append(out, p.Name)
	}
	return out
}

type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// serveStdio answers newline-delimited JSON-RPC messages on r until EOF.
func serveStdio(r io.Reader, w io.Writer, log io.Writer, args []string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	enc := json.NewEncoder(w)
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, EnvPrefix) {
			env[k] = v
		}
	}
	probe := Probe{Args: append([]string{}, args...), Env: env, Ancestors: ancestors(4)}
	for sc.Scan() {
		var m rpcMessage
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		logCall(log, Call{Method: m.Method, Params: m.Params})
		if resp := handle(m, probe); resp != nil {
			enc.Encode(resp) //nolint:errcheck
		}
	}
}

// ancestors returns the command lines of up to n ancestor processes, read
// from /proc (none where there is no /proc).
func ancestors(n int) []string {
	var out []string
	pid := os.Getppid()
	for i := 0; i < n && pid > 1; i++ {
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			break
		}
		out = append(out, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")))
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			break
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 {
			break
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			break
		}
	}
	return out
}

var logMu sync.Mutex

func logCall(w io.Writer, c Call) {
	b, _ := json.Marshal(c)
	logMu.Lock()
	defer logMu.Unlock()
	w.Write(append(b, '\n')) //nolint:errcheck
}

// handle answers one message; nil for notifications and responses.
func handle(m rpcMessage, probe Probe) *rpcResponse {
	if len(m.ID) == 0 || m.Method == "" {
		return nil
	}
	resp := &rpcResponse{JSONRPC: "2.0", ID: m.ID}
	switch m.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(m.Params, &p) //nolint:errcheck
		if p.ProtocolVersion == "" {
			p.ProtocolVersion = "2025-06-18"
		}
		resp.Result = map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "agentcli-mcptest", "version": "1.0.0"},
		}
	case "ping":
		resp.Result = map[string]any{}
	case "tools/list":
		resp.Result = map[string]any{"tools": []any{
			map[string]any{
				"name":        ToolProbe,
				"description": "Reports the arguments, environment and headers this server was started with.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
			},
			map[string]any{
				"name":        ToolEcho,
				"description": "Answers with the given text.",
				"inputSchema": map[string]any{
					"type":       "object",
					"properties": map[string]any{"text": map[string]any{"type": "string"}},
					"required":   []string{"text"},
				},
			},
		}}
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		json.Unmarshal(m.Params, &p) //nolint:errcheck
		var text string
		switch p.Name {
		case ToolProbe:
			b, _ := json.Marshal(probe)
			text = string(b)
		case ToolEcho:
			var a struct {
				Text string `json:"text"`
			}
			json.Unmarshal(p.Arguments, &a) //nolint:errcheck
			text = a.Text
		default:
			resp.Error = &rpcError{Code: -32602, Message: "unknown tool " + p.Name}
			return resp
		}
		resp.Result = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	default:
		resp.Error = &rpcError{Code: -32601, Message: "method not found: " + m.Method}
	}
	return resp
}

// HTTP is an MCP server speaking Streamable HTTP (JSON responses, no
// server-sent events) on 127.0.0.1.
type HTTP struct {
	srv *httptest.Server

	mu    sync.Mutex
	calls []Call
}

// NewHTTP starts an HTTP MCP server. Its endpoint is URL(); Close stops it.
func NewHTTP() *HTTP {
	h := &HTTP{}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	return h
}

// URL returns the server's MCP endpoint.
func (h *HTTP) URL() string { return h.srv.URL + "/mcp" }

// Close shuts the server down.
func (h *HTTP) Close() { h.srv.Close() }

// Calls returns the requests received so far.
func (h *HTTP) Calls() []Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Call(nil), h.calls...)
}

func (h *HTTP) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		// No server-initiated stream; clients fall back to POST only.
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	hdr := map[string]string{}
	for k, v := range r.Header {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), HeaderPrefix) {
			hdr[http.CanonicalHeaderKey(k)] = strings.Join(v, ",")
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var m rpcMessage
	if json.Unmarshal(body, &m) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	q, _ := url.QueryUnescape(r.URL.RawQuery)
	h.calls = append(h.calls, Call{Method: m.Method, Params: m.Params, Headers: hdr, Query: q})
	h.mu.Unlock()
	resp := handle(m, Probe{Args: []string{}, Env: map[string]string{}, Headers: hdr})
	if resp == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp) //nolint:errcheck
}
