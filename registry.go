package agentcli

import (
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcli/agentcli/internal/registry"
)

// DefaultBackend is the backend an empty name resolves to.
const DefaultBackend = "claude"

// DefaultMaxTurns is the max-turns value ConfigFromEnv uses when
// BACKEND_MAX_TURNS is unset or invalid.
const DefaultMaxTurns = 25

// aliases maps other common spellings to registered names.
var aliases = map[string]string{
	"claude-code": "claude",
	"claudecode":  "claude",
	"codex-cli":   "codex",
	"gemini-cli":  "gemini",
	"open-code":   "opencode",
}

// Backends returns the names of the registered backends, sorted. A
// backend registers itself (driver.Register) when its package is imported.
func Backends() []string { return registry.Names() }

// Resolve turns a user-supplied backend name into a registered one. The
// empty name resolves to DefaultBackend; case, surrounding space and a few
// common aliases ("claude-code", "gemini-cli") are forgiven. Any other name
// gives an *UnknownBackendError that lists the valid names.
func Resolve(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		n = DefaultBackend
	}
	if a, ok := aliases[n]; ok {
		n = a
	}
	if _, ok := registry.Lookup(n); !ok {
		return "", &UnknownBackendError{Name: name, Valid: Backends()}
	}
	return n, nil
}

// Open resolves name (see Resolve) and creates that backend with opts,
// which may be nil.
func Open(name string, opts *Options) (Backend, error) {
	n, err := Resolve(name)
	if err != nil {
		return nil, err
	}
	f, _ := registry.Lookup(n)
	return f.(func(*Options) Backend)(opts), nil
}

// Config is backend configuration read from the environment.
type Config struct {
	// Backend is the raw backend name (AGENT_BACKEND); see Resolve.
	Backend string
	// CLIPath overrides the backend's binary (BACKEND_CLI_PATH).
	CLIPath string
	// Args are the arguments that start the agent of the generic ACP
	// backend ("acp") in ACP mode, or replace a known ACP agent's
	// (BACKEND_CLI_ARGS, split at white space: "--acp"; no quoting).
	Args []string
	// Model is the default model (BACKEND_MODEL).
	Model string
	// MaxTurns is the default max-turns value (BACKEND_MAX_TURNS, default 25).
	MaxTurns int
	// AllowedTools is the default tool allow-list (ALLOWED_TOOLS,
	// comma-separated; commas inside parentheses, as in "Bash(echo a,b)",
	// do not separate).
	AllowedTools []string
	// Permission is the default permission mode (PERMISSION_MODE:
	// bypass, ask, deny or plan; unset or invalid leaves the zero value,
	// which refuses what would need approval).
	Permission PermissionMode

	// maxTurnsSet records that BACKEND_MAX_TURNS was given explicitly.
	maxTurnsSet bool
}

// ConfigFromEnv reads a Config from the process environment. Invalid values
// fall back to defaults with a warning on logger; a nil logger logs
// nothing.
func ConfigFromEnv(logger *slog.Logger) Config {
	return ConfigFromLookup(os.LookupEnv, logger)
}

// ConfigFromLookup is ConfigFromEnv with a custom variable lookup, for tests.
func ConfigFromLookup(lookup func(string) (string, bool), logger *slog.Logger) Config {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	c := Config{
		Backend:  get("AGENT_BACKEND"),
		CLIPath:  get("BACKEND_CLI_PATH"),
		Args:     strings.Fields(get("BACKEND_CLI_ARGS")),
		Model:    get("BACKEND_MODEL"),
		MaxTurns: DefaultMaxTurns,
	}
	if v := get("BACKEND_MAX_TURNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			logger.Warn("agentcli: invalid BACKEND_MAX_TURNS, using default",
				"value", v, "default", DefaultMaxTurns)
		} else {
			c.MaxTurns = n
			c.maxTurnsSet = true
		}
	}
	c.AllowedTools = splitToolRules(get("ALLOWED_TOOLS"))
	if v := get("PERMISSION_MODE"); v != "" {
		switch m := PermissionMode(strings.ToLower(v)); m {
		case PermissionBypass, PermissionAsk, PermissionDeny, PermissionPlan:
			c.Permission = m
		default:
			logger.Warn("agentcli: invalid PERMISSION_MODE, using the default (deny)", "value", v)
		}
	}
	return c
}

// Open creates the configured backend. opts may be nil; c.CLIPath is used
// when opts.Path is empty, c.Args when opts.Args is.
func (c Config) Open(opts *Options) (Backend, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Path == "" {
		o.Path = c.CLIPath
	}
	if len(o.Args) == 0 {
		o.Args = slices.Clone(c.Args)
	}
	return Open(c.Backend, &o)
}

// Apply fills the request fields that are still zero from c: Model,
// MaxTurns, AllowedTools and Permission. The default max-turns value is applied only when caps
// says the backend enforces max turns, so that an implicit default never
// causes an "unsupported option" warning; a value set explicitly in the
// environment is always applied (and refused by backends that cannot
// enforce it).
func (c Config) Apply(req *Request, caps Capabilities) {
	if req.Model == "" {
		req.Model = c.Model
	}
	if req.MaxTurns == 0 && (caps.MaxTurns || c.maxTurnsSet) {
		req.MaxTurns = c.MaxTurns
	}
	if len(req.AllowedTools) == 0 && len(c.AllowedTools) > 0 {
		req.AllowedTools = slices.Clone(c.AllowedTools)
	}
	if req.Permission == "" {
		req.Permission = c.Permission
	}
}
