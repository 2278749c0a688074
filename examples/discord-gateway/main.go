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
	g := &startup{ctx: ctx, environ: environ, lookup: lookupIn(environ), console: *console, offline: *offline,
		reply: *reply, logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))}
	defer g.close()
	o, ok := g.setUp()
	if !ok {
		return 1
	}
	if g.console {
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
	return g.serveDiscord(o)
}

// startup is one run of the gateway while it sets up: what run's steps
// share, and what is undone when it ends (close).
type startup struct {
	ctx     context.Context
	environ []string
	lookup  func(string) (string, bool)
	logger  *slog.Logger
	// The flags.
	console, offline bool
	reply            string

	cfg      Config
	name     string           // the backend's registry name
	path     string           // Options.Path of the CLI ("" for PATH)
	wire     string           // the CLI's own name (see wireName)
	b        agentcli.Backend // the backend (the pool's, with NATS_URL)
	pl       *pool            // nil without NATS_URL
	replica  string
	tmpl     agentcli.Request // every run's request, but for its prompt
	stateDir string
	runner   agentcli.Backend // b, or b through the guard (see guardExec)
	undo     []func()         // run by close, last first
}

// close undoes what the set-up did, last first.
func (g *startup) close() {
	for i := len(g.undo) - 1; i >= 0; i-- {
		g.undo[i]()
	}
}

// fail logs msg with args as an error and returns false.
func (g *startup) fail(msg string, args ...any) bool {
	g.logger.Error(msg, args...)
	return false
}

// setUp reads the configuration, opens the backend (or the worker pool),
// builds the request template, readies -offline, the state directory and
// the guard, and returns the runtime's options (without a Chat); false
// after logging why it cannot.
func (g *startup) setUp() (Options, bool) {
	ok := g.configure() && g.openBackend() && g.template() && g.setUpOffline() && g.setUpState()
	if !ok {
		return Options{}, false
	}
	o, ok := g.options()
	if ok {
		g.logger.Info("starting", "backend", g.name, "model", g.tmpl.Model, "permission", g.tmpl.Permission,
			"max_concurrent_runs", g.cfg.MaxConcurrent, "state", g.stateDir)
	}
	return o, ok
}

// configure loads the configuration and refuses one that would let
// anyone in a server give the agent orders.
func (g *startup) configure() bool {
	cfg, err := LoadConfig(g.lookup, g.logger)
	if err != nil {
		return g.fail("configuration", "err", err)
	}
	g.cfg = cfg
	if !g.console {
		if cfg.Token == "" {
			return g.fail("DISCORD_TOKEN is not set (or use -console)")
		}
		if len(cfg.AllowedUsers) == 0 && len(cfg.AllowedRoles) == 0 && len(cfg.Approvers) == 0 {
			return g.fail("set ALLOWED_USERS, ALLOWED_ROLES or APPROVERS: an agent with a shell must not take orders from anyone in a server")
		}
	}
	return true
}

// openBackend opens the configured backend and checks it: on this host,
// or, with NATS_URL, through the worker pool.
func (g *startup) openBackend() bool {
	cfg, logger := g.cfg, g.logger
	name, err := agentcli.Resolve(cfg.Agent.Backend)
	if err != nil {
		return g.fail("AGENT_BACKEND", "err", err)
	}
	g.name, g.path = name, cfg.Agent.CLIPath
	g.wire = wireName(name, g.path)
	if cfg.NATSURL == "" {
		switch {
		case g.path == "":
			g.path = installedCLI(g.wire)
		case !strings.ContainsRune(g.path, filepath.Separator):
			if p := installedCLI(g.path); p != "" {
				g.path = p
			}
		}
	}
	b, err := agentcli.Open(name, &agentcli.Options{Path: g.path, Args: cfg.Agent.Args, Logger: logger})
	if err != nil {
		return g.fail("opening the backend", "backend", name, "err", err)
	}
	g.b, g.replica = b, replicaID()
	if cfg.NATSURL == "" {
		if err := b.Check(g.ctx); err != nil {
			shown := g.path
			var be *agentcli.BinaryError
			if errors.As(err, &be) {
				shown = be.Path
			}
			if shown == "" {
				shown = name + " (on PATH)"
			}
			return g.fail("backend check failed", "backend", name, "path", shown, "err", err)
		}
		return true
	}
	// With NATS_URL the runs go to the pool's workers; b only says what
	// the backend can do, while no worker may be up yet.
	if g.offline {
		return g.fail("-offline runs the CLI on this host; it does not go with NATS_URL")
	}
	pl, err := openPool(g.ctx, cfg, name, b.Capabilities(), g.replica, logger)
	if err != nil {
		return g.fail("the worker pool", "url", cfg.NATSURL, "err", err)
	}
	g.undo = append(g.undo, pl.close)
	g.pl, g.b = pl, pl.backend
	if err := g.b.Check(g.ctx); err != nil {
		logger.Warn("no worker of the pool can run the backend now; messages wait for one", "backend", name, "err", err)
	}
	logger.Info("runs go to the worker pool", "replica", g.replica, "shard", cfg.ShardID, "shards", cfg.ShardCount)
	return true
}

