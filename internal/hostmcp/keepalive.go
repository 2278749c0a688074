package hostmcp

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keepAliveEvery is how often a tool call that is still running shows
// the CLI that it is: an SSE comment on the call's response stream (whose
// headers it first writes, if the SDK has not) and, when the CLI asked for
// progress, a progress notification. The CLIs' HTTP clients give up on a
// response whose headers do not come within 60 s (gemini 0.61.0's fetch)
// or whose body is silent for 5 minutes (Node's and Bun's fetch), and the
// MCP TypeScript SDK's request timer (60 s unless configured) is reset by
// progress where the CLI asks for that (opencode 1.18.33). Every SSE
// reader ignores a comment. Read once by Start; a variable for tests.
var keepAliveEvery = 15 * time.Second

// streamHeader is the request header by which a tool call finds the
// response stream of the POST that carries it (set by keepAlive over any
// value the client sent).
const streamHeader = "X-Agentcli-Stream"

// keepAlive serves next, giving a POST answered with an SSE stream a
// keepAliveWriter that the tool call it carries finds by streamHeader
// (see Server.stream).
func (s *Server) keepAlive(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			r.Header.Del(streamHeader) // only keepAlive names a stream
			next.ServeHTTP(w, r)
			return
		}
		id := rand.Text()
		kw := &keepAliveWriter{w: w, header: http.Header{}}
		r.Header.Set(streamHeader, id)
		s.streams.Store(id, kw)
		defer s.streams.Delete(id)
		defer kw.close()
		next.ServeHTTP(kw, r)
	})
}

// stream returns the response stream of the POST that carried a call
// with extra, or nil.
func (s *Server) stream(extra *mcp.RequestExtra) *keepAliveWriter {
	if extra == nil || extra.Header == nil {
		return nil
	}
	kw, _ := s.streams.Load(extra.Header.Get(streamHeader))
	w, _ := kw.(*keepAliveWriter)
	return w
}

// keepAliveWriter is the ResponseWriter the SDK writes a POST's answer
// to. The SDK sets its headers in a map of the writer's own, copied to
// the real response when the SDK first writes; ping may start the
// response before that, as an SSE stream with status 200 (the only
// answer the SDK gives a tool call that runs this long). Every write
// holds mu; none happens after close.
type keepAliveWriter struct {
	w      http.ResponseWriter
	header http.Header

	mu      sync.Mutex
	started bool // the real response's headers are written
	closed  bool // the handler returned, or a keep-alive failed
}

func (k *keepAliveWriter) Header() http.Header { return k.header }

// startLocked writes the real response's headers, the SDK's with status
// code, unless ping wrote them already.
func (k *keepAliveWriter) startLocked(code int) {
	if k.started {
		return
	}
	k.started = true
	for key, v := range k.header {
		k.w.Header()[key] = v
	}
	k.w.WriteHeader(code)
}

func (k *keepAliveWriter) WriteHeader(code int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.startLocked(code)
}

func (k *keepAliveWriter) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.startLocked(http.StatusOK)
	return k.w.Write(p)
}

func (k *keepAliveWriter) FlushError() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return http.NewResponseController(k.w).Flush()
}

func (k *keepAliveWriter) Unwrap() http.ResponseWriter { return k.w }

// close ends ping's writes: the handler is returning.
func (k *keepAliveWriter) close() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
}

// ping writes a keep-alive comment, first starting the response as an
// SSE stream if the SDK has not written yet.
func (k *keepAliveWriter) ping() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	if !k.started {
		// The SDK has set its headers for an SSE answer by now (it does
		// before it runs the call); they go out as they are.
		if k.header.Get("Content-Type") != "text/event-stream" {
			k.closed = true // not an SSE answer: a comment would break it
			return
		}
		k.startLocked(http.StatusOK)
	}
	_, err := k.w.Write([]byte(": keepalive\n\n"))
	if err == nil {
		err = http.NewResponseController(k.w).Flush()
	}
	if err != nil {
		k.closed = true
	}
}

// keepCallAlive shows the CLI every every (keepAliveEvery) that the call
// req is still running, until ctx ends: a keep-alive on its response
// stream (s.stream) and, when the CLI asked for progress (a progress
// token in the call's _meta), a progress notification. It runs in the
// call's handler, after the SDK has read the POST that carries it.
func (s *Server) keepCallAlive(ctx context.Context, req *mcp.CallToolRequest, every time.Duration) {
	kw := s.stream(req.Extra)
	token := req.Params.GetProgressToken()
	if kw == nil && (token == nil || req.Session == nil) {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if kw != nil {
			kw.ping()
		}
		if token != nil && req.Session != nil {
			// A failure (the stream is gone) is the call's to see.
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: "running"})
		}
	}
}
