package driver

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/wirelog"
	"github.com/agentcli/agentcli/internal/proc"
)

// prepareRun checks req (see validate), warns about options the backend
// ignores, resolves the binary and builds the Run. oneShot is false for a
// live session, whose prompts come turn by turn.
func (b *Backend) prepareRun(req *agentcli.Request, deltas, oneShot bool) (*Run, error) {
	if err := platformErr(b.spec.Name, proc.ErrUnsupportedPlatform); err != nil {
		return nil, err
	}
	if err := b.validate(req, oneShot); err != nil {
		return nil, err
	}
	if err := b.warnUnsupported(req); err != nil {
		return nil, err
	}
	path, err := b.resolve()
	if err != nil {
		return nil, err
	}
	dir, err := absDir(req.Dir)
	if err != nil {
		return nil, &agentcli.RequestError{Backend: b.spec.Name, Field: "Dir", Reason: err.Error()}
	}
	rq := b.dropUnsupported(req)
	if oneShot && len(rq.Attachments) > 0 {
		if rq, err = loadRequest(b.spec.Name, b.spec.Caps.Attachments, rq); err != nil {
			return nil, err
		}
	}
	if rq.Permission == "" {
		// Backends see the mode the zero value means.
		c := *rq
		c.Permission = Mode(rq)
		rq = &c
	}
	r := &Run{
		spec:    b.spec,
		Req:     rq,
		Deltas:  deltas,
		Path:    path,
		Dir:     dir,
		Env:     b.env(req),
		Options: &b.opts,
		Logger:  b.opts.Logger,
		State:   b.state,
		warned:  &b.warned,
	}
	if err := b.attachHost(r); err != nil {
		r.Cleanup()
		return nil, err
	}
	b.attachHooks(r, oneShot)
	return r, nil
}

// stream runs req once and yields its events, then the result or the
// error, with agentcli.Backend.Stream's contract.
func (b *Backend) stream(ctx context.Context, req *agentcli.Request, deltas bool, yield func(agentcli.Event, error) bool) {
	if req == nil {
		req = &agentcli.Request{}
	}
	// Everything a run yields passes its redactor: errors, notices,
	// retries and results carry the CLI's output. It knows the run's
	// environment once it is built.
	o := &oneShot{b: b, ctx: ctx, req: req, red: ProcessRedactor(), rawLimit: RawLimit(req), start: time.Now()}
	o.lg = b.newRunLog(ctx, req)
	o.out = o.lg.wrap(yield)
	defer func() { o.lg.end(o.red) }()
	r, err := b.prepareRun(req, deltas, true)
	if err != nil {
		o.fail(err)
		return
	}
	defer r.Cleanup()
	defer r.host.BeginTurn(ctx)()
	// The host tools' and hooks' view of the events is the caller's
	// (redacted, Raw capped).
	o.out = r.hooks.Wrap(ctx, r.host.Wrap(o.out))
	r.Req = r.hooks.prompted(ctx, r.Req)
	if err := b.checkCredentials(r); err != nil {
		o.fail(err)
		return
	}
	goesLive := b.spec.StartSession != nil && (Mode(req) == agentcli.PermissionAsk || b.spec.LiveRun != nil && b.spec.LiveRun(r.Req))
	if goesLive {
		if err := CheckLiveManage(b.spec.Name, b.spec.Caps, req); err != nil {
			o.fail(err)
			return
		}
	}
	if err := b.resolveContinue(ctx, r); err != nil {
		o.fail(err)
		return
	}
	o.r = r
	o.setRedactor(r.Env)
	if goesLive {
		// PermissionAsk needs the host in the loop, and some settings
		// travel privately only in the live protocol (Spec.LiveRun): the
		// run is one turn of a live session (whose wire log is a
		// session's; Replay reads either). The other modes are the CLI's
		// own flags.
		o.live()
		return
	}
	o.run()
}

