package driver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestServeHooks: posts without the run's Authorization, to another path
// or with another method are refused (401), a body that is not the input
// 400, and a good one is answered with answer's result; once the run
// ends the endpoint is gone.
func TestServeHooks(t *testing.T) {
	r := &Run{}
	type in struct {
		Event string `json:"hook_event_name"`
	}
	var seen []string
	ep, err := ServeHooks(r, func(_ context.Context, i *in) any {
		seen = append(seen, i.Event)
		return map[string]string{"answer": "to " + i.Event}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ep.URL, "http://127.0.0.1:") || !strings.HasSuffix(ep.URL, "/hook") || !strings.HasPrefix(ep.Authorization, "Bearer ") || len(ep.Authorization) < 30 {
		t.Fatalf("endpoint %+v", ep)
	}
	post := func(method, url, auth, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return -1, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	const good = `{"hook_event_name":"Stop"}`
	for _, c := range []struct{ method, url, auth string }{
		{http.MethodPost, ep.URL, ""},
		{http.MethodPost, ep.URL, "Bearer wrong"},
		{http.MethodPost, ep.URL, strings.TrimPrefix(ep.Authorization, "Bearer ")},
		{http.MethodGet, ep.URL, ep.Authorization},
		{http.MethodPost, strings.TrimSuffix(ep.URL, "/hook") + "/other", ep.Authorization},
	} {
		if code, _ := post(c.method, c.url, c.auth, good); code != http.StatusUnauthorized {
			t.Errorf("%s %s with %q: %d, want 401", c.method, c.url, c.auth, code)
		}
	}
	if code, _ := post(http.MethodPost, ep.URL, ep.Authorization, "not json"); code != http.StatusBadRequest {
		t.Errorf("bad input: %d, want 400", code)
	}
	if len(seen) != 0 {
		t.Fatalf("refused posts were answered: %v", seen)
	}
	code, body := post(http.MethodPost, ep.URL, ep.Authorization, good)
	var out map[string]string
	if code != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil || out["answer"] != "to Stop" {
		t.Fatalf("good post: %d %q", code, body)
	}
	r.Cleanup()
	if code, _ := post(http.MethodPost, ep.URL, ep.Authorization, good); code != -1 {
		t.Errorf("after the run: %d, want no endpoint", code)
	}
}

// TestRelayScript: node runs the relay script, which posts its stdin to
// the endpoint and prints the answer (exit 0), and exits 2 when the
// endpoint refuses.
func TestRelayScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	r := &Run{}
	defer r.Cleanup()
	ep, err := ServeHooks(r, func(_ context.Context, i *map[string]any) any { return map[string]any{"got": (*i)["x"]} })
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		ep   HookEndpoint
		want string
		code int
	}{
		{*ep, `{"got":"y"}`, 0},
		{HookEndpoint{URL: ep.URL, Authorization: "Bearer wrong"}, "", 2},
	} {
		script := dir + "/relay.mjs"
		if err := writeFile(script, c.ep.RelayScript()); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(node, script)
		cmd.Stdin = strings.NewReader(`{"x":"y"}`)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || strings.TrimSpace(string(out)) != c.want {
			t.Errorf("relay with %q: exit %d, stdout %q; want %d, %q", c.ep.Authorization[:12], code, out, c.code, c.want)
		}
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
