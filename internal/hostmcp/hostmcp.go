// Package hostmcp is the MCP server agentcli runs in-process for one run
// or live session: it serves the host's tools (agentcli.Request.Tools) to
// the CLI over Streamable HTTP on a loopback port, behind a bearer secret
// of its own, with the official Go SDK. What a call does (permission,
// the handler, renaming) is the caller's: the server only carries it.
package hostmcp

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one tool the server lists.
type Tool struct {
	Name        string
	Description string
	// Schema is the input schema, a JSON object schema.
	Schema json.RawMessage
	// Meta is the tool's _meta in tools/list.
	Meta map[string]any
}

// Call runs a call of tool name with input (a JSON object, "{}" when the
// CLI sent none); meta is the call's _meta. It returns the text of the
// result and whether it is an error. ctx ends when the CLI gives up on
// the call or the server closes.
type Call func(ctx context.Context, name string, input json.RawMessage, meta map[string]any) (text string, isError bool)

// Config configures a server.
type Config struct {
	// Name is the server's name in its initialize answer.
	Name string
	// Tools are the tools it lists.
	Tools []Tool
	// Call runs tool calls.
	Call Call
	// Routes are further HTTP handlers, by path, behind the same secret.
	Routes map[string]http.Handler
}

// Server is a running host MCP server.
type Server struct {
	url    string
	secret string
	http   *http.Server
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc

	streams sync.Map // streamHeader value -> *keepAliveWriter

	listed   atomic.Bool
	rejected atomic.Int64
	once     sync.Once
	done     chan struct{}
}

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// Start starts a server on 127.0.0.1 on a port of its own.
func Start(cfg Config) (*Server, error) {
	if cfg.Call == nil {
		return nil, errors.New("hostmcp: no Call")
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		secret: hex.EncodeToString(b[:]),
		ln:     ln,
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	s.url = "http://" + ln.Addr().String() + Path
	every := keepAliveEvery
	name := cfg.Name
	if name == "" {
		name = "agentcli"
	}
	ms := mcp.NewServer(&mcp.Implementation{Name: name, Title: name, Version: "1"}, nil)
	ms.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				s.listed.Store(true)
			}
			return next(ctx, method, req)
		}
	})
	for _, t := range cfg.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		name := t.Name
		call := cfg.Call
		ms.AddTool(&mcp.Tool{Name: name, Description: t.Description, InputSchema: schema, Meta: t.Meta},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				input := req.Params.Arguments
				if len(input) == 0 || string(input) == "null" {
					input = json.RawMessage("{}")
				}
				ctx, stop := s.merge(ctx)
				defer stop()
				pctx, pstop := context.WithCancel(ctx)
				pdone := make(chan struct{})
				go func() {
					defer close(pdone)
					s.keepCallAlive(pctx, req, every)
				}()
				defer func() {
					pstop()
					<-pdone
				}()
				text, isErr := call(ctx, name, input, req.Params.Meta)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}, nil
			})
	}
	mux := http.NewServeMux()
	mux.Handle(Path, s.keepAlive(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, nil)))
	for p, h := range cfg.Routes {
		mux.Handle(p, h)
	}
	s.http = &http.Server{
		Handler:           s.auth(mux),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// merge returns a context that ends when ctx or the server's ends.
func (s *Server) merge(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// auth refuses a request without the server's bearer secret.
func (s *Server) auth(next http.Handler) http.Handler {
	want := []byte("Bearer " + s.secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			s.rejected.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// URL is the MCP endpoint.
func (s *Server) URL() string { return s.url }

// Secret is the bearer secret every request must carry.
func (s *Server) Secret() string { return s.secret }

// Header is the Authorization header's value.
func (s *Server) Header() string { return "Bearer " + s.secret }

// Listed reports whether a client with the secret has listed the tools.
func (s *Server) Listed() bool { return s.listed.Load() }

// Rejected reports how many requests came without the secret.
func (s *Server) Rejected() int64 { return s.rejected.Load() }

// Context ends when the server closes.
func (s *Server) Context() context.Context { return s.ctx }

// Close stops the server: calls in progress see their context end, and
// every connection is closed. It is idempotent.
func (s *Server) Close() {
	s.once.Do(func() {
		s.cancel()
		_ = s.http.Close()
		<-s.done
	})
}
