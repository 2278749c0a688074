package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"pgregory.net/rapid"
)

func TestRedact(t *testing.T) {
	cases := map[string]string{
		"key sk-ant-api03-AbCdEfGhIjKlMnOp used":                 "key [REDACTED] used",
		"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc":         "Authorization: Bearer [REDACTED]",
		"OPENAI key sk-proj-abcdefghijklmnopqrstuv":              "OPENAI key [REDACTED]",
		"x-goog-api-key: AIzaSyA1234567890abcdefghijklmnopqrstu": "x-goog-api-key: [REDACTED]",
		`{"api_key": "hunter2hunter2"}`:                          `{"api_key": "[REDACTED]"}`,
		"nothing secret here: exit status 1":                     "nothing secret here: exit status 1",
	}
	for in, want := range cases {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// Property: Tail never exceeds n characters, is valid UTF-8, and keeps the
// end of the text.
func TestTailProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		n := rapid.IntRange(1, 600).Draw(t, "n")
		got := Tail(s, n)
		if r := []rune(got); len(r) > n {
			t.Fatalf("Tail has %d runes > %d", len(r), n)
		}
		if strings.Contains(got, "\x00") && !strings.Contains(s, "\x00") {
			t.Fatalf("invented bytes")
		}
		clean := strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
		if !strings.Contains(clean, "[REDACTED]") && !strings.Contains(Redact(s), "[REDACTED]") && !strings.HasSuffix(clean, got) {
			t.Fatalf("Tail(%q) = %q is not the end of the text", s, got)
		}
	})
}

func TestDecodeObject(t *testing.T) {
	var v struct {
		Type string `json:"type"`
		N    int    `json:"n"`
	}
	// A wrongly typed field keeps the rest of the line.
	if n := DecodeObject("x", []byte(`{"type":"result","n":"seven"}`), &v); n != nil || v.Type != "result" {
		t.Fatalf("notice %+v, v %+v", n, v)
	}
	for _, bad := range []string{"Loading...", `{"type":`, `[1,2]`, ""} {
		n := DecodeObject("x", []byte(bad), &v)
		if len(n) != 1 || n[0].Kind != agentcli.EventNotice || !errors.Is(n[0].Err, agentcli.ErrParse) {
			t.Fatalf("%q: %+v", bad, n)
		}
		var pe *agentcli.ParseError
		if !errors.As(n[0].Err, &pe) || string(pe.Line) != bad {
			t.Fatalf("%q: offending line not kept: %+v", bad, pe)
		}
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "cli")
	plain := filepath.Join(dir, "plain")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644)
	t.Setenv("PATH", dir)
	cases := []struct {
		path string
		want error
	}{
		{exe, nil},
		{"cli", nil},
		{"plain", agentcli.ErrNotExecutable},
		{plain, agentcli.ErrNotExecutable},
		{dir, agentcli.ErrNotExecutable},
		{"missing", agentcli.ErrNotFound},
		{filepath.Join(dir, "missing"), agentcli.ErrNotFound},
	}
	for _, c := range cases {
		cfg := Config{Backend: "b", DefaultPath: "b", Options: &agentcli.Options{Path: c.path}}
		got, err := cfg.Resolve()
		if c.want == nil {
			if err != nil || got != exe {
				t.Errorf("Resolve(%q) = %q, %v", c.path, got, err)
			}
			continue
		}
		var be *agentcli.BinaryError
		if !errors.Is(err, c.want) || !errors.As(err, &be) || be.Backend != "b" || be.Path != c.path {
			t.Errorf("Resolve(%q) err = %v, want %v", c.path, err, c.want)
		}
	}
}

func TestEnvDropsNestedSessionGuard(t *testing.T) {
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("KEEP_ME", "yes")
	env := Config{Options: &agentcli.Options{Env: []string{"A=1"}}}.Env([]string{"A=2"}, []string{"A=3"})
	joined := "\n" + strings.Join(env, "\n") + "\n"
	if strings.Contains(joined, "\nCLAUDECODE=") || !strings.Contains(joined, "\nKEEP_ME=yes\n") {
		t.Fatalf("env %q", env)
	}
	if i, j, k := strings.Index(joined, "\nA=1\n"), strings.Index(joined, "\nA=2\n"), strings.Index(joined, "\nA=3\n"); !(i < j && j < k) {
		t.Fatalf("precedence order wrong: options %d, backend %d, request %d", i, j, k)
	}
}