// oneShot is one run of Backend.stream.
type oneShot struct {
	b        *Backend
	ctx      context.Context // the caller's
	runCtx   context.Context // ctx, bounded by Request.Timeout
	req      *agentcli.Request
	r        *Run
	red      *Redactor
	rawLimit int // the longest Raw the run keeps (RawLimit)
	lg       *runLog
	out      func(agentcli.Event, error) bool // the caller's yield, through the run log
	start    time.Time
}

// setRedactor makes the run's redactor the one of the CLI's environment
// env.
func (o *oneShot) setRedactor(env []string) {
	// The run's request: it carries the host tools' server and secret.
	o.red = NewRedactor(redactEnv(env, o.r.Req))
	o.r.red = o.red
}

// event yields an event of the run: what it carries of the CLI's own
// output passes the run's redactor, and the Raw the run does not keep is
// dropped. It reports whether the caller wants more.
func (o *oneShot) event(ev agentcli.Event) bool {
	o.red.Event(&ev)
	CapRaw(&ev, o.rawLimit)
	return o.out(ev, nil)
}

// fail yields the run's error, made outside the run's Errors (which
// builds its errors complete: see end): by the request's checks, the
// backend's Prepare, a live session. It passes the run's redactor.
func (o *oneShot) fail(err error) {
	err = o.red.Error(err)
	CapRawErr(err, o.rawLimit)
	o.out(agentcli.Event{}, err)
}

// live runs the request as one turn of a live session.
func (o *oneShot) live() {
	r := o.r
	r.Logger = o.red.Logger(r.Logger)
	start := func(ctx context.Context, sreq *agentcli.Request) (agentcli.Session, error) {
		r.Req = sreq
		return o.b.spec.StartSession(ctx, r)
	}
	for ev, err := range OneShot(o.ctx, start, r.Req) {
		if err != nil {
			o.fail(err)
			return
		}
		if !o.event(ev) {
			return
		}
	}
}

// run runs the request's CLI once: it yields the events of its output as
// they arrive, then the outcome.
func (o *oneShot) run() {
	o.runCtx = o.ctx
	if o.req.Timeout > 0 {
		var cancel context.CancelFunc
		o.runCtx, cancel = context.WithTimeout(o.ctx, o.req.Timeout)
		defer cancel()
	}
	job, err := o.b.spec.Prepare(o.runCtx, o.r)
	if err != nil {
		if o.runCtx.Err() != nil {
			err = o.ended(Exit{})
		}
		o.fail(err)
		return
	}
	env := o.r.Env
	if len(job.Env) > 0 {
		env = append(env[:len(env):len(env)], job.Env...)
		o.setRedactor(env)
	}
	p, err := o.startCLI(job, env)
	if err != nil {
		o.fail(err)
		return
	}
	defer p.Close() // stops and reaps on every path, panics included
	o.lg.started(o.r, job.Args, o.red)
	o.lg.spawnedAt(p.Pid())
	// What is not needed to start the CLI (the parser, the wire log, the
	// debug log) is set up once it runs, while it starts up.
	f := o.b.newFeed(o.r, o.red)
	wl := o.b.wireLog(o.r, job.Args, o.red)
	if wl != nil && job.Stdin != nil {
		wl.In(job.Stdin)
	}
	session := job.OnSession
	if !o.handLines(job.Before, f, wl, &session) {
		return
	}
	if o.pump(p, f, wl, session) {
		o.finish(p, f, wl, job.After)
	}
}

// handLines handles lines the backend hands over as if the CLI had
// printed them (Job.Before, Job.After): the parser reads them, the wire
// log records them as stdout, their events are yielded. session, if it
// points to a function, is called with the first session id and cleared.
// It reports false when the caller stopped reading.
func (o *oneShot) handLines(lines [][]byte, f *feed, wl *wirelog.Writer, session *func(string)) bool {
	for _, line := range lines {
		if wl != nil {
			wl.Out(line)
		}
		for _, ev := range f.line(line, 0) {
			if o.runCtx.Err() != nil {
				return true // nothing is yielded after the run's context ended
			}
			if session != nil && *session != nil && ev.SessionID != "" {
				(*session)(ev.SessionID)
				*session = nil
			}
			RelayText(o.req.OnText, ev)
			if !o.event(ev) {
				return false
			}
		}
	}
	return true
}

