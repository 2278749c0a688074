package main

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
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
	// APIURL is the base of Discord's REST API, version included
	// (DISCORD_API_URL; default https://discord.com/api/v9). A proxy or a
	// test double goes here.
	APIURL string
	// GatewayURL is Discord's websocket gateway (DISCORD_GATEWAY_URL); empty
	// means the one the API names (GET /gateway).
	GatewayURL string
	// Agent is the backend configuration: AGENT_BACKEND (default claude),
	// BACKEND_CLI_PATH, BACKEND_MODEL, BACKEND_MAX_TURNS (default 25),
	// ALLOWED_TOOLS.
	Agent agentcli.Config
	// AgentEnv is what the operator adds to the CLI's environment
	// (AGENT_ENV, comma separated): NAME passes the gateway's own NAME,
	// NAME=value sets it. Nothing else of the gateway's environment reaches
	// the CLI beyond the allow-list of childEnv.
	AgentEnv []string
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
	// Approvers are user or role ids (APPROVERS) that may answer any
	// permission request and stop or reset any conversation; everyone else
	// answers only their own.
	Approvers []string
	// StateDir holds the session store, the in-flight journal and the lock
	// (STATE_DIR; default ./gateway-state).
	StateDir string
	// MaxConcurrent is the limit on runs at once (MAX_CONCURRENT_RUNS;
	// default 4).
	MaxConcurrent int
	// QueueDepth is how many messages may wait per conversation,
	// QueueTotal in all (QUEUE_DEPTH, default 5; QUEUE_TOTAL, default 200).
	QueueDepth, QueueTotal int
	// RetryAttempts, RetryDelay: attempts per message on transient errors
	// and the first backoff, doubling after (RETRY_ATTEMPTS, default 3;
	// RETRY_DELAY, default 5s).
	RetryAttempts int
	RetryDelay    time.Duration
	// Permission is PERMISSION_MODE (bypass, ask, deny, plan); empty
	// means ask when the backend can, deny (whatever would need approval
	// is refused) otherwise.
	Permission agentcli.PermissionMode
	// PermissionTimeout bounds a permission request (PERMISSION_TIMEOUT,
	// default 5 minutes); no answer denies.
	PermissionTimeout time.Duration
	// Live asks for a live session per conversation where the backend has
	// them (LIVE_SESSIONS, default true).
	Live bool
	// LiveIdle closes a live session after this long idle (LIVE_IDLE,
	// default 15m).
	LiveIdle time.Duration
	// MaxLive caps the live CLI processes kept at once
	// (MAX_LIVE_SESSIONS, default 8); the least recently used idle one is
	// closed to make room.
	MaxLive int
	// Warm is how many live sessions are kept started ahead of need for
	// new conversations (WARM_SESSIONS, default 1, 0 for none; fewer
	// than MaxLive, which they count against). Local sessions only: not
	// with NATS_URL.
	Warm int
	// Threads gives every task started in a server's text channel a
	// thread of its own, one conversation per thread (THREADS, default
	// false: the channel, or a thread a user opened, is the
	// conversation).
	Threads bool
	// SlashCommands registers /new, /stop, /backend, /model, /status and
	// /usage with Discord at start-up (SLASH_COMMANDS, default true).
	SlashCommands bool
	// CommandGuilds registers the slash commands in these servers only
	// (COMMAND_GUILDS), where they appear at once; empty registers them
	// globally.
	CommandGuilds []string
	// Models are the models /model offers and accepts (MODELS, comma
	// separated); empty makes /model show the model only.
	Models []string
	// AttachmentMax bounds the text attachments inlined into one prompt,
	// in bytes (ATTACHMENT_MAX_BYTES, default 100000).
	AttachmentMax int
	// ImageMax bounds each image sent to the agent, in bytes
	// (IMAGE_MAX_BYTES, default and at most agentcli.MaxImageBytes, 5 MiB).
	ImageMax int
	// NATSURL, when set (NATS_URL), sends the runs to a pool of
	// agentcli-worker processes over NATS JetStream instead of a CLI on
	// this host; the conversations are then kept in the pool's key-value
	// store, shared by every replica of the gateway. NATSCreds is a NATS
	// credentials file (NATS_CREDS), PoolPrefix the pool's prefix
	// (POOL_PREFIX; default agentcli).
	NATSURL, NATSCreds, PoolPrefix string
	// ShardID and ShardCount make this replica one shard of the bot
	// (DISCORD_SHARD_ID, DISCORD_SHARD_COUNT; default 0 of 1): Discord
	// sends it the events of the servers whose id maps to its shard, and
	// direct messages to shard 0.
	ShardID, ShardCount int
}

