package driver

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/tools/clis"
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

// testSpec is a minimal backend declaration for runner tests.
func testSpec() *Spec {
	return &Spec{Name: "b", Binary: "b", Package: "b-pkg", Caps: agentcli.Capabilities{Resume: true, SystemPrompt: agentcli.SystemPromptDeveloper,
		PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionDeny}}}
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
		b := New(testSpec(), &agentcli.Options{Path: c.path}).(*Backend)
		got, err := b.resolve()
		if c.want == nil {
			if err != nil || got != exe {
				t.Errorf("resolve(%q) = %q, %v", c.path, got, err)
			}
			continue
		}
		var be *agentcli.BinaryError
		if !errors.Is(err, c.want) || !errors.As(err, &be) || be.Backend != "b" || be.Path != c.path {
			t.Errorf("resolve(%q) err = %v, want %v", c.path, err, c.want)
		}
		// A missing binary says how to install it and where to point
		// agentcli at it.
		if c.want == agentcli.ErrNotFound {
			for _, s := range []string{"npm install -g b-pkg", "Options.Path", "BACKEND_CLI_PATH"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("resolve(%q) err = %q lacks %q", c.path, err, s)
				}
			}
		}
	}
}

// A pinned CLI that is not on PATH is found in the per-user cache that
// `agentcli install` fills, at the pinned version only; PATH comes first;
// Options.Path and other names are not looked up there; the hint of a
// missing pinned CLI names the install command and the version.
func TestResolveCache(t *testing.T) {
	home, path := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("PATH", path)
	pinned, _ := clis.Lookup("codex")
	spec := &Spec{Name: "codex", Binary: "codex", Package: pinned.Package}
	b := New(spec, nil).(*Backend)
	_, err := b.resolve()
	for _, s := range []string{clis.InstallCommand + " codex", pinned.Package + "@" + pinned.Version, "Options.Path", "BACKEND_CLI_PATH"} {
		if !errors.Is(err, agentcli.ErrNotFound) || !strings.Contains(err.Error(), s) {
			t.Errorf("nothing installed: err %v lacks %q", err, s)
		}
	}
	cache, err := clis.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := pinned.Bin(cache)
	os.MkdirAll(filepath.Dir(bin), 0o755)
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o644)
	if _, err := b.resolve(); !errors.Is(err, agentcli.ErrNotFound) {
		t.Errorf("a cached file that is not executable: %v", err)
	}
	os.Chmod(bin, 0o755)
	if got, err := b.resolve(); got != bin || err != nil {
		t.Errorf("cached: %q, %v; want %q", got, err, bin)
	}
	// Another version's directory is not used.
	other := pinned
	other.Version = "0.0.1"
	os.MkdirAll(filepath.Dir(other.Bin(cache)), 0o755)
	os.Rename(bin, other.Bin(cache))
	if _, err := b.resolve(); !errors.Is(err, agentcli.ErrNotFound) {
		t.Errorf("another version cached: %v", err)
	}
	os.Rename(other.Bin(cache), bin)
	// PATH first.
	onPath := filepath.Join(path, "codex")
	os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755)
	if got, _ := b.resolve(); got != onPath {
		t.Errorf("with codex on PATH: %q", got)
	}
	os.Remove(onPath)
	// Options.Path names another binary: not looked up in the cache.
	if _, err := New(spec, &agentcli.Options{Path: "codex-dev"}).(*Backend).resolve(); !errors.Is(err, agentcli.ErrNotFound) {
		t.Errorf("Options.Path codex-dev: %v", err)
	}
	// A backend that pins nothing has no cache and an npm hint.
	if _, err := New(testSpec(), nil).(*Backend).resolve(); !errors.Is(err, agentcli.ErrNotFound) || strings.Contains(err.Error(), clis.InstallCommand) {
		t.Errorf("unpinned: %v", err)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("KEEP_ME", "yes")
	b := New(testSpec(), &agentcli.Options{Env: []string{"A=1"}}).(*Backend)
	env := b.env(&agentcli.Request{Env: []string{"A=3"}})
	joined := "\n" + strings.Join(env, "\n") + "\n"
	if strings.Contains(joined, "\nCLAUDECODE=") || !strings.Contains(joined, "\nKEEP_ME=yes\n") {
		t.Fatalf("env %q", env)
	}
	if i, k := strings.Index(joined, "\nA=1\n"), strings.Index(joined, "\nA=3\n"); !(i < k) {
		t.Fatalf("precedence order wrong: options %d, request %d", i, k)
	}
	// ReplaceEnv: exactly the given variables, nothing inherited.
	env = b.env(&agentcli.Request{Env: []string{"B=2"}, ReplaceEnv: true})
	if strings.Join(env, " ") != "A=1 B=2" {
		t.Fatalf("ReplaceEnv env = %q", env)
	}
}

