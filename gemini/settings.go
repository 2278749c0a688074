package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// runSettings returns the settings req needs on top of the user's, or nil
// when it needs none. It is pure. dollar reports that some value needed
// driver.DollarEnv in the CLI's environment.
//
// MCP servers become "mcpServers" entries: {command, args, env} for a
// stdio server, {url, type: "http", headers} for an HTTP one.
//
// Gemini CLI 0.61.0 expands environment references in every string of a
// settings file when it loads it ($NAME, ${NAME} and ${NAME:-default}, no
// escape), and expands an MCP server's env values and header values a
// second time when it starts the server (dotenv-expand, which leaves "\$"
// alone and then turns it into "$"). So each "$" of the caller's text is
// written as "${AGENTCLI_DOLLAR}" (see driver.DollarVar), which the first
// expansion turns back into "$"; in env and header values each "$" is
// first escaped as "\$" for the second. A backslash elsewhere is kept as
// it is. Verified by a real run (conformance TestMCPServers).
//
// Effort becomes a thinking setting through the model-config aliases
// every built-in chat model extends: "chat-base-3" (Gemini 3 models) gets
// thinkingConfig.thinkingLevel LOW, MEDIUM or HIGH, and "chat-base-2.5"
// (Gemini 2.5 models) thinkingConfig.thinkingBudget 1024, 8192 or 24576
// tokens, the budgets the Gemini API's OpenAI compatibility layer gives
// reasoning_effort low, medium and high. A model gemini does not know
// (no alias) keeps its thinking settings.
func runSettings(req *agentcli.Request) (settings map[string]any, dollar bool) {
	settings = map[string]any{}
	lists, _ := listsFor(req) // validate refused what gemini cannot hold
	lists.settings(settings)
	var esc dollars
	if servers := mcpSettings(req, lists, &esc); len(servers) > 0 {
		settings["mcpServers"] = servers
	}
	if level, budget, ok := thinking(req.Effort); ok {
		alias := func(cfg map[string]any) map[string]any {
			return map[string]any{"extends": "chat-base", "modelConfig": map[string]any{
				"generateContentConfig": map[string]any{"thinkingConfig": cfg}}}
		}
		settings["modelConfigs"] = map[string]any{"customAliases": map[string]any{
			"chat-base-3":   alias(map[string]any{"thinkingLevel": level}),
			"chat-base-2.5": alias(map[string]any{"thinkingBudget": budget}),
		}}
	}
	if len(settings) == 0 {
		return nil, false
	}
	return settings, esc.used
}

// dollars escapes the caller's "$" for gemini's expansions (see
// runSettings) and remembers whether it met one.
type dollars struct{ used bool }

// once escapes s for a value gemini expands once.
func (e *dollars) once(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	e.used = true
	return strings.ReplaceAll(s, "$", "${"+driver.DollarVar+"}")
}

// twice escapes s for an env or header value, which gemini expands twice.
func (e *dollars) twice(s string) string { return e.once(strings.ReplaceAll(s, "$", `\$`)) }

// mcpSettings is the mcpServers setting for the servers of req that the
// tool lists keep; nil when none.
func mcpSettings(req *agentcli.Request, lists toolLists, esc *dollars) map[string]any {
	servers := map[string]any{}
	for _, s := range req.MCPServers {
		if !lists.keeps(s.Name) {
			continue
		}
		sv := map[string]any{}
		if inc := lists.include[strings.ToLower(s.Name)]; len(inc) > 0 {
			sv["includeTools"] = inc
		}
		if exc := lists.excludeMCP[strings.ToLower(s.Name)]; len(exc) > 0 {
			sv["excludeTools"] = exc
		}
		if lists.servers != nil || driver.IsHostServer(req, s.Name) {
			// Named by the allow list: its tools (includeTools)
			// are approved in advance. agentcli's own server
			// decides its calls itself (driver.HostTools).
			sv["trust"] = true
		}
		if driver.IsHostServer(req, s.Name) {
			// gemini's limit for one call of the server's tools
			// (ms; 10 minutes by default): a host tool's call
			// ends when its handler returns or the run ends.
			sv["timeout"] = driver.HostToolTimeout.Milliseconds()
		}
		if s.URL != "" {
			sv["url"], sv["type"] = esc.once(s.URL), "http"
			if len(s.Headers) > 0 {
				h := map[string]any{}
				for k, v := range s.Headers {
					h[k] = esc.twice(v)
				}
				sv["headers"] = h
			}
		} else {
			sv["command"] = esc.once(s.Command)
			args := []any{}
			for _, a := range s.Args {
				args = append(args, esc.once(a))
			}
			sv["args"] = args
			if env := driver.MCPEnv(s); len(env) > 0 {
				e := map[string]any{}
				for k, v := range env {
					e[k] = esc.twice(v)
				}
				sv["env"] = e
			}
		}
		servers[s.Name] = sv
	}
	return servers
}