// startCLI starts the run's CLI as job says, with the environment env.
func (o *oneShot) startCLI(job *Job, env []string) (*proc.Process, error) {
	if o.runCtx.Err() != nil {
		return nil, o.ended(Exit{})
	}
	opts := &o.b.opts
	p, err := proc.Start(o.runCtx, proc.Spec{
		Path:       o.r.Path,
		Args:       job.Args,
		Dir:        o.r.Dir,
		Env:        env,
		Stdin:      job.Stdin,
		KillGrace:  opts.KillGrace,
		MaxLine:    opts.MaxLineBytes,
		StderrTail: opts.StderrTailBytes,
	})
	switch {
	case err == nil:
		return p, nil
	case o.runCtx.Err() != nil:
		return nil, o.ended(Exit{})
	}
	return nil, StartError(o.b.spec.Name, o.r.Path, err)
}

// pump yields the events of the CLI's output as it arrives, until it ends
// or the run's context does. Reading (and decoding) goes on on goroutines
// of their own (see lineReader); applying lines and yielding stay on this
// one. It reports false when the caller stopped reading (the CLI is then
// stopped and reaped).
func (o *oneShot) pump(p *proc.Process, f *feed, wl *wirelog.Writer, session func(string)) bool {
	rd := startReader(o.runCtx, p, o.lg, wl, f.decoder(), f.mem.decoders, f.mem.borrow, f.mem.ownOver)
	defer rd.stop() // on every path, before p.Close; a no-op once it ended
	for lines, ok := rd.next(); ok && o.runCtx.Err() == nil; lines, ok = rd.next() {
		for i := range lines {
			for _, ev := range f.read(&lines[i]) {
				if o.runCtx.Err() != nil {
					break // nothing is yielded after the run's context ended
				}
				if session != nil && ev.SessionID != "" {
					session(ev.SessionID)
					session = nil
				}
				RelayText(o.req.OnText, ev)
				if !o.event(ev) {
					rd.stop()
					p.Wait()
					return false
				}
			}
		}
		rd.recycle(lines)
	}
	if o.runCtx.Err() != nil {
		rd.stop() // output after the end is drained and dropped
	}
	return true
}

// finish waits for the CLI to exit and yields the run's outcome: its
// result, or its error.
func (o *oneShot) finish(p *proc.Process, f *feed, wl *wirelog.Writer, after func() [][]byte) {
	e := p.Wait().Exit
	if after != nil && o.runCtx.Err() == nil && !o.handLines(after(), f, wl, nil) {
		return
	}
	if wl != nil {
		if o.runCtx.Err() != nil {
			wl.Ended(endReason(o.ctx))
		}
		wl.Exit(o.red.Exit(e))
	}
	if o.runCtx.Err() != nil {
		o.out(agentcli.Event{}, o.ended(e))
		return
	}
	ev, err := f.end(e)
	if err != nil {
		o.out(agentcli.Event{}, err) // complete (see Errors)
		return
	}
	ev.Result.Duration = time.Since(o.start)
	o.out(ev, nil)
}

// ended is the error of a run its context ended: cancellation or the
// timeout. After it, nothing but that error is yielded.
func (o *oneShot) ended(e Exit) error {
	if o.ctx.Err() != nil {
		return &agentcli.CanceledError{Backend: o.b.spec.Name, Err: context.Cause(o.ctx)}
	}
	return NewErrors(o.b.spec, o.red, o.req).Timeout(o.req.Timeout, e)
}

// endReason names why a run's context ended, for the wire log.
func endReason(ctx context.Context) string {
	if ctx.Err() != nil {
		return "canceled"
	}
	return "timeout"
}