// template builds the request every run starts from: the configuration's
// settings, the CLI's environment and a permission mode the backend has.
func (g *startup) template() bool {
	cfg, caps := g.cfg, g.b.Capabilities()
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
	tmpl.Env = childEnv(g.environ, g.wire, cfg.AgentEnv) // an ACP agent's CLI: its variables
	if g.pl != nil {
		tmpl.ReplaceEnv = false
		tmpl.Env = addedEnv(g.environ, cfg.AgentEnv)
	}
	cfg.Agent.Apply(&tmpl, caps)
	switch {
	case tmpl.Permission == "" && slices.Contains(caps.PermissionModes, agentcli.PermissionAsk):
		tmpl.Permission = agentcli.PermissionAsk
	case tmpl.Permission == "":
		// agentcli's zero value: whatever would need approval is refused.
		tmpl.Permission = agentcli.PermissionDeny
		g.logger.Warn("this backend cannot ask for permission: tool calls that need approval are refused (PERMISSION_MODE=bypass runs them; ALLOWED_TOOLS approves some)", "backend", g.name)
	case tmpl.Permission != agentcli.PermissionBypass && !slices.Contains(caps.PermissionModes, tmpl.Permission):
		return g.fail("PERMISSION_MODE not supported by this backend", "backend", g.name, "mode", tmpl.Permission,
			"supported", caps.PermissionModes)
	}
	g.tmpl, g.stateDir = tmpl, cfg.StateDir
	return true
}

// setUpOffline, with -offline, points the CLI at a local scripted model
// server in a private home.
func (g *startup) setUpOffline() bool {
	if !g.offline {
		return true
	}
	home, err := os.MkdirTemp("", "discord-gateway-offline-")
	if err != nil {
		return g.fail("offline", "err", err)
	}
	g.undo = append(g.undo, func() { os.RemoveAll(home) })
	srv := agentclitest.NewServer(agentclitest.Turn{Text: g.reply, Repeat: -1})
	g.undo = append(g.undo, srv.Close)
	w, err := srv.Wire(g.wire, home)
	if err != nil {
		return g.fail("offline", "err", err)
	}
	// The wiring's environment (a private home, the server's URL and
	// key) replaces the allow-list; the operator's additions stay.
	g.tmpl.Env = addedEnv(g.environ, g.cfg.AgentEnv)
	w.Apply(&g.tmpl)
	if _, set := g.lookup("STATE_DIR"); !set {
		// The offline CLI's sessions go away with home; so do ours.
		g.stateDir = filepath.Join(home, "state")
	}
	if onOffline != nil {
		onOffline(srv)
	}
	g.logger.Info("offline: the CLI talks to a local scripted model server", "url", srv.URL())
	return true
}

// setUpState takes the state directory (one gateway each), kills what a
// previous gateway left running there, and has every CLI started through
// the guard where the platform has one.
func (g *startup) setUpState() bool {
	tag, unlock, err := lockState(g.stateDir)
	if err != nil {
		return g.fail("state directory", "dir", g.stateDir, "err", err)
	}
	g.undo = append(g.undo, unlock)
	g.runner = g.b
	if g.pl != nil {
		return true
	}
	if n := sweep(tag); n > 0 {
		g.logger.Warn("killed processes a previous run of the gateway left behind", "count", n)
	}
	g.tmpl.Env = append(g.tmpl.Env, envTag+"="+tag)
	if !guardSupported {
		return true
	}
	// Every CLI is started through this binary, which has the kernel
	// kill it when the gateway dies (see guardExec).
	target, err := resolveCLI(g.path, g.wire)
	self, serr := os.Executable()
	if err == nil && serr == nil {
		g.runner, err = agentcli.Open(g.name, &agentcli.Options{Path: self, Args: g.cfg.Agent.Args, Logger: g.logger})
	}
	if err != nil || serr != nil {
		return g.fail("starting the CLIs through the gateway's guard", "err", errors.Join(err, serr))
	}
	g.tmpl.Env = append(g.tmpl.Env, envExec+"="+target, envParent+"="+strconv.Itoa(os.Getpid()))
	return true
}

// options returns the runtime's options, but for its Chat.
func (g *startup) options() (Options, bool) {
	cfg := g.cfg
	var store SessionStore
	if g.pl != nil {
		store = g.pl.store
	} else {
		var err error
		if store, err = NewFileStore(filepath.Join(g.stateDir, "sessions", g.name)); err != nil {
			return Options{}, g.fail("session store", "err", err)
		}
	}
	o := Options{
		Backend: agentcli.WithLimit(g.runner, cfg.MaxConcurrent),
		Store:   store,
		Queue:   NewMemQueue(cfg.QueueDepth, cfg.QueueTotal),
		Request: g.tmpl,
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
		Logger:        g.logger,
	}
	if g.pl != nil {
		o.Locks, o.Replica = g.pl.locks, g.replica
		o.Warm = 0 // the pool's workers start the sessions
	}
	return o, true
}

// serveDiscord connects to Discord and answers messages until ctx ends,
// then answers those already taken; it returns the exit status.
func (g *startup) serveDiscord(o Options) int {
	cfg, logger := g.cfg, g.logger
	journal, err := NewFileJournal(filepath.Join(g.stateDir, "inflight"))
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
	rt.Recover(g.ctx)
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
	<-g.ctx.Done()
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