// thinking maps an effort level to Gemini 3's thinkingLevel and Gemini
// 2.5's thinkingBudget.
func thinking(e agentcli.Effort) (level string, budget int, ok bool) {
	switch e {
	case agentcli.EffortLow:
		return "LOW", 1024, true
	case agentcli.EffortMedium:
		return "MEDIUM", 8192, true
	case agentcli.EffortHigh:
		return "HIGH", 24576, true
	}
	return "", 0, false
}

// geminiDir is the directory under GEMINI_CLI_HOME (or HOME) that holds
// gemini's user settings, credentials and sessions.
const geminiDir = ".gemini"

// overlayHome makes dir a private GEMINI_CLI_HOME for one run: a
// .gemini directory in which every entry of home/.gemini is a symbolic
// link to the original, except settings.json, which is the user's
// settings (comments removed) with extra merged in. It returns the
// GEMINI_CLI_HOME to use (dir).
//
// Gemini CLI reads user settings only from GEMINI_CLI_HOME/.gemini
// (GEMINI_CLI_HOME defaults to the home directory); its only other
// settings files are the system ones (GEMINI_CLI_SYSTEM_SETTINGS_PATH,
// GEMINI_CLI_SYSTEM_DEFAULTS_PATH), which 0.61.0 skips unless the file
// and every directory above it belong to root and are writable by no one
// else, and the project's .gemini/settings.json, which is the user's. So
// the overlay is how extra settings reach one run without touching the
// user's files: credentials, sessions (tmp), history, extensions, commands
// and everything else are the user's own, through the links, and a
// session a run creates is resumable by any later run. The tmp and
// history directories and the projects.json registry are linked even when
// they do not exist yet (the directories are created in the real home, as
// gemini 0.61.0 creates them itself on every run, even in a
// GEMINI_CLI_HOME that does not exist: nothing gemini would not do), so
// that the first run's session and project registration land there.
// Other files gemini creates in .gemini for the first time during such a
// run, and changes it writes to settings.json, stay in the overlay and are
// removed with it.
func overlayHome(home, dir string, extra map[string]any) (string, error) {
	real := filepath.Join(home, geminiDir)
	over := filepath.Join(dir, geminiDir)
	if err := os.MkdirAll(over, 0o700); err != nil {
		return "", err
	}
	for _, d := range []string{"tmp", "history"} {
		if err := os.MkdirAll(filepath.Join(real, d), 0o700); err != nil {
			return "", fmt.Errorf("gemini: preparing %s: %w", real, err)
		}
	}
	ents, err := os.ReadDir(real)
	if err != nil {
		return "", fmt.Errorf("gemini: reading %s: %w", real, err)
	}
	names := []string{"projects.json"}
	for _, e := range ents {
		names = append(names, e.Name())
	}
	for _, n := range names {
		if n == "settings.json" {
			continue
		}
		err := os.Symlink(filepath.Join(real, n), filepath.Join(over, n))
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	user := map[string]any{}
	path := filepath.Join(real, "settings.json")
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("gemini: reading the user settings: %w", err)
	default:
		d := json.NewDecoder(bytes.NewReader(stripComments(b)))
		d.UseNumber()
		if err := d.Decode(&user); err != nil {
			return "", fmt.Errorf("gemini: the user settings %s are not a JSON object (with comments): %w", path, err)
		}
	}
	merge(user, extra)
	out, err := json.MarshalIndent(user, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(over, "settings.json"), out, 0o600); err != nil {
		return "", err
	}
	return dir, nil
}

// merge merges src into dst: objects key by key, recursively; any other
// value of src replaces dst's.
func merge(dst, src map[string]any) {
	for k, v := range src {
		sv, ok1 := v.(map[string]any)
		dv, ok2 := dst[k].(map[string]any)
		if ok1 && ok2 {
			merge(dv, sv)
			continue
		}
		dst[k] = v
	}
}

// stripComments blanks out the // and /* */ comments of a JSON-with-
// comments text, outside strings, as gemini's settings loader does
// (strip-json-comments), keeping every other byte in place.
func stripComments(b []byte) []byte {
	out := bytes.Clone(b)
	inStr := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := bytes.Index(out[i+2:], []byte("*/"))
			end := len(out)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			for k := i; k < end; k++ {
				if out[k] != '\n' {
					out[k] = ' '
				}
			}
			i = end - 1
		}
	}
	return out
}
