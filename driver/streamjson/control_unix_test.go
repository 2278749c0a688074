//go:build unix

package streamjson_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/live"
)

// The test binary is the fake CLI when STREAMJSON_FAKE names its mode:
// "ok" answers initialize, then, for the prompt, asks the host with a
// request of an unknown subtype, withdraws a request, asks can_use_tool
// twice, writes the host's answers to STREAMJSON_ANSWERS and ends the
// turn; "refuse" refuses initialize; "die" exits without answering it.
func TestMain(m *testing.M) {
	if mode := os.Getenv("STREAMJSON_FAKE"); mode != "" {
		fakeCLI(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeCLI(mode string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := func(s string) { fmt.Println(s) }
	if !in.Scan() {
		return
	}
	switch mode {
	case "die":
		return
	case "refuse":
		out(`{"type":"control_response","response":{"subtype":"error","request_id":"agentcli_1","error":"no such thing"}}`)
		in.Scan() // until the host closes stdin
		return
	}
	out(`{"type":"control_response","response":{"request_id":"agentcli_1","subtype":"success","response":{"commands":[]}}}`)
	if !in.Scan() { // the prompt
		return
	}
	out(`{"type":"control_request","request_id":"q1","request":{"subtype":"elicitation","message":"?"}}`)
	out(`{"type":"control_cancel_request","request_id":"q0"}`)
	out(`{"request":{"tool_name":"Bash","input":{"command":"ls"},"subtype":"can_use_tool","tool_use_id":"t1"},"request_id":"q2","type":"control_request"}`)
	out(`{"type":"control_request","request_id":"q3","request":{"subtype":"can_use_tool","tool_name":"Write","input":"not an object","tool_use_id":"t2"}}`)
	var answers []string
	for len(answers) < 3 && in.Scan() {
		answers = append(answers, in.Text())
	}
	_ = os.WriteFile(os.Getenv("STREAMJSON_ANSWERS"), []byte(strings.Join(answers, "\n")), 0o600)
	out(`{"type":"result","result":"done"}`)
	in.Scan()
}

// start starts a session of toyProto (example_test.go) on the fake CLI in
// mode, whose answers go to the file answers.
func start(t *testing.T, mode, answers string, onPermission agentcli.PermissionFunc) (*live.Session, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return live.Start(ctx, live.Config{
		Backend: "toy",
		Path:    self,
		Options: agentcli.Options{Path: self, KillGrace: 300 * time.Millisecond},
		Env:     append(os.Environ(), "STREAMJSON_FAKE="+mode, "STREAMJSON_ANSWERS="+answers),
		Request: &agentcli.Request{Permission: agentcli.PermissionAsk, OnPermission: onPermission},
		Proto:   newToyProto,
	})
}

// The CLI's requests are answered by request id: an unknown subtype is
// refused as unsupported, can_use_tool goes to the session's permission
// handling (an input that is not an object is seen as {}), and a
// withdrawn request is dropped.
func TestConnAnswers(t *testing.T) {
	answers := filepath.Join(t.TempDir(), "answers")
	var mu sync.Mutex
	var tools []string
	s, err := start(t, "ok", answers, func(_ context.Context, pr *agentcli.PermissionRequest) agentcli.PermissionDecision {
		mu.Lock()
		tools = append(tools, pr.Tool.Name+" "+string(pr.Tool.Input))
		mu.Unlock()
		if pr.Tool.Name == "Bash" {
			return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
		}
		return agentcli.PermissionDecision{Message: "not that"}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var text string
	for ev, err := range s.Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Result != nil {
			text = ev.Result.Text
		}
	}
	if text != "done" {
		t.Fatalf("result %q", text)
	}
	b, err := os.ReadFile(answers)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{
		"q1": {"subtype": "error", "request_id": "q1", "error": `agentcli does not support control request "elicitation"`},
		"q2": {"subtype": "success", "request_id": "q2", "response": map[string]any{"behavior": "allow", "updatedInput": map[string]any{"command": "ls"}}},
		"q3": {"subtype": "success", "request_id": "q3", "response": map[string]any{"behavior": "deny", "message": "not that"}},
	}
	for _, l := range strings.Split(string(b), "\n") {
		var m struct {
			Type     string         `json:"type"`
			Response map[string]any `json:"response"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Type != "control_response" {
			t.Fatalf("answer %s: %v", l, err)
		}
		id, _ := m.Response["request_id"].(string)
		w, ok := want[id]
		if !ok {
			t.Fatalf("answer to %q: %s", id, l)
		}
		if got, exp := fmt.Sprint(m.Response), fmt.Sprint(w); got != exp {
			t.Errorf("answer to %s: %s, want %s", id, got, exp)
		}
		delete(want, id)
	}
	if len(want) > 0 {
		t.Errorf("no answer to %v", want)
	}
	slices.Sort(tools)
	if got := strings.Join(tools, "; "); got != `Bash {"command":"ls"}; Write {}` {
		t.Errorf("permission requests %s", got)
	}
}

// A refused initialize is a *agentcli.ProtocolError with the CLI's
// message; a CLI that exits before it answers fails the start with the
// session's error (exit status 0 without a result).
func TestConnCallFails(t *testing.T) {
	deny := func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{}
	}
	_, err := start(t, "refuse", "", deny)
	var pe *agentcli.ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no such thing") || !strings.Contains(pe.Method, "initialize") {
		t.Fatalf("refused: %v", err)
	}
	_, err = start(t, "die", "", deny)
	if !errors.Is(err, agentcli.ErrNoResult) && !errors.As(err, &pe) {
		t.Fatalf("a CLI that died before it answered: %v", err)
	}
}
