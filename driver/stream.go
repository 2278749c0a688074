package driver

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/agentcli/agentcli"
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
	if rq.Permission == "" {
		// Backends see the mode the zero value means.
		c := *rq
		c.Permission = Mode(rq)
		rq = &c
	}
	r := &Run{
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
	start := time.Now()
	if req == nil {
		req = &agentcli.Request{}
	}
	// Everything a run yields passes its redactor: errors, notices,
	// retries and results carry the CLI's output. It knows the run's
	// environment once it is built.
	red := ProcessRedactor()
	rawLimit := RawLimit(req)
	out := yield
	yield = func(ev agentcli.Event, err error) bool {
		if err != nil {
			err = red.Error(err)
			CapRawErr(err, rawLimit)
		} else {
			red.Event(&ev)
			CapRaw(&ev, rawLimit)
		}
		return out(ev, err)
	}
	lg := b.newRunLog(ctx, req)
	yield = lg.wrap(yield)
	defer func() { lg.end(red) }()
	r, err := b.prepareRun(req, deltas, true)
	if err != nil {
		yield(agentcli.Event{}, err)
		return
	}
	defer r.Cleanup()
	defer r.host.BeginTurn(ctx)()
	yield = r.hooks.Wrap(ctx, r.host.Wrap(yield))
	r.Req = r.hooks.prompted(ctx, r.Req)
	if err := b.checkCredentials(r); err != nil {
		yield(agentcli.Event{}, err)
		return
	}
	red = NewRedactor(redactEnv(r.Env, r.Req))
	if b.spec.StartSession != nil && (Mode(req) == agentcli.PermissionAsk || b.spec.LiveRun != nil && b.spec.LiveRun(r.Req)) {
		// PermissionAsk needs the host in the loop, and some settings
		// travel privately only in the live protocol (Spec.LiveRun): the
		// run is one turn of a live session (whose wire log is a
		// session's; Replay reads either). The other modes are the CLI's
		// own flags.
		r.red = red
		r.Logger = red.Logger(r.Logger)
		start := func(ctx context.Context, sreq *agentcli.Request) (agentcli.Session, error) {
			r.Req = sreq
			return b.spec.StartSession(ctx, r)
		}
		for ev, err := range OneShot(ctx, start, r.Req) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
		return
	}
	runCtx := ctx
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	// ended is the error of a run its context ended: cancellation or the
	// timeout. After it, nothing but that error is yielded.
	ended := func(stderr string) error {
		if ctx.Err() != nil {
			return &agentcli.CanceledError{Backend: b.spec.Name, Err: context.Cause(ctx)}
		}
		return &agentcli.TimeoutError{Backend: b.spec.Name, Timeout: req.Timeout, Stderr: b.spec.stderrTail(red, Exit{Stderr: stderr})}
	}
	job, err := b.spec.Prepare(runCtx, r)
	if err != nil {
		if runCtx.Err() != nil {
			err = ended("")
		}
		yield(agentcli.Event{}, err)
		return
	}
	if len(job.Env) > 0 {
		red = NewRedactor(redactEnv(append(r.Env[:len(r.Env):len(r.Env)], job.Env...), r.Req))
	}
	if runCtx.Err() != nil {
		yield(agentcli.Event{}, ended(""))
		return
	}
	// What is not needed to start the CLI (the parser, the wire log, the
	// debug log) is set up once it runs, while it starts up.
	p, err := proc.Start(runCtx, proc.Spec{
		Path:       r.Path,
		Args:       job.Args,
		Dir:        r.Dir,
		Env:        append(r.Env[:len(r.Env):len(r.Env)], job.Env...),
		Stdin:      job.Stdin,
		KillGrace:  b.opts.KillGrace,
		MaxLine:    b.opts.MaxLineBytes,
		StderrTail: b.opts.StderrTailBytes,
	})
	if err != nil {
		if runCtx.Err() != nil {
			err = ended("")
		} else {
			err = b.startError(r.Path, err)
		}
		yield(agentcli.Event{}, err)
		return
	}
	defer p.Close() // stops and reaps on every path, panics included
	lg.started(r, job.Args, red)
	lg.spawnedAt(p.Pid())
	f := b.newFeed(r, red)
	wl := b.wireLog(r, job.Args, red)
	if wl != nil && job.Stdin != nil {
		wl.In(job.Stdin)
	}

	// Reading (and decoding, for a DecodeParser) goes on on goroutines of
	// its own (see lineReader); applying lines and yielding stay on this
	// one.
	rd := startReader(runCtx, p, lg, wl, f.dp, decoders(f.borrow), f.borrow, f.ownOver())
	defer rd.stop() // on every path, before p.Close; a no-op once it ended
	session := job.OnSession
	for lines, ok := rd.next(); ok && runCtx.Err() == nil; lines, ok = rd.next() {
		for _, line := range lines {
			for _, ev := range f.read(line) {
				if runCtx.Err() != nil {
					break // nothing is yielded after the run's context ended
				}
				if session != nil && ev.SessionID != "" {
					session(ev.SessionID)
					session = nil
				}
				RelayText(req.OnText, ev)
				if !yield(ev, nil) {
					rd.stop()
					p.Wait()
					return
				}
			}
		}
		rd.recycle(lines)
	}
	if runCtx.Err() != nil {
		rd.stop() // output after the end is drained and dropped
	}
	exit := p.Wait()
	if wl != nil {
		if runCtx.Err() != nil {
			wl.Ended(endReason(ctx))
		}
		wl.Exit(exit.Code, red.Redact(exit.Stderr))
	}
	pexit := Exit{Code: exit.Code, Stderr: exit.Stderr, Truncated: exit.StderrTruncated}
	if runCtx.Err() != nil {
		yield(agentcli.Event{}, ended(exit.Stderr))
		return
	}
	ev, rerr := f.end(pexit)
	if rerr != nil {
		yield(agentcli.Event{}, rerr)
		return
	}
	ev.Result.Duration = time.Since(start)
	yield(ev, nil)
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
	red    *Redactor
	limit  int
	parser Parser
	utf8   UTF8Parser   // parser, when it implements it
	dp     DecodeParser // likewise
	own    OwnParser    // likewise
	synth  Deltas
	out    []agentcli.Event
	// session: the last session id seen, a copy of its own.
	session string
	// schema: the run asked for structured output (Request.OutputSchema).
	schema bool
	// borrow: the run keeps no Raw (Request.DropRaw) and the parser can
	// borrow lines (BorrowParser), so lines are read into reused memory.
	borrow bool
	// rawLimit: the longest Raw the run keeps (RawLimit).
	rawLimit int
}

