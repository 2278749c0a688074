package driver

import (
	"context"
	"iter"
	"log/slog"
	"slices"
	"sync"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/proc"
)

// New returns the agentcli.Backend that spec declares. opts may be nil; it
// is copied, and its zero fields get their defaults, here and nowhere else.
// The result implements SessionStarter when spec.StartSession is
// set.
func New(spec *Spec, opts *agentcli.Options) agentcli.Backend {
	spec = complete(spec)
	b := &Backend{spec: spec, opts: defaults(opts)}
	if spec.NewState != nil {
		b.state = spec.NewState()
	}
	if spec.StartSession != nil {
		return &sessionBackend{b}
	}
	return b
}

// defaults copies opts and fills in every zero field.
func defaults(opts *agentcli.Options) agentcli.Options {
	var o agentcli.Options
	if opts != nil {
		o = *opts
	}
	o.Env = slices.Clone(o.Env)
	o.Args = slices.Clone(o.Args)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler) // a library logs nothing unless asked
	}
	if o.KillGrace <= 0 {
		o.KillGrace = proc.DefaultKillGrace
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = proc.DefaultMaxLine
	}
	if o.StderrTailBytes <= 0 {
		o.StderrTailBytes = proc.DefaultStderrTail
	}
	return o
}

// Backend is the one implementation of agentcli.Backend; a Spec says what
// is particular to each CLI. It is safe for concurrent use: every Run and
// Stream starts its own CLI process.
type Backend struct {
	spec  *Spec
	opts  agentcli.Options
	state any
	// warned holds the keys of the warnings logged so far (see Run.Warn):
	// each is logged once per Backend, not once per run.
	warned sync.Map
}

// Name implements agentcli.Backend.
func (b *Backend) Name() string { return b.spec.Name }

// Capabilities implements agentcli.Backend.
func (b *Backend) Capabilities() agentcli.Capabilities {
	c := b.spec.Caps
	c.Interactive = b.spec.Interactive != nil
	c.PortableSessions = b.spec.ExportSession != nil && b.spec.ImportSession != nil
	c.ListSessions = b.spec.ListSessions != nil
	c.PermissionModes = slices.Clone(c.PermissionModes)
	c.SetPermission = slices.Clone(c.SetPermission)
	c.Efforts = slices.Clone(c.Efforts)
	c.Attachments = slices.Clone(c.Attachments)
	return c
}

// Check implements agentcli.Backend: the binary resolves and is
// executable. It starts nothing.
func (b *Backend) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := b.resolve()
	return err
}

// Run implements agentcli.Backend.
func (b *Backend) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	deltas := req != nil && req.OnText != nil
	return Collect(b.spec.Name, func(yield func(agentcli.Event, error) bool) {
		b.stream(ctx, req, deltas, yield)
	})
}

// Stream implements agentcli.Backend.
func (b *Backend) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		b.stream(ctx, req, true, yield)
	}
}

// Options returns the backend's options, defaults filled in.
func (b *Backend) Options() agentcli.Options { return b.opts }

// sessionBackend is a Backend whose CLI can hold live sessions.
type sessionBackend struct{ *Backend }

// StartSession implements SessionStarter.
func (b *sessionBackend) StartSession(ctx context.Context, req *agentcli.Request) (agentcli.Session, error) {
	if req == nil {
		req = &agentcli.Request{}
	}
	if err := CheckSessionPrompt(b.spec.Name, req); err != nil {
		return nil, err
	}
	r, err := b.prepareRun(req, true, false)
	if err != nil {
		return nil, err
	}
	if err := b.checkCredentials(r); err != nil {
		r.Cleanup()
		return nil, err
	}
	if err := b.resolveContinue(ctx, r); err != nil {
		r.Cleanup()
		return nil, err
	}
	// A live session carries every setting the backend supports, each
	// CLI its own way (see the backends' live.go): prepareRun's warnings
	// (or, under Strict, its UnsupportedError) about what Capabilities
	// lack are all there is to say. What the session reports passes the
	// run's redactor, as a one-shot run's events do.
	red := NewRedactor(redactEnv(r.Env, r.Req))
	r.red = red
	r.Logger = red.Logger(r.Logger) // records carry what the CLI said
	s, err := b.spec.StartSession(ctx, r)
	if err != nil {
		r.Cleanup()
		return nil, red.Error(err)
	}
	return wrapExtras(redactTurns(s, red, RawLimit(req), b.spec.Name, b.spec.Caps.Attachments), b.spec.Name, r.host, r.hooks), nil
}
