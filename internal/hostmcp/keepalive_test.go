package hostmcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the server's secret to every request.
type bearer struct {
	header string
	next   http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", b.header)
	return b.next.RoundTrip(r)
}

// callSlow calls a tool whose handler runs for run through a client that
// gives up on a response whose headers take longer than headers (as
// gemini's fetch does after 60 s), asking for progress; it returns the
// call's result text or error and the number of progress notifications.
func callSlow(t *testing.T, run, headers time.Duration) (string, int64, error) {
	t.Helper()
	srv, err := Start(Config{
		Tools: []Tool{{Name: "build"}},
		Call: func(ctx context.Context, name string, input json.RawMessage, meta map[string]any) (string, bool) {
			select {
			case <-time.After(run):
				return "built", false
			case <-ctx.Done():
				return "cancelled", true
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var progressed atomic.Int64
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progressed.Add(1) },
	})
	hc := &http.Client{Transport: bearer{srv.Header(), &http.Transport{ResponseHeaderTimeout: headers}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	p := &mcp.CallToolParams{Name: "build", Arguments: map[string]any{}}
	p.SetProgressToken("tok")
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		return "", progressed.Load(), err
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, ""), progressed.Load(), nil
}

// TestKeepAlive: a tool call that runs far longer than the client waits
// for a response's headers gets its answer, because the server starts the
// response stream and keeps it alive (SSE comments) while the call runs,
// and sends a progress notification every keepAliveEvery to a client that
// asked for progress. With keep-alives rarer than the client's wait, the
// same call fails: the client gives up.
func TestKeepAlive(t *testing.T) {
	defer func(d time.Duration) { keepAliveEvery = d }(keepAliveEvery)
	keepAliveEvery = 100 * time.Millisecond
	text, progressed, err := callSlow(t, time.Second, 400*time.Millisecond)
	if err != nil || text != "built" {
		t.Fatalf("call = %q, %v; want built", text, err)
	}
	if progressed < 5 {
		t.Errorf("%d progress notifications in a 1 s call, want one every 100 ms", progressed)
	}

	keepAliveEvery = time.Hour
	if text, _, err := callSlow(t, time.Second, 400*time.Millisecond); err == nil {
		t.Errorf("without keep-alives the call got %q; want the client to give up on the headers", text)
	}
}

// TestKeepAliveQuick: a quick call is answered as before, with no
// keep-alive and no progress.
func TestKeepAliveQuick(t *testing.T) {
	text, progressed, err := callSlow(t, 0, 5*time.Second)
	if err != nil || text != "built" || progressed != 0 {
		t.Fatalf("call = %q, %v, %d progress notifications; want built and none", text, err, progressed)
	}
}

// TestKeepAlivePingHeaders: a ping before the SDK's first write sends the
// SDK's headers of an SSE answer with the comment; an answer that is not
// SSE gets no comment (it would break it), and nothing after close.
func TestKeepAlivePingHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	k := &keepAliveWriter{w: rec, header: http.Header{}}
	k.Header().Set("Content-Type", "text/event-stream")
	k.Header().Set("X-From-Sdk", "1")
	k.ping()
	if rec.Code != http.StatusOK || rec.Header().Get("X-From-Sdk") != "1" || rec.Body.String() != ": keepalive\n\n" {
		t.Errorf("SSE ping: code %d, headers %v, body %q", rec.Code, rec.Header(), rec.Body.String())
	}
	k.close()
	k.ping()
	if rec.Body.String() != ": keepalive\n\n" {
		t.Errorf("a ping after close wrote %q", rec.Body.String())
	}

	rec = httptest.NewRecorder()
	k = &keepAliveWriter{w: rec, header: http.Header{}}
	k.Header().Set("Content-Type", "application/json")
	k.ping()
	k.Write([]byte(`{}`))
	if rec.Body.String() != `{}` || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("JSON answer: headers %v, body %q", rec.Header(), rec.Body.String())
	}
}
