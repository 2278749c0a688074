// Command discord-gateway answers Discord messages with a coding-agent CLI
// (Claude Code, Codex, Gemini CLI or OpenCode) through agentcli: a thread
// per task (or one conversation per channel), kept across restarts, replies
// streamed into an edited message, tool permissions asked with buttons.
//
//	DISCORD_TOKEN=... ALLOWED_USERS=123456789 discord-gateway
//	discord-gateway -console            # stdin/stdout instead of Discord
//	discord-gateway -console -offline   # and a local scripted model: no credentials
//
// The configuration comes from the environment; see README.md.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/acpagent"
	"github.com/agentcli/agentcli/agentclitest"
	_ "github.com/agentcli/agentcli/claude"
	_ "github.com/agentcli/agentcli/codex"
	_ "github.com/agentcli/agentcli/copilot"
	_ "github.com/agentcli/agentcli/droid"
	_ "github.com/agentcli/agentcli/gemini"
	_ "github.com/agentcli/agentcli/opencode"
	_ "github.com/agentcli/agentcli/qwen"
	"github.com/bwmarrin/discordgo"
)

func main() {
	guardExec()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// onOffline, when set (by tests), is given the scripted model server of
// -offline.
var onOffline func(*agentclitest.Server)

// run is the whole program, in the environment environ ("K=V"); it returns
// the exit status.
func run(ctx context.Context, args []string, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	lookup := lookupIn(environ)
	fs := flag.NewFlagSet("discord-gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	console := fs.Bool("console", false, "read prompts from stdin and print replies to stdout instead of connecting to Discord")
	offline := fs.Bool("offline", false, "answer from a local scripted model server (no credentials, no network)")
	reply := fs.String("offline-reply", "Hello from the offline model server!", "the canned answer of -offline")
	verbose := fs.Bool("v", false, "log at debug level")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	cfg, err := LoadConfig(lookup, logger)
	if err != nil {
		logger.Error("configuration", "err", err)
		return 1
	}
	if !*console {
		if cfg.Token == "" {
			logger.Error("DISCORD_TOKEN is not set (or use -console)")
			return 1
		}
		if len(cfg.AllowedUsers) == 0 && len(cfg.AllowedRoles) == 0 && len(cfg.Approvers) == 0 {
			logger.Error("set ALLOWED_USERS, ALLOWED_ROLES or APPROVERS: an agent with a shell must not take orders from anyone in a server")
			return 1
		}
	}

	name, err := agentcli.Resolve(cfg.Agent.Backend)
	if err != nil {
		logger.Error("AGENT_BACKEND", "err", err)
		return 1
	}
	path := cfg.Agent.CLIPath
	wire := wireName(name, path)
	if cfg.NATSURL == "" {
		switch {
		case path == "":
			path = installedCLI(wire)
		case !strings.ContainsRune(path, filepath.Separator):
			if p := installedCLI(path); p != "" {
				path = p
			}
		}
	}
	b, err := agentcli.Open(name, &agentcli.Options{Path: path, Args: cfg.Agent.Args, Logger: logger})
	if err != nil {
		logger.Error("opening the backend", "backend", name, "err", err)
		return 1
	}
	// With NATS_URL the runs go to the pool's workers; b only says what
	// the backend can do, while no worker may be up yet.
	var pl *pool
	replica := replicaID()
	if cfg.NATSURL != "" {
		if *offline {
			logger.Error("-offline runs the CLI on this host; it does not go with NATS_URL")
			return 1
		}
		pl, err = openPool(ctx, cfg, name, b.Capabilities(), replica, logger)
		if err != nil {
			logger.Error("the worker pool", "url", cfg.NATSURL, "err", err)
			return 1
		}
		defer pl.close()
		b = pl.backend
		if err := b.Check(ctx); err != nil {
			logger.Warn("no worker of the pool can run the backend now; messages wait for one", "backend", name, "err", err)
		}
		logger.Info("runs go to the worker pool", "replica", replica, "shard", cfg.ShardID, "shards", cfg.ShardCount)
	} else if err := b.Check(ctx); err != nil {
		shown := path
		var be *agentcli.BinaryError
		if errors.As(err, &be) {
			shown = be.Path
		}
		if shown == "" {
			shown = name + " (on PATH)"
		}
		logger.Error("backend check failed", "backend", name, "path", shown, "err", err)
		return 1
	}

	caps := b.Capabilities()
	tmpl := agentcli.Request{
		SystemPrompt:      cfg.SystemPrompt,
		Dir:               cfg.WorkingDir,
		Timeout:           cfg.QueryTimeout,
		Permission:        cfg.Permission,
		PermissionTimeout: cfg.PermissionTimeout,
	}
	// The CLI's environment is an allow-list (see childEnv), never the
	// gateway's own: DISCORD_TOKEN stays here. On the pool, the CLI runs
	// in its worker's environment, with the operator's additions only.
	tmpl.ReplaceEnv = true
	tmpl.Env = childEnv(environ, wire, cfg.AgentEnv) // an ACP agent's CLI: its variables
	if pl != nil {
		tmpl.ReplaceEnv = false
		tmpl.Env = addedEnv(environ, cfg.AgentEnv)
	}
	cfg.Agent.Apply(&tmpl, caps)
	switch {
	case tmpl.Permission == "" && slices.Contains(caps.PermissionModes, agentcli.PermissionAsk):
		tmpl.Permission = agentcli.PermissionAsk
	case tmpl.Permission == "":
		// agentcli's zero value: whatever would need approval is refused.
		tmpl.Permission = agentcli.PermissionDeny
		logger.Warn("this backend cannot ask for permission: tool calls that need approval are refused (PERMISSION_MODE=bypass runs them; ALLOWED_TOOLS approves some)", "backend", name)
	case tmpl.Permission != agentcli.PermissionBypass && !slices.Contains(caps.PermissionModes, tmpl.Permission):
		logger.Error("PERMISSION_MODE not supported by this backend", "backend", name, "mode", tmpl.Permission,
			"supported", caps.PermissionModes)
		return 1
	}

	stateDir := cfg.StateDir
	if *offline {
		home, err := os.MkdirTemp("", "discord-gateway-offline-")
		if err != nil {
			logger.Error("offline", "err", err)
			return 1
		}
		defer os.RemoveAll(home)
		srv := agentclitest.NewServer(agentclitest.Turn{Text: *reply, Repeat: -1})
		defer srv.Close()
		w, err := srv.Wire(wire, home)
		if err != nil {
			logger.Error("offline", "err", err)
			return 1
		}
		// The wiring's environment (a private home, the server's URL and
		// key) replaces the allow-list; the operator's additions stay.
		tmpl.Env = addedEnv(environ, cfg.AgentEnv)
		w.Apply(&tmpl)
		if _, set := lookup("STATE_DIR"); !set {
			// The offline CLI's sessions go away with home; so do ours.
			stateDir = filepath.Join(home, "state")
		}
		if onOffline != nil {
			onOffline(srv)
		}
		logger.Info("offline: the CLI talks to a local scripted model server", "url", srv.URL())
	}

	// One gateway per state directory; what a previous one (killed, so
	// that it could not stop them) left running is killed now.
	tag, unlock, err := lockState(stateDir)
	if err != nil {
		logger.Error("state directory", "dir", stateDir, "err", err)
		return 1
	}
	defer unlock()
	runner := b
	if pl == nil {
		if n := sweep(tag); n > 0 {
			logger.Warn("killed processes a previous run of the gateway left behind", "count", n)
		}
		tmpl.Env = append(tmpl.Env, envTag+"="+tag)
	}
	if guardSupported && pl == nil {
		// Every CLI is started through this binary, which has the kernel
		// kill it when the gateway dies (see guardExec).
		target, err := resolveCLI(path, wire)
		self, serr := os.Executable()
		if err == nil && serr == nil {
			runner, err = agentcli.Open(name, &agentcli.Options{Path: self, Args: cfg.Agent.Args, Logger: logger})
		}
		if err != nil || serr != nil {
			logger.Error("starting the CLIs through the gateway's guard", "err", errors.Join(err, serr))
			return 1
		}
		tmpl.Env = append(tmpl.Env, envExec+"="+target, envParent+"="+strconv.Itoa(os.Getpid()))
	}

	var store SessionStore
	if pl != nil {
		store = pl.store
	} else if store, err = NewFileStore(filepath.Join(stateDir, "sessions", name)); err != nil {
		logger.Error("session store", "err", err)
		return 1
	}

	o := Options{
		Backend: agentcli.WithLimit(runner, cfg.MaxConcurrent),
		Store:   store,
		Queue:   NewMemQueue(cfg.QueueDepth, cfg.QueueTotal),
		Request: tmpl,
		Retry: agentcli.RetryOptions{
			MaxAttempts: cfg.RetryAttempts,
			BaseDelay:   cfg.RetryDelay,
			MaxDelay:    max(cfg.RetryDelay, 2*time.Minute),
		},
		Live:          cfg.Live,
		LiveIdle:      cfg.LiveIdle,
		MaxLive:       cfg.MaxLive,
		Warm:          cfg.Warm,
		Models:        cfg.Models,
		AttachmentMax: cfg.AttachmentMax,
		ImageMax:      cfg.ImageMax,
		Summary:       true,
		Logger:        logger,
	}
	if pl != nil {
		o.Locks, o.Replica = pl.locks, replica
		o.Warm = 0 // the pool's workers start the sessions
		// The pool refuses attachments (cluster's checkLocalOnly) and
		// lists none in its Capabilities.
		o.NoImages = "runs go to the worker pool (NATS_URL), which does not carry images to its workers yet"
	}
	logger.Info("starting", "backend", name, "model", tmpl.Model, "permission", tmpl.Permission,
		"max_concurrent_runs", cfg.MaxConcurrent, "state", stateDir)

	if *console {
		chat := &consoleChat{w: stdout}
		o.Chat = chat
		rt := NewRuntime(o)
		rt.Start()
		runConsole(ctx, rt, chat, stdin)
		// Answer what was typed before the end of input; a signal (ctx)
		// cuts that short.
		shutdown(ctx, rt)
		return 0
	}

	journal, err := NewFileJournal(filepath.Join(stateDir, "inflight"))
	if err != nil {
		logger.Error("journal", "err", err)
		return 1
	}
	setDiscordAPI(cfg.APIURL)
	discordgo.Logger = func(level, caller int, format string, a ...any) {
		l := slog.LevelDebug
		switch level {
		case discordgo.LogError:
			l = slog.LevelError
		case discordgo.LogWarning:
			l = slog.LevelWarn
		}
		logger.Log(context.Background(), l, "discordgo: "+fmt.Sprintf(format, a...))
	}
	s, tr, err := newDiscordSession(cfg.Token, cfg.GatewayURL, logger)
	if err != nil {
		logger.Error("discord", "err", err)
		return 1
	}
	s.ShardID, s.ShardCount = cfg.ShardID, cfg.ShardCount
	chat := &discordChat{s: s, log: logger, tr: tr, files: &http.Client{Timeout: time.Minute}}
	o.Chat = chat
	o.Journal = journal
	o.Preview = true
	o.MaxLen = discordMaxLen
	o.Allowed = cfg.allowed()
	o.Approver = cfg.approver()
	o.Mention = true
	o.Questions = true // where the backend can ask (see NewRuntime)
	o.Fetch = chat.Fetch
	rt := NewRuntime(o)
	rt.Recover(ctx)
	gw := &discordGateway{s: s, chat: chat, rt: rt, log: logger, in: newIntake(), threads: cfg.Threads,
		cmds: cfg.SlashCommands, guilds: cfg.CommandGuilds}
	gw.attach()
	rt.Start()
	if err := s.Open(); err != nil {
		logger.Error("connecting to Discord", "err", err)
		gw.in.close()
		rt.Shutdown(context.Background())
		return 1
	}
	logger.Info("connected to Discord")
	<-ctx.Done()
	logger.Info("shutting down: answering the messages already taken")
	s.Close()     // no new events
	gw.in.close() // those already received are handed over
	shutdown(context.Background(), rt)
	return 0
}

// resolveCLI returns the absolute path of the CLI: path when set, else
// the backend's name on PATH.
func resolveCLI(path, name string) (string, error) {
	if path == "" {
		path = name
	}
	if !strings.Contains(path, "/") {
		return exec.LookPath(path)
	}
	return filepath.Abs(path)
}

// shutdown drains rt: a minute for the answers in progress, then runs are
// cancelled (and ctx ending cuts the minute short).
func shutdown(ctx context.Context, rt *Runtime) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rt.Shutdown(ctx)
}

// wireName is the CLI that backend name runs (for its installed copy and
// -offline's wiring): the backend's own name, a known ACP agent's binary,
// or, for the generic ACP backend ("acp", BACKEND_CLI_PATH with
// BACKEND_CLI_ARGS), the base name of path.
func wireName(name, path string) string {
	if name == acpagent.Name {
		return strings.TrimSuffix(filepath.Base(path), ".exe")
	}
	if a, ok := acpagent.Lookup(name); ok {
		return a.Binary
	}
	return name
}

// installedCLI returns the CLI that scripts/install-clis.sh installed in
// this repository, when the backend's binary is not on PATH; otherwise ""
// (the backend's default name, looked up on PATH).
func installedCLI(name string) string {
	if _, err := exec.LookPath(name); err == nil {
		return ""
	}
	rel := filepath.Join("tools", "clis", "node_modules", ".bin", name)
	candidates := []string{rel, filepath.Join("..", "..", rel)}
	if _, file, _, ok := runtime.Caller(0); ok {
		candidates = append(candidates, filepath.Join(filepath.Dir(file), "..", "..", rel))
	}
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
			abs, _ := filepath.Abs(c)
			return abs
		}
	}
	return ""
}

// replicaID names this process among the gateway's replicas: the host,
// the process and a random part (a restarted replica is another one).
func replicaID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%x", host, os.Getpid(), b)
}