// LoadConfig reads the configuration through lookup (os.LookupEnv). An
// invalid value is an error: a bot with a shell should not start on a
// guess.
func LoadConfig(lookup func(string) (string, bool), logger *slog.Logger) (Config, error) {
	r := &envReader{lookup: lookup}
	get := r.get
	c := Config{
		Token:         get("DISCORD_TOKEN"),
		APIURL:        get("DISCORD_API_URL"),
		GatewayURL:    get("DISCORD_GATEWAY_URL"),
		Agent:         agentcli.ConfigFromLookup(lookup, logger),
		AgentEnv:      list(get("AGENT_ENV")),
		WorkingDir:    get("WORKING_DIR"),
		AllowedUsers:  list(get("ALLOWED_USERS")),
		AllowedRoles:  list(get("ALLOWED_ROLES")),
		Approvers:     list(get("APPROVERS")),
		StateDir:      get("STATE_DIR"),
		Permission:    agentcli.PermissionMode(strings.ToLower(get("PERMISSION_MODE"))),
		CommandGuilds: list(get("COMMAND_GUILDS")),
		Models:        list(get("MODELS")),
		NATSURL:       get("NATS_URL"),
		NATSCreds:     get("NATS_CREDS"),
		PoolPrefix:    get("POOL_PREFIX"),
	}
	if c.StateDir == "" {
		c.StateDir = "gateway-state"
	}
	if c.APIURL == "" {
		c.APIURL = "https://discord.com/api/v9"
	}
	c.readLimits(r)
	c.check(r)
	return c, r.err
}

// envReader reads settings through lookup and keeps the first error.
type envReader struct {
	lookup func(string) (string, bool)
	err    error
}

// get returns the value of key, trimmed ("" when unset).
func (r *envReader) get(key string) string {
	v, _ := r.lookup(key)
	return strings.TrimSpace(v)
}

