// Package claude is the agentcli backend for Anthropic's Claude Code CLI
// (`claude`). Importing it registers the backend as "claude".
//
// Runs use `claude -p --input-format stream-json --output-format stream-json
// --verbose` (plus `--include-partial-messages` when text deltas are wanted)
// with `--dangerously-skip-permissions`. The prompt is written to the CLI's
// stdin as one JSON user message marked as not typed at the prompt, so it
// reaches the model verbatim: never read as a flag, never run as a slash
// command ("/help"), never expanded as a file mention ("@README.md"). The
// system prompt goes to a private (0600) temporary file passed with
// `--append-system-prompt-file` and removed when the run ends. As root, Claude Code refuses
// `--dangerously-skip-permissions` unless IS_SANDBOX=1 is in its
// environment; the resulting error says so.
package claude

import (
	"context"
	"iter"
	"os"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/runner"
)

// Name is the registry name of this backend.
const Name = "claude"

// DefaultBinary is the binary looked up on PATH when Options.Path is empty.
const DefaultBinary = "claude"

func init() {
	agentcli.Register(Name, func(o *agentcli.Options) agentcli.Backend { return New(o) })
}

// Backend runs Claude Code. It is safe for concurrent use.
type Backend struct {
	cfg runner.Config
}

// New returns a Claude Code backend. opts may be nil.
func New(opts *agentcli.Options) *Backend {
	return &Backend{cfg: runner.Config{Backend: Name, DefaultPath: DefaultBinary, Options: opts}}
}

// Name returns "claude".
func (b *Backend) Name() string { return Name }

// Capabilities reports what Claude Code supports: everything agentcli models.
func (b *Backend) Capabilities() agentcli.Capabilities {
	return agentcli.Capabilities{
		TextDeltas:   true,
		Thinking:     true,
		Resume:       true,
		SystemPrompt: agentcli.SystemPromptAppend,
		MaxTurns:     true,
		ToolFilter:   true,
		Cost:         true,
	}
}

// Check reports whether the claude binary resolves and is executable.
func (b *Backend) Check(ctx context.Context) error { return b.cfg.Check(ctx) }

// Run runs req and returns the final result. Text deltas are asked for
// only when req.OnText is set.
func (b *Backend) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	req = runner.OrEmpty(req)
	f := formatJSON
	if req.OnText != nil {
		f = formatStream
	}
	return runner.Run(ctx, b.cfg, req, b.prepare(req, f))
}

// Stream runs req and yields its events, text deltas included.
func (b *Backend) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	req = runner.OrEmpty(req)
	return runner.Stream(ctx, b.cfg, req, b.prepare(req, formatStream))
}

func (b *Backend) prepare(req *agentcli.Request, f format) func() (*runner.Job, error) {
	return func() (*runner.Job, error) {
		agentcli.WarnUnsupported(b.cfg.Logger(), Name, b.Capabilities(), req)
		job := &runner.Job{
			Stdin:  userMessage(req.Prompt),
			Env:    b.cfg.Env(nil, req.Env),
			Parser: newParser(),
		}
		sysFile := ""
		if req.SystemPrompt != "" {
			// os.CreateTemp makes the file 0600.
			f, err := os.CreateTemp("", "agentcli-claude-system-*.md")
			if err != nil {
				return nil, err
			}
			sysFile = f.Name()
			job.Cleanup = func() { os.Remove(sysFile) }
			_, werr := f.WriteString(req.SystemPrompt)
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				return job, werr
			}
		}
		job.Args = buildArgs(req, f, sysFile)
		return job, nil
	}
}
