package qwen

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

func TestSystemSettingsPath(t *testing.T) {
	s, d := systemSettingsPath([]string{envSystemSettings + "=/x/s.json"})
	if s != "/x/s.json" || d != filepath.Join("/x", "system-defaults.json") {
		t.Errorf("%q %q", s, d)
	}
	// The defaults stay where they were when the settings move.
	s, d = systemSettingsPath([]string{envSystemSettings + "=/x/s.json", envSystemDefaults + "=/y/d.json"})
	if s != "/x/s.json" || d != "/y/d.json" {
		t.Errorf("%q %q", s, d)
	}
	if s, _ := systemSettingsPath(nil); s == "" {
		t.Error("no default system settings path")
	}
}

func TestReadSystemSettings(t *testing.T) {
	dir := t.TempDir()
	if m, err := readSystemSettings(filepath.Join(dir, "none.json")); err != nil || len(m) != 0 {
		t.Errorf("missing file: %v, %v", m, err)
	}
	f := filepath.Join(dir, "s.json")
	if err := os.WriteFile(f, []byte(`{"hooks":{"PreToolUse":[{"matcher":"x"}]},"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if m, err := readSystemSettings(f); err != nil || m["a"] != 1.0 || m["hooks"] == nil {
		t.Errorf("valid file: %v, %v", m, err)
	}
	for _, bad := range []string{`{"a": 1, // comment` + "\n}", `[1]`, `null`} {
		if err := os.WriteFile(f, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		var ue *agentcli.UnsupportedError
		if _, err := readSystemSettings(f); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want an *agentcli.UnsupportedError", bad, err)
		}
	}
}

func TestHookAnswer(t *testing.T) {
	var seen []agentcli.ToolUse
	var post []agentcli.ToolResult
	req := &agentcli.Request{Hooks: &agentcli.Hooks{
		PreToolUse: func(ctx context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
			seen = append(seen, in.Tool)
			switch {
			case strings.Contains(string(in.Tool.Input), "rm"):
				return agentcli.PreToolUseOutput{Deny: true, Reason: "no rm"}
			case strings.Contains(string(in.Tool.Input), "rewrite"):
				return agentcli.PreToolUseOutput{Input: json.RawMessage(`{"command":"echo x"}`)}
			}
			return agentcli.PreToolUseOutput{}
		},
		PostToolUse: func(ctx context.Context, in *agentcli.PostToolUseInput) agentcli.PostToolUseOutput {
			post = append(post, in.Result)
			return agentcli.PostToolUseOutput{Context: "ctx"}
		},
		Stop: func(ctx context.Context, in *agentcli.StopInput) agentcli.StopOutput {
			if in.Continued || in.Text != "hi" {
				return agentcli.StopOutput{}
			}
			return agentcli.StopOutput{Continue: "go on"}
		},
	}}
	h := driver.NewRunHooks(Name, req)
	pre := &preChecked{ids: map[string]bool{}}
	ask := func(body string) string {
		var in hookInput
		if err := json.Unmarshal([]byte(body), &in); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(hookAnswer(context.Background(), h, nil, pre, &in))
		return string(b)
	}
	for body, want := range map[string]string{
		`{"hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"ls"},"tool_call_id":"c1"}`:                                                        `{}`,
		`{"hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"rm x"}}`:                                                                          `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm"}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"rewrite"}}`:                                                                       `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":` + jsonString(driver.RewriteRefused) + `}}`,
		`{"hook_event_name":"PostToolUse","tool_name":"run_shell_command","tool_input":{},"tool_response":{"llmContent":"Command: ...","returnDisplay":"out"},"tool_call_id":"c1"}`: `{"hookSpecificOutput":{"additionalContext":"ctx","hookEventName":"PostToolUse"}}`,
		`{"hook_event_name":"PostToolUseFailure","tool_name":"read_file","tool_input":{},"error":"boom","tool_call_id":"c2"}`:                                                       `{"hookSpecificOutput":{"additionalContext":"ctx","hookEventName":"PostToolUseFailure"}}`,
		`{"hook_event_name":"Stop","last_assistant_message":"hi"}`:                                                                                                                  `{"decision":"block","reason":"go on"}`,
		`{"hook_event_name":"Stop","last_assistant_message":"hi","stop_hook_active":true}`:                                                                                          `{}`,
		`{"hook_event_name":"Notification"}`: `{}`,
	} {
		if got := ask(body); got != want {
			t.Errorf("%s:\n got %s\nwant %s", body, got, want)
		}
	}
	// A call the session put to PreToolUse already is left alone, once.
	pre.add("c9")
	body := `{"hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"rm x"},"tool_call_id":"c9"}`
	if got := ask(body); got != `{}` {
		t.Errorf("a checked call: %s", got)
	}
	if got := ask(body); !strings.Contains(got, "no rm") {
		t.Errorf("a checked call, again: %s", got)
	}
	i := slices.IndexFunc(seen, func(u agentcli.ToolUse) bool { return u.ID == "c1" })
	if len(seen) != 4 || i < 0 || seen[i].Name != agentcli.ToolNameBash || string(seen[i].Input) != `{"command":"ls"}` {
		t.Errorf("PreToolUse saw %+v", seen)
	}
	slices.SortFunc(post, func(a, b agentcli.ToolResult) int { return strings.Compare(a.ID, b.ID) })
	if len(post) != 2 || post[0].Output != "out" || post[0].ID != "c1" || post[0].IsError || post[1].Output != "boom" || !post[1].IsError {
		t.Errorf("PostToolUse saw %+v", post)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestHooksOff(t *testing.T) {
	for _, c := range []struct {
		args, env []string
		off       bool
	}{
		{nil, nil, false},
		{[]string{"--debug"}, []string{"QWEN_CODE_SAFE_MODE=0", "QWEN_CODE_SIMPLE=false"}, false},
		{[]string{"--safe-mode"}, nil, true},
		{[]string{"--bare=true"}, nil, true},
		{[]string{"--bare=false"}, nil, false},
		{nil, []string{"QWEN_CODE_SAFE_MODE=1"}, true},
		{nil, []string{"QWEN_CODE_SIMPLE=true"}, true},
		{nil, []string{"QWEN_CODE_SIMPLE=1", "QWEN_CODE_SIMPLE="}, false},
	} {
		if got := hooksOff(c.args, c.env) != ""; got != c.off {
			t.Errorf("%q %q: off %v, want %v", c.args, c.env, got, c.off)
		}
	}
}