func (b *Backend) newFeed(r *Run, red *Redactor) *feed {
	f := &feed{spec: b.spec, red: red, limit: b.opts.MaxLineBytes, parser: b.spec.NewParser(r),
		schema: len(r.Req.OutputSchema) > 0, rawLimit: RawLimit(r.Req)}
	if bp, ok := f.parser.(BorrowParser); ok && r.Req.DropRaw {
		bp.Borrow()
		f.borrow = true
	}
	// A parser that borrows takes the lines that do not fit the reader's
	// buffers for keeps; one that does not, the lines whose Raw the run
	// does not keep (see ownOver).
	f.own, _ = f.parser.(OwnParser)
	f.utf8, _ = f.parser.(UTF8Parser)
	f.dp, _ = f.parser.(DecodeParser)
	return f
}

// ownOver returns the length over which a line read into memory that is
// not reused (the run keeps Raw) is handed over for keeps (see
// OwnParser): the longest Raw the run keeps, since the events of a longer
// line keep no Raw of it, so that nothing else reads its memory. It is
// math.MaxInt, none, when the parser cannot take lines for keeps or when
// it borrows (then the reader hands over what does not fit its buffers).
func (f *feed) ownOver() int {
	if f.own == nil || f.borrow {
		return math.MaxInt
	}
	return f.rawLimit
}

// owns reports whether a line of data, in memory nobody reads or reuses
// afterwards, is handed over for keeps (see ownOver).
func (f *feed) owns(data []byte) bool { return longerThan(data, f.ownOver()) }

// read returns the events of a line handed over by the reader: decoded
// already, or not.
func (f *feed) read(l readLine) []agentcli.Event {
	if l.dec == nil || l.TooLong > 0 {
		return f.line(l.Data, l.TooLong, l.utf8, l.owned)
	}
	return f.deltas(f.dp.Apply(l.dec))
}

// line returns the events of one stdout line (or of a line of tooLong
// bytes that was skipped); validUTF8 reports that the line is known to be
// valid UTF-8, and owned that it is handed over for keeps (never a line
// too long). The slice is reused by the next call.
func (f *feed) line(data []byte, tooLong int, validUTF8, owned bool) []agentcli.Event {
	var evs []agentcli.Event
	switch {
	case owned && f.own != nil:
		evs = f.own.LineOwned(data, validUTF8)
	case tooLong > 0:
		lerr := &agentcli.LineTooLongError{Limit: f.limit, Len: tooLong}
		evs = []agentcli.Event{{Kind: agentcli.EventNotice, Err: lerr, Text: lerr.Error()}}
	case validUTF8 && f.utf8 != nil:
		evs = f.utf8.LineUTF8(data)
	default:
		evs = f.parser.Line(data)
	}
	return f.deltas(evs)
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
	res, err := f.spec.end(f.parser, e, f.red)
	if err == nil && f.schema {
		err = f.spec.finishErr(structured(res), e, f.red)
	}
	if res != nil {
		if len(res.Raw) > f.rawLimit {
			res.Raw = nil // not copied by detachResult only to be dropped
		}
		res.ExitCode = e.Code
		if err != nil || res.IsError {
			res.Stderr = f.spec.stderrTail(f.red, e)
		}
		detachResult(res)
	}
	if err != nil {
		return agentcli.Event{}, err
	}
	return agentcli.Event{Kind: agentcli.EventResult, SessionID: res.SessionID, Result: res, Raw: res.Raw}, nil
}

