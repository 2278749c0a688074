// Package opencode is the agentcli backend for OpenCode (`opencode run`,
// tested with opencode-ai 1.18.33). Importing it registers the backend as
// "opencode".
//
// # Command line
//
// Every run (Run and Stream alike) uses
//
//	opencode run --format json --auto --thinking --dir=DIR [--model=PROVIDER/MODEL] [--session=ID] [ExtraArgs...]
//
// --auto approves every permission request that the configuration does not
// explicitly deny; without it a headless run rejects anything configured as
// "ask" (it prints "permission requested: …; auto-rejecting" on stderr, the
// tool call fails and the run still exits 0). It is the equivalent of the
// other backends' bypass modes. --thinking only makes opencode print the
// model's reasoning (it does not change the request). --dir is
// Request.Dir made absolute (the current directory when empty); see
// Sessions. Caller-supplied values use the --flag=value form so that a value
// starting with "-" is never read as a flag.
//
// # Prompt
//
// The prompt is written to opencode's stdin, which it reads to EOF, and
// reaches the model verbatim. It is never an argument: opencode wraps every
// message argument that contains a space in literal double quotes. A
// message argument in ExtraArgs is sent before the stdin text, separated by
// a newline. An empty prompt fails (exit 1, "You must provide a message or a
// command").
//
// # System prompt
//
// opencode has no system-prompt flag. Request.SystemPrompt is written to a
// private temporary file, which a second temporary config file lists in
// "instructions"; OPENCODE_CONFIG points at that config. opencode merges it
// with every other config layer (global config, OPENCODE_CONFIG_CONTENT,
// project config; "instructions" lists are concatenated) and appends the
// file to its own system prompt as "Instructions from: <path>" followed by
// the text (SystemPromptAppend). Both files are removed when the run ends.
// OPENCODE_CONFIG_CONTENT, often used for provider wiring, is left alone.
// Only when the run's environment already sets OPENCODE_CONFIG (which holds
// a single path and would be clobbered) is the system prompt prepended to
// the prompt instead, followed by a blank line, with a warning. An agent
// definition (config agent.<name>.prompt with --agent) was not chosen: its
// prompt replaces opencode's whole built-in system prompt, tool guidance
// included.
//
// # Sessions
//
// Result.SessionID is opencode's session id (ses_…, the sessionID field of
// every line); Request.SessionID resumes it with --session. --continue is
// not passed: with --session it is ignored, and alone it picks the most
// recent session, which is racy. opencode 1.18.33 hangs (until
// Request.Timeout) when a session is resumed from a directory other than the
// one it was created in, so resume with the same Request.Dir. As a safety
// net, a Backend remembers the directory of every session it saw, and when
// such a session is resumed with a different Dir it passes the remembered
// one to --dir (and logs a warning): opencode then runs in the session's own
// directory.
//
// # Output, usage and errors
//
// opencode prints full text parts, not deltas (EventText), reasoning
// (EventThinking), tool calls once they completed or failed (EventToolUse
// followed by EventToolResult; canonical names via agentcli.CanonicalTool;
// Input is the tool's input, Output its output or error text, ExitCode the
// shell exit status when reported) and one step_finish per model call, each
// yielding an EventUsage with the usage summed so far. An EventInit carrying
// the session id comes first.
//
// Result.Text is the text parts of the run's last step (the last model call,
// i.e. after the last tool call), joined with "\n"; it is empty if that step
// produced no text. Usage and CostUSD are summed over this run's steps
// (never the whole session): InputTokens are the input tokens not read from
// cache, CacheReadTokens/CacheWriteTokens the cached ones, OutputTokens the
// output tokens without reasoning, ReasoningTokens the reasoning tokens
// (opencode's own split; the fields add up to its "total"). CostUSD is
// non-nil once a step reported a cost. Turns is the number of steps,
// StopReason the last step's finish reason ("stop", "tool-calls",
// "length", ...).
//
// opencode 1.18.33 prints no terminal event. A run succeeds when opencode
// exits 0, printed no error line, and finished its last step (at least one
// step_finish and no step left open); a later build's "done" line also ends
// a run successfully. Anything less is an *agentcli.NoResultError. An error
// line (opencode exits 1) gives an *agentcli.ResultError whose Subtype is
// the error name ("APIError", "ProviderAuthError", "UnknownError", ...),
// APIStatus the HTTP status, and Kind ErrAuth (ProviderAuthError, 401, 403)
// or ErrRateLimited (429). Exit 1 with "Session not found" on stderr is an
// *agentcli.ExitError matching agentcli.ErrSessionNotFound. opencode retries
// 5xx, 408, 409 and 429 responses for about a minute before it reports them.
//
// Request.MaxTurns and the tool filters are not supported (opencode has no
// flags for them; they are configuration) and are ignored with a warning.
package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/runner"
)

// Name is the registry name of this backend.
const Name = "opencode"

// DefaultBinary is the binary looked up on PATH when Options.Path is empty.
const DefaultBinary = "opencode"

// tempPrefix names the temporary directory that holds the system-prompt
// files of one run.
const tempPrefix = "agentcli-opencode-"