// fail records an error unless one is recorded already.
func (r *envReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// num returns key as a positive number, def when unset.
func (r *envReader) num(key string, def int) int {
	v := r.get(key)
	if v == "" {
		return def
	}
	n, e := strconv.Atoi(v)
	if e != nil || n < 1 {
		r.fail("%s=%q: want a positive number", key, v)
		return def
	}
	return n
}

// dur returns key as a positive duration, in seconds or as Go writes one
// ("90s"), def when unset.
func (r *envReader) dur(key string, def time.Duration) time.Duration {
	v := r.get(key)
	if v == "" {
		return def
	}
	if n, e := strconv.ParseFloat(v, 64); e == nil && n > 0 {
		return time.Duration(n * float64(time.Second))
	}
	d, e := time.ParseDuration(v)
	if e != nil || d <= 0 {
		r.fail("%s=%q: want seconds or a duration such as 90s or 10m", key, v)
		return def
	}
	return d
}

// boolean returns key as a boolean, def when unset.
func (r *envReader) boolean(key string, def bool) bool {
	v := r.get(key)
	if v == "" {
		return def
	}
	b, e := strconv.ParseBool(v)
	if e != nil {
		r.fail("%s=%q: want true or false", key, v)
		return def
	}
	return b
}

// readLimits reads the numbers, durations and switches: timeouts, queue
// and concurrency limits, sizes, live and warm sessions, shards.
func (c *Config) readLimits(r *envReader) {
	c.QueryTimeout = r.dur("QUERY_TIMEOUT", 10*time.Minute)
	c.MaxConcurrent = r.num("MAX_CONCURRENT_RUNS", 4)
	c.QueueDepth = r.num("QUEUE_DEPTH", 5)
	c.QueueTotal = r.num("QUEUE_TOTAL", 200)
	c.RetryAttempts = r.num("RETRY_ATTEMPTS", 3)
	c.RetryDelay = r.dur("RETRY_DELAY", 5*time.Second)
	c.PermissionTimeout = r.dur("PERMISSION_TIMEOUT", agentcli.DefaultPermissionTimeout)
	c.LiveIdle = r.dur("LIVE_IDLE", 15*time.Minute)
	c.MaxLive = r.num("MAX_LIVE_SESSIONS", 8)
	c.AttachmentMax = r.num("ATTACHMENT_MAX_BYTES", 100_000)
	if c.ImageMax = r.num("IMAGE_MAX_BYTES", agentcli.MaxImageBytes); c.ImageMax > agentcli.MaxImageBytes {
		r.fail("IMAGE_MAX_BYTES=%d: at most %d (5 MiB, agentcli.MaxImageBytes)", c.ImageMax, agentcli.MaxImageBytes)
	}
	c.Warm = 1
	if v := r.get("WARM_SESSIONS"); v != "" {
		n, e := strconv.Atoi(v)
		switch {
		case e != nil || n < 0:
			r.fail("WARM_SESSIONS=%q: want a number, 0 for none", v)
		case n >= c.MaxLive:
			r.fail("WARM_SESSIONS=%d: warm sessions count against MAX_LIVE_SESSIONS (%d); want fewer", n, c.MaxLive)
		default:
			c.Warm = n
		}
	} else {
		c.Warm = min(c.Warm, c.MaxLive-1)
	}
	c.Live = r.boolean("LIVE_SESSIONS", true)
	c.Threads = r.boolean("THREADS", false)
	c.SlashCommands = r.boolean("SLASH_COMMANDS", true)
	c.ShardCount = r.num("DISCORD_SHARD_COUNT", 1)
	if v := r.get("DISCORD_SHARD_ID"); v != "" {
		n, e := strconv.Atoi(v)
		if e != nil || n < 0 || n >= c.ShardCount {
			r.fail("DISCORD_SHARD_ID=%q: want a number from 0 to DISCORD_SHARD_COUNT-1 (%d)", v, c.ShardCount-1)
		}
		c.ShardID = n
	}
}

// check refuses what the rest cannot use: an unknown permission mode,
// URLs of the wrong kind, an AGENT_ENV entry that is not a variable or
// would hand the bot's own settings to the agent, an unreadable
// SYSTEM_PROMPT_FILE, a WORKING_DIR that is not a directory. It reads
// SYSTEM_PROMPT_FILE and makes WORKING_DIR absolute.
func (c *Config) check(r *envReader) {
	switch c.Permission {
	case "", agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan:
	default:
		r.fail("PERMISSION_MODE=%q: want bypass, ask, deny or plan", c.Permission)
	}
	for _, k := range []struct{ key, v string }{{"DISCORD_API_URL", c.APIURL}, {"DISCORD_GATEWAY_URL", c.GatewayURL}} {
		if k.v == "" {
			continue
		}
		u, e := url.Parse(k.v)
		if e != nil || u.Host == "" || (k.key == "DISCORD_API_URL" && u.Scheme != "https" && u.Scheme != "http") ||
			(k.key == "DISCORD_GATEWAY_URL" && u.Scheme != "wss" && u.Scheme != "ws") {
			r.fail("%s=%q: want an absolute %s URL", k.key, k.v, map[bool]string{true: "http(s)", false: "ws(s)"}[k.key == "DISCORD_API_URL"])
		}
	}
	for _, e := range c.AgentEnv {
		name, _, _ := strings.Cut(e, "=")
		switch {
		case !envName.MatchString(name):
			r.fail("AGENT_ENV: %q is not a variable name", name)
		case secretOfTheBot(name):
			// The bot's own credentials never go to the agent, whoever
			// asks.
			r.fail("AGENT_ENV: %s would hand the bot's Discord or NATS settings to the agent", name)
		}
	}
	if f := r.get("SYSTEM_PROMPT_FILE"); f != "" {
		b, e := os.ReadFile(f)
		if e != nil {
			r.fail("SYSTEM_PROMPT_FILE: %v", e)
		}
		c.SystemPrompt = strings.TrimSpace(string(b))
	}
	switch {
	case c.WorkingDir != "" && c.NATSURL != "":
		// A path on the workers, not here.
		if !filepath.IsAbs(c.WorkingDir) {
			r.fail("WORKING_DIR=%q: with NATS_URL, an absolute path on the workers", c.WorkingDir)
		}
	case c.WorkingDir != "":
		abs, e := filepath.Abs(c.WorkingDir)
		if fi, se := os.Stat(abs); e != nil || se != nil || !fi.IsDir() {
			r.fail("WORKING_DIR=%q is not a directory", c.WorkingDir)
		}
		c.WorkingDir = abs
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

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
// roles. Approvers are allowed too.
func (c Config) allowed() func(user string, roles []string) bool {
	ids := slices.Concat(c.AllowedUsers, c.AllowedRoles, c.Approvers)
	return func(user string, roles []string) bool { return anyIn(ids, user, roles) }
}

// approver returns the check for APPROVERS.
func (c Config) approver() func(user string, roles []string) bool {
	ids := slices.Clone(c.Approvers)
	return func(user string, roles []string) bool { return anyIn(ids, user, roles) }
}

// anyIn reports whether user or one of roles is among ids.
func anyIn(ids []string, user string, roles []string) bool {
	if user != "" && slices.Contains(ids, user) {
		return true
	}
	for _, r := range roles {
		if slices.Contains(ids, r) {
			return true
		}
	}
	return false
}