// Options are copied when the backend is created: editing the caller's
// struct afterwards changes nothing.
func TestOptionsCopied(t *testing.T) {
	o := &agentcli.Options{Path: "x", Env: []string{"A=1"}}
	b := New(testSpec(), o).(*Backend)
	o.Path = "y"
	o.Env[0] = "A=2"
	if got := b.Options(); got.Path != "x" || got.Env[0] != "A=1" || got.KillGrace == 0 || got.Logger == nil {
		t.Fatalf("options %+v", got)
	}
}

func TestWarnUnsupported(t *testing.T) {
	var logs bytes.Buffer
	b := New(testSpec(), &agentcli.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}).(*Backend)
	req := &agentcli.Request{Effort: agentcli.EffortMax, AllowedTools: []string{"Read"}, SystemPrompt: "x", SessionID: "s"}
	if err := b.warnUnsupported(req); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, "effort max") {
		t.Fatalf("warnings: %q", out)
	}
	// A limit the backend cannot enforce is an error, Strict or not.
	for _, r := range []*agentcli.Request{{MaxTurns: 3}, {MaxBudgetUSD: 0.5}} {
		var ue *agentcli.UnsupportedError
		if err := b.warnUnsupported(r); !errors.As(err, &ue) {
			t.Errorf("%+v: %v, want an *UnsupportedError", r, err)
		}
	}
	// A tool list the backend cannot enforce is never a warning: the
	// request fails before anything starts.
	if err := b.validate(req, false); !errors.Is(err, agentcli.ErrUnsupported) || !strings.Contains(err.Error(), "allowed/disallowed tools") {
		t.Fatalf("validate with a tool list the backend lacks: %v", err)
	}
	// Once per backend and option: the same request again says nothing,
	// a new option is warned about, and so is the same option on
	// another backend.
	logs.Reset()
	for range 3 {
		if err := b.warnUnsupported(req); err != nil {
			t.Fatal(err)
		}
	}
	if logs.Len() != 0 {
		t.Fatalf("warned again: %q", logs.String())
	}
	if err := b.warnUnsupported(&agentcli.Request{DisallowedTools: []string{"Bash"}, FallbackModel: "m"}); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, "fallback model") {
		t.Fatalf("a new option: %q", out)
	}
	logs.Reset()
	other := New(testSpec(), &agentcli.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}).(*Backend)
	if err := other.warnUnsupported(req); err != nil {
		t.Fatal(err)
	}
	if strings.Count(logs.String(), "level=WARN") != 1 {
		t.Fatalf("another backend: %q", logs.String())
	}
	// Strict: the first unsupported option is an error naming it.
	logs.Reset()
	strict := New(testSpec(), &agentcli.Options{Strict: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))}).(*Backend)
	err := strict.warnUnsupported(req)
	var ue *agentcli.UnsupportedError
	if !errors.As(err, &ue) || ue.Backend != "b" || ue.Feature != "effort max" || !errors.Is(err, agentcli.ErrUnsupported) || logs.Len() != 0 {
		t.Fatalf("strict: err %v, logs %q", err, logs.String())
	}
}

