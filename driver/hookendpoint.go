package driver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/agentcli/agentcli"
)

// A CLI whose own hooks can call out (gemini's and droid's command hooks,
// qwen's and copilot's http hooks) reaches the run's Request.Hooks
// through a HookEndpoint: an HTTP endpoint of the run's own on the
// loopback interface, behind a bearer secret of the run's own, which
// lives as long as the run (or live session).

// MaxHookInput bounds what a HookEndpoint reads of one hook's input.
const MaxHookInput = 64 << 20

// HookEndpoint is where a run's hooks post their input (see ServeHooks).
type HookEndpoint struct {
	// URL is the endpoint: http://127.0.0.1:PORT/hook.
	URL string
	// Authorization is the value of the Authorization header every post
	// must carry: "Bearer " and the run's secret. It is a credential:
	// keep it in the run's private files or the CLI's stdin, never on a
	// command line.
	Authorization string
}

// ServeHooks starts a HookEndpoint for run r. Each POST to its URL with
// the right Authorization has its JSON body (at most MaxHookInput bytes)
// decoded into a new In and passed to answer, whose result is the JSON
// answer; any other request is refused (401), a body that is not an In
// too (400). answer's context ends when the run ends or the poster goes
// away. The endpoint stops when the run ends (Run.Defer). ServeHooks does
// not block.
func ServeHooks[In any](r *Run, answer func(ctx context.Context, in *In) any) (*HookEndpoint, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	auth := "Bearer " + hex.EncodeToString(b[:])
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := HookHandler(ctx, auth, answer)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	r.Defer(func() {
		cancel()
		_ = srv.Close()
	})
	return &HookEndpoint{URL: "http://" + ln.Addr().String() + "/hook", Authorization: auth}, nil
}

// HookHandler is ServeHooks's handler, on its own for tests: each POST to
// /hook with Authorization auth has its body decoded into a new In and
// answered with answer's result as JSON, under a context that ends with
// ctx or when the poster goes away.
func HookHandler[In any](ctx context.Context, auth string, answer func(ctx context.Context, in *In) any) http.Handler {
	want := []byte(auth)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/hook" || req.Method != http.MethodPost ||
			subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, MaxHookInput))
		in := new(In)
		if err != nil || json.Unmarshal(body, in) != nil {
			http.Error(w, "bad hook input", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(req.Context(), cancel)
		defer stop()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer(ctx, in))
	})
}

// RelayScript returns a JavaScript module (for node, or bun) that a
// CLI's command hook runs: it posts its stdin to the endpoint and writes
// the answer to stdout (then exits 0: bun would wait on), and exits 2
// (which blocks the call in Claude
// Code's hook protocol and its followers) when the endpoint cannot be
// reached or refuses. It holds the secret: write it to a private file.
func (e *HookEndpoint) RelayScript() string {
	u, _ := json.Marshal(e.URL)
	a, _ := json.Marshal(e.Authorization)
	return `const parts = [];
process.stdin.on("data", (c) => parts.push(c));
process.stdin.on("end", async () => {
  try {
    const res = await fetch(` + string(u) + `, {method: "POST", headers: {"authorization": ` + string(a) + `, "content-type": "application/json"}, body: Buffer.concat(parts)});
    if (!res.ok) throw new Error("agentcli hook relay: HTTP " + res.status);
    const text = await res.text();
    process.stdout.write(text, () => process.exit(0));
  } catch (e) {
    process.stderr.write(String(e && e.message || e));
    process.exit(2);
  }
});
`
}

// HookToolUse is the tool use of a call a CLI's hook reports by its raw
// name and input: a tool of agentcli's MCP server under its own name
// (Kind other; hostTool is true: that server calls the hooks about it
// itself), any other named through t. An input that is not a JSON object
// is {}.
func HookToolUse(t Tools, host *HostTools, raw string, input json.RawMessage) (use agentcli.ToolUse, hostTool bool) {
	if len(input) == 0 || input[0] != '{' || !json.Valid(input) {
		input = json.RawMessage("{}")
	}
	name, kind := t.Canonical(raw)
	if n, ok := host.Match(raw); ok {
		name, kind, hostTool = n, agentcli.ToolOther, true
	}
	return agentcli.ToolUse{Name: name, RawName: raw, Kind: kind, Input: input}, hostTool
}

// HookTimeout is how long a CLI should give one of the run's hooks: the
// request's PermissionTimeout (or the default), which bounds the
// callbacks behind it, and 10 s more for the relay.
func (r *Run) HookTimeout() time.Duration {
	t := r.Req.PermissionTimeout
	if t <= 0 {
		t = agentcli.DefaultPermissionTimeout
	}
	return t + 10*time.Second
}

// WriteRelay writes the endpoint's RelayScript to a private file in the
// run's temporary directory and returns its path.
func (e *HookEndpoint) WriteRelay(r *Run) (string, error) {
	dir, err := r.TempDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "hook-relay.mjs")
	return p, os.WriteFile(p, []byte(e.RelayScript()), 0o600)
}