// maxSessionDirs bounds the session → directory memory.
const maxSessionDirs = 4096

func init() {
	agentcli.Register(Name, func(o *agentcli.Options) agentcli.Backend { return New(o) })
}

// Backend runs OpenCode. It is safe for concurrent use.
type Backend struct {
	cfg runner.Config

	mu   sync.Mutex
	dirs map[string]string // session id → directory it ran in
}

// New returns an OpenCode backend. opts may be nil.
func New(opts *agentcli.Options) *Backend {
	return &Backend{
		cfg:  runner.Config{Backend: Name, DefaultPath: DefaultBinary, Options: opts},
		dirs: map[string]string{},
	}
}

// Name returns "opencode".
func (b *Backend) Name() string { return Name }

// Capabilities reports what OpenCode supports: resume, reasoning text, cost
// and a system prompt appended to opencode's own; whole text parts rather
// than deltas; no max turns and no tool filter.
func (b *Backend) Capabilities() agentcli.Capabilities {
	return agentcli.Capabilities{
		Thinking:     true,
		Resume:       true,
		SystemPrompt: agentcli.SystemPromptAppend,
		Cost:         true,
	}
}

// Check reports whether the opencode binary resolves and is executable.
func (b *Backend) Check(ctx context.Context) error { return b.cfg.Check(ctx) }

// Run runs req and returns the final result.
func (b *Backend) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	req = runner.OrEmpty(req)
	var dir string
	res, err := runner.Run(ctx, b.cfg, req, b.prepare(req, &dir))
	sid := ""
	if res != nil {
		sid = res.SessionID
	}
	var re *agentcli.ResultError
	if sid == "" && errors.As(err, &re) && re.Result != nil {
		sid = re.Result.SessionID
	}
	b.remember(sid, dir)
	return res, err
}

// Stream runs req and yields its events.
func (b *Backend) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	req = runner.OrEmpty(req)
	return func(yield func(agentcli.Event, error) bool) {
		var dir string
		seen := false
		for ev, err := range runner.Stream(ctx, b.cfg, req, b.prepare(req, &dir)) {
			if !seen && ev.SessionID != "" {
				seen = true
				b.remember(ev.SessionID, dir)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// remember records the directory a session ran in.
func (b *Backend) remember(sid, dir string) {
	if sid == "" || dir == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.dirs[sid]; !ok && len(b.dirs) >= maxSessionDirs {
		clear(b.dirs)
	}
	b.dirs[sid] = dir
}

func (b *Backend) sessionDir(sid string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.dirs[sid]
	return d, ok
}

// prepare builds the job; it stores the directory passed to --dir in *dir.
func (b *Backend) prepare(req *agentcli.Request, dir *string) func() (*runner.Job, error) {
	return func() (*runner.Job, error) {
		log := b.cfg.Logger()
		agentcli.WarnUnsupported(log, Name, b.Capabilities(), req)
		d := absDir(req.Dir)
		if req.SessionID != "" {
			if orig, ok := b.sessionDir(req.SessionID); ok && orig != d {
				log.Warn("agentcli: opencode hangs when a session is resumed from another directory; "+
					"running in the session's own directory", "backend", Name,
					"session", req.SessionID, "dir", d, "session_dir", orig)
				d = orig
			}
		}
		*dir = d
		prompt := req.Prompt
		env := b.cfg.Env(nil, req.Env)
		job := &runner.Job{Parser: newParser()}
		if req.SystemPrompt != "" {
			if v := lookupEnv(env, "OPENCODE_CONFIG"); v != "" {
				log.Warn("agentcli: OPENCODE_CONFIG is already set; prepending the system prompt to the prompt instead",
					"backend", Name, "OPENCODE_CONFIG", v)
				prompt = req.SystemPrompt + "\n\n" + prompt
			} else {
				tmp, err := os.MkdirTemp("", tempPrefix+"*")
				if err != nil {
					return nil, err
				}
				job.Cleanup = func() { os.RemoveAll(tmp) }
				cfg, err := writeSystemPrompt(tmp, req.SystemPrompt)
				if err != nil {
					return job, err
				}
				// Not set anywhere in env (checked above), so appending
				// it last cannot override a caller's value.
				env = append(env, "OPENCODE_CONFIG="+cfg)
			}
		}
		job.Stdin = []byte(prompt)
		job.Env = env
		job.Args = buildArgs(req, d)
		return job, nil
	}
}

// writeSystemPrompt writes system.md and an opencode config that lists it in
// "instructions" into dir (a private 0700 directory) and returns the
// config's path.
func writeSystemPrompt(dir, system string) (string, error) {
	sys := filepath.Join(dir, "system.md")
	if err := os.WriteFile(sys, []byte(system), 0o600); err != nil {
		return "", err
	}
	cfg, err := json.Marshal(map[string]any{"instructions": []string{sys}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "opencode.json")
	return path, os.WriteFile(path, cfg, 0o600)
}

// absDir returns dir made absolute, or the current directory for "".
func absDir(dir string) string {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return ""
		}
		return wd
	}
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// lookupEnv returns the value of key in env; the last entry wins, as with
// os/exec.
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
