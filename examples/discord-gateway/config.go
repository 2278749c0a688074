package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
)

// Config is the gateway's configuration, read from the environment.
type Config struct {
	// Token is the Discord bot token (DISCORD_TOKEN).
	Token string
	// Agent is the backend configuration: AGENT_BACKEND (default claude),
	// BACKEND_CLI_PATH, BACKEND_MODEL, BACKEND_MAX_TURNS (default 25),
	// ALLOWED_TOOLS.
	Agent agentcli.Config
	// WorkingDir is where the agent works (WORKING_DIR; default: the
	// current directory).
	WorkingDir string
	// QueryTimeout bounds one run (QUERY_TIMEOUT: seconds, or a Go
	// duration such as 10m; default 10 minutes).
	QueryTimeout time.Duration
	// SystemPrompt is read from SYSTEM_PROMPT_FILE, when set.
	SystemPrompt string
	// AllowedUsers and AllowedRoles are the Discord user and role ids
	// that may use the bot (ALLOWED_USERS, ALLOWED_ROLES; comma
	// separated). At least one is required for Discord.
	AllowedUsers, AllowedRoles []string
	// StateDir holds the session store (STATE_DIR; default
	// ./gateway-state).
	StateDir string
	// MaxConcurrent is the limit on runs at once (MAX_CONCURRENT_RUNS;
	// default 4).
	MaxConcurrent int
	// QueueDepth is how many messages may wait per channel, QueueTotal in
	// all (QUEUE_DEPTH, default 5; QUEUE_TOTAL, default 200).
	QueueDepth, QueueTotal int
	// RetryAttempts, RetryDelay: attempts per message on transient errors
	// and the first backoff, doubling after (RETRY_ATTEMPTS, default 3;
	// RETRY_DELAY, default 5s).
	RetryAttempts int
	RetryDelay    time.Duration
	// Permission is PERMISSION_MODE (bypass, ask, deny, plan); empty
	// means ask when the backend can, bypass otherwise.
	Permission agentcli.PermissionMode
	// PermissionTimeout bounds a permission request (PERMISSION_TIMEOUT,
	// default 5 minutes); no answer denies.
	PermissionTimeout time.Duration
	// Live asks for a live session per channel where the backend has them
	// (LIVE_SESSIONS, default true).
	Live bool
	// LiveIdle closes a live session after this long idle (LIVE_IDLE,
	// default 15m).
	LiveIdle time.Duration
}

// LoadConfig reads the configuration through lookup (os.LookupEnv). An
// invalid value is an error: a bot with a shell should not start on a
// guess.
func LoadConfig(lookup func(string) (string, bool), logger *slog.Logger) (Config, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	c := Config{
		Token:        get("DISCORD_TOKEN"),
		Agent:        agentcli.ConfigFromLookup(lookup, logger),
		WorkingDir:   get("WORKING_DIR"),
		AllowedUsers: list(get("ALLOWED_USERS")),
		AllowedRoles: list(get("ALLOWED_ROLES")),
		StateDir:     get("STATE_DIR"),
		Permission:   agentcli.PermissionMode(strings.ToLower(get("PERMISSION_MODE"))),
	}
	if c.StateDir == "" {
		c.StateDir = "gateway-state"
	}
	var err error
	num := func(key string, def int) int {
		v := get(key)
		if v == "" || err != nil {
			return def
		}
		n, e := strconv.Atoi(v)
		if e != nil || n < 1 {
			err = fmt.Errorf("%s=%q: want a positive number", key, v)
			return def
		}
		return n
	}
	dur := func(key string, def time.Duration) time.Duration {
		v := get(key)
		if v == "" || err != nil {
			return def
		}
		if n, e := strconv.ParseFloat(v, 64); e == nil && n > 0 {
			return time.Duration(n * float64(time.Second))
		}
		d, e := time.ParseDuration(v)
		if e != nil || d <= 0 {
			err = fmt.Errorf("%s=%q: want seconds or a duration such as 90s or 10m", key, v)
			return def
		}
		return d
	}
	c.QueryTimeout = dur("QUERY_TIMEOUT", 10*time.Minute)
	c.MaxConcurrent = num("MAX_CONCURRENT_RUNS", 4)
	c.QueueDepth = num("QUEUE_DEPTH", 5)
	c.QueueTotal = num("QUEUE_TOTAL", 200)
	c.RetryAttempts = num("RETRY_ATTEMPTS", 3)
	c.RetryDelay = dur("RETRY_DELAY", 5*time.Second)
	c.PermissionTimeout = dur("PERMISSION_TIMEOUT", agentcli.DefaultPermissionTimeout)
	c.LiveIdle = dur("LIVE_IDLE", 15*time.Minute)
	c.Live = true
	if v := get("LIVE_SESSIONS"); v != "" && err == nil {
		b, e := strconv.ParseBool(v)
		if e != nil {
			err = fmt.Errorf("LIVE_SESSIONS=%q: want true or false", v)
		}
		c.Live = b
	}
	switch c.Permission {
	case "", agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan:
	default:
		if err == nil {
			err = fmt.Errorf("PERMISSION_MODE=%q: want bypass, ask, deny or plan", c.Permission)
		}
	}
	if f := get("SYSTEM_PROMPT_FILE"); f != "" && err == nil {
		b, e := os.ReadFile(f)
		if e != nil {
			err = fmt.Errorf("SYSTEM_PROMPT_FILE: %w", e)
		}
		c.SystemPrompt = strings.TrimSpace(string(b))
	}
	if c.WorkingDir != "" && err == nil {
		abs, e := filepath.Abs(c.WorkingDir)
		if fi, se := os.Stat(abs); e != nil || se != nil || !fi.IsDir() {
			err = fmt.Errorf("WORKING_DIR=%q is not a directory", c.WorkingDir)
		}
		c.WorkingDir = abs
	}
	return c, err
}

// list splits a comma-separated list, dropping empty items.
func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// allowed returns the authorization check for the configured users and
// roles.
func (c Config) allowed() func(user string, roles []string) bool {
	return func(user string, roles []string) bool {
		if slices.Contains(c.AllowedUsers, user) {
			return true
		}
		for _, r := range roles {
			if slices.Contains(c.AllowedRoles, r) {
				return true
			}
		}
		return false
	}
}