// Diagnose runs the binary for its version only and reports the tested
// range and the credential variables by name.
func TestDiagnose(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "cli")
	os.WriteFile(cli, []byte("#!/bin/sh\n[ \"$1\" = --version ] || exit 9\necho \"cli-tool 1.2.3 (build x)\"\n"), 0o755)
	spec := testSpec()
	spec.Tested = "1.2.3"
	spec.Credentials = []string{"B_TEST_KEY", "B_OTHER_KEY"}
	t.Setenv("B_TEST_KEY", "secret-value-123")
	d := New(spec, &agentcli.Options{Path: cli}).(*Backend).Diagnose(t.Context())
	if d.Status != agentcli.DiagnosisOK || d.Version != "1.2.3" || !d.InRange || d.Path != cli ||
		strings.Join(d.Credentials, ",") != "B_TEST_KEY" {
		t.Fatalf("diagnosis %+v", d)
	}
	spec.Tested = "1.2.4"
	if d := New(spec, &agentcli.Options{Path: cli}).(*Backend).Diagnose(t.Context()); d.Status != agentcli.DiagnosisWarning || d.InRange || !strings.Contains(d.Hint, "1.2.4") {
		t.Fatalf("untested version: %+v", d)
	}
	os.Unsetenv("B_TEST_KEY")
	spec.Tested = "1.2.3"
	if d := New(spec, &agentcli.Options{Path: cli}).(*Backend).Diagnose(t.Context()); d.Status != agentcli.DiagnosisWarning || len(d.Credentials) != 0 || !strings.Contains(d.Hint, "credential") {
		t.Fatalf("no credentials: %+v", d)
	}
	if d := New(spec, &agentcli.Options{Path: filepath.Join(dir, "missing")}).(*Backend).Diagnose(t.Context()); d.Status != agentcli.DiagnosisFailure || !strings.Contains(d.Hint, "not found") {
		t.Fatalf("missing binary: %+v", d)
	}
	// A Spec that knows where its CLI finds credentials: none is a
	// failure naming the variables, as a run's error does; a file the
	// Spec looks for is enough.
	cred := filepath.Join(dir, "login.json")
	spec.HasCredentials = func(r *Run) bool { return r.AnySet(spec.Credentials...) || FileExists(cred) }
	spec.Login = "run `cli login`"
	d = New(spec, &agentcli.Options{Path: cli}).(*Backend).Diagnose(t.Context())
	if d.Status != agentcli.DiagnosisFailure || d.Hint != "b: no credentials: set B_TEST_KEY or B_OTHER_KEY, or run `cli login`" {
		t.Fatalf("no credentials at all: %+v", d)
	}
	_, err := New(spec, &agentcli.Options{Path: cli}).Run(t.Context(), &agentcli.Request{Prompt: "p"})
	var ce *agentcli.CredentialsError
	if !errors.As(err, &ce) || !errors.Is(err, agentcli.ErrAuth) || err.Error() != d.Hint {
		t.Fatalf("a run without credentials: %v", err)
	}
	os.WriteFile(cred, []byte("{}"), 0o600)
	if d := New(spec, &agentcli.Options{Path: cli}).(*Backend).Diagnose(t.Context()); d.Status != agentcli.DiagnosisOK || len(d.Credentials) != 0 {
		t.Fatalf("a credential file: %+v", d)
	}
}

// On a platform the process layer does not support (everything but unix
// systems) a run fails before anything starts with an *UnsupportedError.
func TestPlatformErr(t *testing.T) {
	if platformErr("b", nil) != nil {
		t.Fatal("an error on a supported platform")
	}
	err := platformErr("b", errors.New("running CLIs is not supported on this platform"))
	var ue *agentcli.UnsupportedError
	if !errors.As(err, &ue) || ue.Backend != "b" || !errors.Is(err, agentcli.ErrUnsupported) || !strings.Contains(err.Error(), runtime.GOOS) {
		t.Fatalf("err = %v", err)
	}
}

// The CLI's version for the debug log comes from its npm package, without
// starting a process.
func TestInstalledVersion(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "node_modules", "@scope", "cli")
	os.MkdirAll(filepath.Join(pkg, "bin"), 0o755)
	os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@scope/cli","version":"1.2.3"}`), 0o644)
	bin := filepath.Join(pkg, "bin", "cli.js")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	link := filepath.Join(dir, "cli")
	os.Symlink(bin, link)
	if v := installedVersion(link, "@scope/cli"); v != "1.2.3" {
		t.Fatalf("version %q", v)
	}
	if v := installedVersion(bin, "@other/cli"); v != "" {
		t.Fatalf("another package's version: %q", v)
	}
}