// feed turns one run's stdout lines into the events a caller sees: the
// parser's, with text deltas synthesized where the CLI reports whole
// blocks only. A live run and a replay of its wire log go through the same
// feed, so they yield the same events.
type feed struct {
	spec   *Spec
	errs   *Errors
	limit  int
	parser Parser
	fast   fastParser // parser, when Lines made it
	synth  Deltas
	out    []agentcli.Event
	// session: the last session id seen, a copy of its own.
	session string
	// mem is how the run's output is read into memory (see memory.go).
	mem memory
}

func (b *Backend) newFeed(r *Run, red *Redactor) *feed {
	f := &feed{spec: b.spec, errs: NewErrors(b.spec, red, r.Req), limit: b.opts.MaxLineBytes, parser: b.spec.NewParser(r)}
	f.fast, _ = f.parser.(fastParser)
	f.mem = memoryOf(r.Req, f.fast != nil)
	if f.mem.borrow {
		f.fast.borrowLines()
	}
	return f
}

// read returns the events of a line handed over by the reader: decoded
// already, or not.
func (f *feed) read(l *readLine) []agentcli.Event {
	if l.TooLong > 0 || f.fast == nil {
		return f.line(l.Data, l.TooLong)
	}
	return f.deltas(f.fast.read(l))
}

// line returns the events of one stdout line (or of a line of tooLong
// bytes that was skipped). The slice is reused by the next call.
func (f *feed) line(data []byte, tooLong int) []agentcli.Event {
	if tooLong > 0 {
		lerr := &agentcli.LineTooLongError{Limit: f.limit, Len: tooLong}
		return f.deltas([]agentcli.Event{{Kind: agentcli.EventNotice, Err: lerr, Text: lerr.Error()}})
	}
	return f.deltas(f.parser.Line(data))
}

// deltas returns evs with text deltas synthesized where due. The slice is
// reused by the next call.
func (f *feed) deltas(evs []agentcli.Event) []agentcli.Event {
	f.out = f.out[:0]
	for _, ev := range evs {
		if ev.SessionID != "" {
			// Callers keep session ids (to resume), often for long: a
			// copy, made once per id, keeps no line alive (see
			// detachResult).
			if ev.SessionID != f.session {
				f.session = strings.Clone(ev.SessionID)
			}
			ev.SessionID = f.session
		}
		f.out = f.synth.Apply(f.out, ev)
	}
	return f.out
}

// end decides the outcome once the CLI has exited: the result event, or
// the error.
func (f *feed) end(e Exit) (agentcli.Event, error) {
	res, err := f.errs.Outcome(f.parser.End(e), e)
	if err != nil {
		return agentcli.Event{}, err
	}
	return agentcli.Event{Kind: agentcli.EventResult, SessionID: res.SessionID, Result: res, Raw: res.Raw}, nil
}

// End ends a run's parsing: it calls p.End and turns its Outcome into the
// run's Result or typed error, the same way for every backend (see
// Errors.Outcome), redacting what this process's environment holds.
func (s *Spec) End(p Parser, e Exit) (*agentcli.Result, error) {
	return NewErrors(s, nil, nil).Outcome(p.End(e), e)
}

// StartError maps the error of starting the CLI at path (exec.Cmd.Start)
// to an *agentcli.BinaryError: ErrNotFound when there is no such file,
// ErrNotExecutable otherwise, including a script whose interpreter is
// missing (ENOENT for a file that exists).
func StartError(backend, path string, err error) error {
	kind := agentcli.ErrNotExecutable
	if errors.Is(err, fs.ErrNotExist) {
		kind = agentcli.ErrNotFound
		var pe *fs.PathError
		if errors.As(err, &pe) && errors.Is(pe.Err, syscall.ENOENT) && pe.Path == path {
			if _, serr := os.Stat(path); serr == nil {
				kind = agentcli.ErrNotExecutable
			}
		}
	}
	return &agentcli.BinaryError{Backend: backend, Path: path, Err: kind, Cause: err}
}