// detachResult gives res memory of its own. The parser's strings and Raw
// may share the memory of the lines they came from, which are read into
// chunks that hold other lines too (see lineChunk); a Result is what
// callers keep after a run, often for long and alone, so it must not keep
// a chunk alive. It costs one copy of a few fields once per run.
func detachResult(res *agentcli.Result) {
	for _, s := range []*string{&res.Text, &res.SessionID, &res.Model, &res.StopReason, &res.Subtype, &res.TerminalReason, &res.Stderr} {
		*s = strings.Clone(*s)
	}
	res.StructuredOutput = bytes.Clone(res.StructuredOutput)
	res.Raw = bytes.Clone(res.Raw)
}

// End ends a run's parsing: it calls p.End and completes what it decided,
// the same way for every backend. A run with no terminal event at all
// becomes an *agentcli.ExitError (or an *agentcli.NoResultError after exit
// 0), and typed errors get their backend, kind, hint and redacted texts.
func (s *Spec) End(p Parser, e Exit) (*agentcli.Result, error) {
	return s.end(p, e, ProcessRedactor())
}

func (s *Spec) end(p Parser, e Exit, red *Redactor) (*agentcli.Result, error) {
	res, err := p.End(e)
	if res == nil && err == nil {
		if e.Code != 0 {
			err = &agentcli.ExitError{Code: e.Code}
		} else {
			err = &agentcli.NoResultError{Code: e.Code}
		}
	}
	red.Result(res)
	return res, s.finishErr(err, e, red)
}

// finishErr fills in what every typed error of a run carries, the same way
// for every backend.
func (s *Spec) finishErr(err error, e Exit, red *Redactor) error {
	if err == nil {
		return nil
	}
	name := s.Name
	var (
		xe *agentcli.ExitError
		ne *agentcli.NoResultError
		re *agentcli.ResultError
	)
	switch {
	case errors.As(err, &re):
		re.Backend = name
		if re.Kind == nil {
			re.Kind = ClassifyStatus(re.APIStatus)
		}
		if re.Kind == nil {
			re.Kind = s.classify(re.Message + "\n" + e.Stderr)
		}
		re.Message = red.Tail(re.Message, 500)
		if re.ExitCode == 0 {
			re.ExitCode = e.Code
		}
		if re.Result != nil {
			re.Result.IsError = true
		}
	case errors.As(err, &xe):
		xe.Backend = name
		if xe.Stderr == "" {
			xe.Stderr = e.Stderr
		}
		if xe.Kind == nil {
			xe.Kind = s.classify(xe.Stderr)
		}
		if xe.Hint == "" && s.Hint != nil {
			xe.Hint = s.Hint(e)
		}
		xe.Stderr = s.stderrTail(red, Exit{Stderr: xe.Stderr, Truncated: e.Truncated})
	case errors.As(err, &ne):
		ne.Backend = name
		if ne.Stderr == "" {
			ne.Stderr = e.Stderr
		}
		ne.Stderr = s.stderrTail(red, Exit{Stderr: ne.Stderr, Truncated: e.Truncated})
	}
	return red.Error(err)
}

// stderrTail is what a run reports of stderr: its end, noise and secrets
// removed (redacted before it is cut; when the CLI wrote more than the
// tail holds, a fragment at the start that may be the end of a secret is
// dropped).
func (s *Spec) stderrTail(red *Redactor, e Exit) string {
	stderr := e.Stderr
	if s.Stderr != nil {
		stderr = s.Stderr(stderr)
	}
	if e.Truncated {
		return red.TruncatedTail(stderr, 500)
	}
	return red.Tail(stderr, 500)
}

// startError maps an exec start failure to a *BinaryError.
func (b *Backend) startError(path string, err error) error {
	kind := agentcli.ErrNotExecutable
	if errors.Is(err, fs.ErrNotExist) {
		kind = agentcli.ErrNotFound
		var pe *fs.PathError
		if errors.As(err, &pe) && errors.Is(pe.Err, syscall.ENOENT) && pe.Path == path {
			// ENOENT for an existing file means its interpreter is missing.
			if _, serr := os.Stat(path); serr == nil {
				kind = agentcli.ErrNotExecutable
			}
		}
	}
	return &agentcli.BinaryError{Backend: b.spec.Name, Path: path, Err: kind, Cause: err}
}
