package agentclitest

import (
	"github.com/agentcli/agentcli"

	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// APIKey is the dummy credential Wire hands to every CLI. The server accepts
// any credential.
const APIKey = "agentclitest-key"

// Wiring is what it takes to run one real CLI against a Server with no
// network access.
type Wiring struct {
	// Env is the complete environment for the CLI process, as "K=V". It is
	// meant to replace os.Environ(), not to extend it, so no credential or
	// setting of the calling process leaks in; only PATH and a few locale,
	// identity and terminal variables (USER, LOGNAME, LANG, LC_ALL, TZ,
	// TERM, COLORTERM) are copied from the current process. Callers may append to it; later entries
	// win.
	Env []string
	// Args are extra flags the CLI needs, to be placed among the options
	// (after "-p", "exec", "run" or the like). Often empty: Wire prefers
	// environment variables and config files.
	Args []string
	// Dir is a fresh working directory under home for the CLI to run in.
	// Resume a session from the same Dir as the run that created it:
	// claude and gemini look sessions up per directory.
	Dir string

	// declare, when set, returns environment entries that make the CLI's
	// configuration declare a model (for CLIs that only accept declared
	// models).
	declare func(model string) []string
}

// Wire prepares home, a fresh private directory, for running cli ("claude",
// "codex", "gemini", "opencode", "qwen", "droid" or "copilot") against s: it creates the HOME, TMPDIR,
// XDG and per-CLI config directories under home, writes the config files the
// CLI needs, and returns the environment, flags and working directory to use.
// It does no network I/O and starts no process.
//
// The files also answer the first-run screens of the CLIs' interactive UIs
// (agentcli.Interactive): claude's onboarding, API-key confirmation,
// folder trust (for home and below) and bypass-mode warning, codex's
// folder trust (for the working directory) and copilot's folder trust (for
// home and the working directory).
//
// Every setting points the CLI at s.URL(), turns off telemetry, update checks
// and other outbound traffic, and bounds retries so that a scripted HTTP error
// fails the run quickly (opencode still retries 5xx, 408, 409 and 429 for
// about a minute; use a 4xx status in fast tests). Even so, run the CLI in a
// private network namespace when you can.
func (s *Server) Wire(cli, home string) (*Wiring, error) {
	home, err := filepath.Abs(home)
	if err != nil {
		return nil, err
	}
	dirs := map[string]string{
		"HOME":            home,
		"TMPDIR":          filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
	}
	w := &Wiring{Dir: filepath.Join(home, "work")}
	for _, d := range append(mapValues(dirs), w.Dir) {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	// Identity and locale only; PATH so that the CLI's launcher can find
	// node and its own helpers; the terminal type for interactive UIs.
	for _, k := range []string{"PATH", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TERM", "COLORTERM"} {
		if v, ok := os.LookupEnv(k); ok {
			w.Env = append(w.Env, k+"="+v)
		}
	}
	for _, k := range []string{"HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		w.Env = append(w.Env, k+"="+dirs[k])
	}
	switch cli {
	case "claude":
		err = s.wireClaude(w, home)
	case "codex":
		err = s.wireCodex(w, home)
	case "gemini":
		err = s.wireGemini(w, home)
	case "opencode":
		err = s.wireOpencode(w, home)
	case "qwen":
		err = s.wireQwen(w, home)
	case "droid":
		err = s.wireDroid(w, home)
	case "copilot":
		err = s.wireCopilot(w, home)
	default:
		return nil, fmt.Errorf("agentclitest: unknown CLI %q (want claude, codex, gemini, opencode, qwen, droid or copilot)", cli)
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

// writeConfig writes v as indented JSON to the private file path, making
// its directory.
func writeConfig(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// wireQwen points qwen at s: an OpenAI-compatible provider from the
// environment, and $HOME/.qwen/settings.json that turns off what would
// leave loopback or consume scripted turns.
func (s *Server) wireQwen(w *Wiring, home string) error {
	dir := filepath.Join(home, ".qwen")
	settings := map[string]any{
		// Usage statistics resolve and call an Aliyun RUM host on every
		// run; telemetry and update checks go out too.
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false},
		// Each of these makes a model call of its own after (or
		// before) a turn: follow-up suggestions, the managed memory
		// extraction subagent, its "dream" consolidation.
		"ui":     map[string]any{"enableFollowupSuggestions": false},
		"memory": map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
		// The default approval mode, "auto", asks an LLM security
		// classifier before each tool permission; "default" asks the host.
		"tools": map[string]any{"approvalMode": "default"},
		// No retries of a failed request (qwen still retries 429 and 5xx
		// of the main stream seven times). The scripted model's context
		// window is taken to be 1M tokens: qwen refuses a prompt larger
		// than its default window for an unknown model (about 177k
		// estimated tokens) without calling the model.
		"model": map[string]any{"generationConfig": map[string]any{"maxRetries": 0, "contextWindowSize": 1000000}},
	}
	if err := writeConfig(filepath.Join(dir, "settings.json"), settings); err != nil {
		return err
	}
	w.Env = append(w.Env,
		// Chat Completions at BASE/chat/completions.
		"OPENAI_BASE_URL="+s.URL()+"/v1",
		"OPENAI_API_KEY="+APIKey,
		"OPENAI_MODEL="+Model,
		// No session-title model call.
		"QWEN_DISABLE_AUTO_TITLE=1",
		// Headless yolo prints a warning on every run.
		"QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
		// Skip the memory-tuning relaunch: without it qwen starts a
		// second node process that loads the whole bundle again.
		"QWEN_CODE_NO_RELAUNCH=true",
	)
	return nil
}

// wireDroid points Factory Droid at s: a custom Chat Completions model in
// $HOME/.factory/settings.json, and airgap mode, in which droid talks to
// nothing but its custom models (no Factory API, login, feature flags or
// telemetry) and picks the first custom model when none is named.
func (s *Server) wireDroid(w *Wiring, home string) error {
	dir := filepath.Join(home, ".factory")
	settings := map[string]any{
		"customModels": []any{map[string]any{
			"model":           Model,
			"displayName":     "agentclitest",
			"baseUrl":         s.URL() + "/v1",
			"apiKey":          APIKey,
			"provider":        "generic-chat-completion-api",
			"maxOutputTokens": 4096,
		}},
		// The interactive UI asks whether to trust the folder, and
		// animates its logo.
		"trustedFolders": map[string]any{w.Dir: map[string]any{"trustedAt": "2026-01-01T00:00:00.000Z"}},
		"logoAnimation":  "off",
	}
	if err := writeConfig(filepath.Join(dir, "settings.json"), settings); err != nil {
		return err
	}
	w.Env = append(w.Env,
		"FACTORY_AIRGAP_ENABLED=1",
		"FACTORY_DROID_AUTO_UPDATE_ENABLED=false",
		// No system keyring (there is none in a test's private home).
		"FACTORY_DISABLE_KEYRING=1",
	)
	return nil
}

// wireClaude points claude at s through the environment. The config files
// matter only to the interactive UI (agentcli.Interactive), whose first-run
// screens they answer.
func (s *Server) wireClaude(w *Wiring, home string) error {
	cfg := filepath.Join(home, ".claude")
	key := APIKey
	if len(key) > 20 {
		key = key[len(key)-20:] // claude records approved keys by their last 20 characters
	}
	err := writeConfig(filepath.Join(cfg, ".claude.json"), map[string]any{
		// No onboarding: it starts with a connectivity check against
		// api.anthropic.com, and exits when that fails.
		"hasCompletedOnboarding": true,
		// "Detected a custom API key in your environment. Do you want to
		// use this API key?" is answered yes.
		"customApiKeyResponses": map[string]any{"approved": []string{key}, "rejected": []string{}},
		// The workspace trust dialog is answered for home and every
		// directory under it.
		"projects": map[string]any{home: map[string]any{"hasTrustDialogAccepted": true}},
	})
	if err != nil {
		return err
	}
	// The warning dialog of --dangerously-skip-permissions is accepted.
	settings := map[string]any{"skipDangerousModePermissionPrompt": true}
	if err := writeConfig(filepath.Join(cfg, "settings.json"), settings); err != nil {
		return err
	}
	w.Env = append(w.Env,
		// The Messages API endpoint, without /v1; claude appends
		// /v1/messages?beta=true.
		"ANTHROPIC_BASE_URL="+s.URL(),
		// API-key auth (sent as x-api-key); no login or keychain lookup.
		"ANTHROPIC_API_KEY="+APIKey,
		// Settings, sessions (projects/<cwd>/<id>.jsonl) and .claude.json
		// live here instead of ~/.claude.
		"CLAUDE_CONFIG_DIR="+cfg,
		// No update checks, telemetry, error reports, surveys or other
		// non-model traffic.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
		// Fail fast: by default a 5xx/429/401 is retried 10 times with
		// back-off (minutes).
		"CLAUDE_CODE_MAX_RETRIES=0",
	)
	if os.Geteuid() == 0 {
		// As root, --dangerously-skip-permissions exits 1 unless the CLI
		// is told it runs in a sandbox.
		w.Env = append(w.Env, "IS_SANDBOX=1")
	}
	return nil
}

// wireCodex writes $CODEX_HOME/config.toml with a custom Responses provider.
func (s *Server) wireCodex(w *Wiring, home string) error {
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return err
	}
	q := strconv.Quote
	cfg := strings.Join([]string{
		"# Written by agentclitest.Wire: points codex at a local scripted server.",
		"# A model slug codex does not know: it uses fallback metadata (and reports a",
		"# non-fatal warning item) instead of a preset that needs extra helpers.",
		"model = " + q(Model),
		"model_provider = \"agentclitest\"",
		"# TUI-only, but harmless: no update check.",
		"check_for_update_on_startup = false",
		"",
		"[model_providers.agentclitest]",
		"name = \"agentclitest\"",
		"base_url = " + q(s.URL()+"/v1"),
		"# Responses API over HTTP SSE; custom providers never try WebSockets.",
		"wire_api = \"responses\"",
		"# Bearer token read from this environment variable.",
		"env_key = \"AGENTCLITEST_API_KEY\"",
		"# No retries, so a scripted HTTP error fails the turn at once.",
		"request_max_retries = 0",
		"stream_max_retries = 0",
		"",
		"# Analytics would build a metrics exporter that phones home.",
		"[analytics]",
		"enabled = false",
		"",
		"[feedback]",
		"enabled = false",
		"",
		"# Plugins sync a curated list from a remote API on every run.",
		"[features]",
		"plugins = false",
		"",
		"# The interactive UI asks whether to trust a git repository's folder.",
		"[projects." + q(w.Dir) + "]",
		"trust_level = \"trusted\"",
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	w.Env = append(w.Env,
		// Config, sessions (rollouts) and the state DB live here.
		"CODEX_HOME="+codexHome,
		"AGENTCLITEST_API_KEY="+APIKey,
	)
	return nil
}

// wireGemini writes $HOME/.gemini/settings.json.
func (s *Server) wireGemini(w *Wiring, home string) error {
	dir := filepath.Join(home, ".gemini")
	settings := map[string]any{
		"general": map[string]any{
			// No update checks or notices.
			"enableAutoUpdate":             false,
			"enableAutoUpdateNotification": false,
			// One attempt per API call: a scripted error fails in seconds
			// instead of minutes of back-off.
			"maxAttempts": 1,
			// Don't prune sessions behind the test's back.
			"sessionRetention": map[string]any{"enabled": false},
		},
		// Clearcut usage statistics go to play.googleapis.com.
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"security": map[string]any{
			// Required: with only GOOGLE_GEMINI_BASE_URL set, the auth
			// type resolves to "gateway" and headless startup exits 41.
			"auth": map[string]any{"selectedType": "gemini-api-key"},
			// Trust every folder, so --approval-mode yolo is honoured.
			"folderTrust": map[string]any{"enabled": false},
		},
	}
	if err := writeConfig(filepath.Join(dir, "settings.json"), settings); err != nil {
		return err
	}
	w.Env = append(w.Env,
		// Gemini API endpoint, without /v1beta.
		"GOOGLE_GEMINI_BASE_URL="+s.URL(),
		"GEMINI_API_KEY="+APIKey,
		// User settings and sessions under $GEMINI_CLI_HOME/.gemini.
		"GEMINI_CLI_HOME="+home,
		"GEMINI_TELEMETRY_ENABLED=false",
		// Skip the memory-tuning relaunch of a child node process.
		"GEMINI_CLI_NO_RELAUNCH=true",
		// What --skip-trust sets: trust the working directory, otherwise
		// yolo is silently downgraded in an untrusted folder.
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	)
	return nil
}

// wireOpencode passes the config in OPENCODE_CONFIG_CONTENT, which takes
// precedence over global and project config files.
func (s *Server) wireOpencode(w *Wiring, home string) error {
	env, err := s.opencodeConfig(nil)
	if err != nil {
		return err
	}
	w.declare = func(model string) []string {
		name, ok := strings.CutPrefix(model, "agentclitest/")
		if !ok && strings.Contains(model, "/") {
			return nil // another provider's model: not ours to declare
		}
		e, err := s.opencodeConfig([]string{name})
		if err != nil {
			return nil
		}
		return e[:1]
	}
	w.Env = append(w.Env, env...)
	return nil
}

// opencodeConfig returns the environment that points opencode at s, with
// Model and extra declared as models of the "agentclitest" provider. The
// config entry comes first.
func (s *Server) opencodeConfig(extra []string) ([]string, error) {
	models := map[string]any{}
	for _, m := range append([]string{Model}, extra...) {
		models[m] = map[string]any{
			"name":      m,
			"tool_call": true,
			"limit":     map[string]any{"context": 200000, "output": 32000},
			// Image input, so that opencode sends attachments' images
			// (it replaces them with a note for a model without).
			"attachment": true,
			"modalities": map[string]any{"input": []string{"text", "image", "pdf"}, "output": []string{"text"}},
		}
	}
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		// The openai-compatible provider is bundled in the binary and
		// speaks Chat Completions; nothing is installed.
		"provider": map[string]any{
			"agentclitest": map[string]any{
				"npm":  "@ai-sdk/openai-compatible",
				"name": "agentclitest",
				"options": map[string]any{
					"baseURL": s.URL() + "/v1",
					"apiKey":  APIKey,
				},
				"models": models,
			},
		},
		"model": "agentclitest/" + Model,
		// Title generation on a new session uses small_model; keep it on
		// the local server.
		"small_model": "agentclitest/" + Model,
		// Headless run auto-rejects permission prompts; allow everything.
		"permission": "allow",
		"autoupdate": false,
		"share":      "disabled",
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return []string{
		"OPENCODE_CONFIG_CONTENT=" + string(b),
		// No external plugins: otherwise plugins are installed from the
		// npm registry in the background.
		"OPENCODE_PURE=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		// No models.dev catalog fetch (at start and hourly).
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_SHARE=1",
		// Don't read ~/.claude prompts and skills.
		"OPENCODE_DISABLE_CLAUDE_CODE=1",
	}, nil
}

// Apply points req at the server: for CLIs that only run models their
// configuration declares (opencode), it declares req.Model (a plain name, or
// "agentclitest/NAME"); it makes the wiring's environment the
// CLI's whole environment (Request.ReplaceEnv, so no API key, base URL or
// setting of the calling process reaches the CLI; variables already in
// req.Env are kept), adds the wiring's flags and, when req.Dir is empty,
// runs the CLI in the wiring's private working directory. It is the one
// line that makes a real-CLI run hermetic:
//
//	w, err := srv.Wire("claude", t.TempDir())
//	...
//	w.Apply(req)
func (w *Wiring) Apply(req *agentcli.Request) {
	env := append([]string(nil), w.Env...)
	if w.declare != nil && req.Model != "" {
		env = append(env, w.declare(req.Model)...)
	}
	req.Env = append(env, req.Env...)
	req.ReplaceEnv = true
	req.ExtraArgs = append(req.ExtraArgs, w.Args...)
	if req.Dir == "" {
		req.Dir = w.Dir
	}
}

// wireCopilot points copilot at s through its bring-your-own-key provider
// variables, offline. The package cache is shared (see CopilotPackageCache).
func (s *Server) wireCopilot(w *Wiring, home string) error {
	cfg := filepath.Join(home, ".copilot")
	// The interactive UI's "Confirm folder trust" screen is answered in
	// config.json, where its "Yes, and remember" writes (a trustedFolders
	// key in settings.json is not read).
	trust := map[string]any{"trustedFolders": []string{home, w.Dir}}
	if err := writeConfig(filepath.Join(cfg, "config.json"), trust); err != nil {
		return err
	}
	w.Env = append(w.Env,
		// Config, sessions (session-state/<id>/) and logs live here
		// instead of ~/.copilot.
		"COPILOT_HOME="+cfg,
		// No GitHub login, telemetry, web tools, GitHub MCP server or
		// update check.
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
		// Bring your own key: an OpenAI-compatible provider (Chat
		// Completions), sent as "Authorization: Bearer".
		"COPILOT_PROVIDER_BASE_URL="+s.URL()+"/v1",
		"COPILOT_PROVIDER_API_KEY="+APIKey,
		// A provider needs a model.
		"COPILOT_MODEL="+Model,
		// Limits for a model copilot's catalog does not know (128,000
		// prompt tokens by default, below what a 1 MiB prompt counts),
		// which also silences its warning about the unknown model.
		"COPILOT_PROVIDER_MAX_PROMPT_TOKENS=1000000",
		"COPILOT_PROVIDER_MAX_OUTPUT_TOKENS=32000",
	)
	if dir := CopilotPackageCache(); dir != "" {
		// The binary extracts 235 MB of itself on its first run, into
		// this directory (then $XDG_CACHE_HOME/copilot/pkg): shared, it
		// is extracted once rather than per home.
		w.Env = append(w.Env, "COPILOT_PKG_CACHE_HOME="+dir)
	}
	return nil
}

// CopilotPackageCache returns the directory that Wire shares between
// copilot runs for the package copilot extracts from its binary on first
// run (235 MB for 1.0.102; about 2 s per extraction): agentclitest/copilot
// in os.UserCacheDir, or in os.TempDir when there is no user cache
// directory, or "" when neither can be created (each home then extracts
// its own). AGENTCLITEST_COPILOT_CACHE, when set, names it instead.
// Copilot extracts into a temporary directory and renames it, so runs
// can share it concurrently.
func CopilotPackageCache() string {
	dir := os.Getenv("AGENTCLITEST_COPILOT_CACHE")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "agentclitest", "copilot")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	return dir
}
