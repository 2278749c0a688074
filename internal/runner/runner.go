// Package runner is the backend-independent half of every agentcli backend:
// it resolves the binary, builds the environment, runs the CLI through
// internal/proc, feeds stdout lines to the backend's parser, enforces the
// timeout, and turns how the run ended into a Result or a typed error.
//
// A backend contributes only a pure argv builder and a pure line parser.
package runner

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/proc"
)

// Parser turns one run's stdout into events. A new Parser is made for every
// run; it need not be safe for concurrent use.
type Parser interface {
	// Line parses one stdout line (without its newline) and returns the
	// events it yields, in order. It never fails: output it cannot
	// understand becomes EventUnknown or EventNotice events.
	Line(line []byte) []agentcli.Event
	// End is called once, after the process has exited and stdout is
	// exhausted. It decides the run's outcome from the terminal event it saw
	// and the exit status: a Result, or an error (possibly with a Result).
	End(exit Exit) (*agentcli.Result, error)
}

// Exit is how the CLI process ended, as a parser sees it.
type Exit struct {
	Code   int    // exit status; -1 if killed by a signal
	Stderr string // tail of stderr, raw
}

// Job is one run, as prepared by a backend.
type Job struct {
	Args   []string
	Stdin  []byte // nil means /dev/null
	Env    []string
	Parser Parser
	// Cleanup, if set, runs when the run is over, on every path.
	Cleanup func()
}

// Config is what the runner needs from a backend.
type Config struct {
	Backend     string
	DefaultPath string // binary name when Options.Path is empty
	Options     *agentcli.Options
}

// Options returns c.Options or an empty Options.
func (c Config) opts() agentcli.Options {
	if c.Options == nil {
		return agentcli.Options{}
	}
	return *c.Options
}

// Logger returns the configured logger or slog.Default().
func (c Config) Logger() *slog.Logger {
	if c.Options != nil && c.Options.Logger != nil {
		return c.Options.Logger
	}
	return slog.Default()
}

// Path returns the configured binary path or name.
func (c Config) Path() string {
	if c.Options != nil && c.Options.Path != "" {
		return c.Options.Path
	}
	return c.DefaultPath
}

// Resolve finds the binary. Errors are *agentcli.BinaryError.
func (c Config) Resolve() (string, error) {
	path := c.Path()
	berr := func(kind, cause error) error {
		return &agentcli.BinaryError{Backend: c.Backend, Path: path, Err: kind, Cause: cause}
	}
	if !strings.Contains(path, "/") {
		p, err := exec.LookPath(path)
		if err == nil {
			return p, nil
		}
		// LookPath also fails for a non-executable file of that name on
		// PATH; tell the two apart.
		for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
			if dir == "" {
				dir = "."
			}
			if fi, serr := os.Stat(filepath.Join(dir, path)); serr == nil && !fi.IsDir() {
				return "", berr(agentcli.ErrNotExecutable, fs.ErrPermission)
			}
		}
		return "", berr(agentcli.ErrNotFound, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", berr(agentcli.ErrNotFound, err)
	}
	if fi.IsDir() {
		return "", berr(agentcli.ErrNotExecutable, errors.New("is a directory"))
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return "", berr(agentcli.ErrNotExecutable, fs.ErrPermission)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, nil
}

// Check implements Backend.Check.
func (c Config) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := c.Resolve()
	return err
}

// envDrop lists inherited variables never passed to a CLI. CLAUDECODE marks
// a process as running inside Claude Code; a nested claude refuses to start
// when it sees it.
var envDrop = map[string]bool{"CLAUDECODE": true}

// Env builds the child environment: the parent's environment minus
// envDrop, then Options.Env, then the backend's extra, then req.Env. Later
// entries win (os/exec keeps the last value of a duplicated key).
func (c Config) Env(extra, reqEnv []string) []string {
	parent := os.Environ()
	env := make([]string, 0, len(parent)+len(extra)+len(reqEnv)+len(c.opts().Env))
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if !envDrop[k] {
			env = append(env, kv)
		}
	}
	env = append(env, c.opts().Env...)
	env = append(env, extra...)
	env = append(env, reqEnv...)
	return env
}

// Stream runs the job that prepare builds and yields its events. prepare is
// called only when iteration starts, so temporary files it creates exist only
// while the run does; Job.Cleanup removes them on every path.
func Stream(ctx context.Context, c Config, req *agentcli.Request, prepare func() (*Job, error)) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		start := time.Now()
		path, err := c.Resolve()
		if err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		job, err := prepare()
		if job != nil && job.Cleanup != nil {
			defer job.Cleanup()
		}
		if err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		runCtx := ctx
		if req.Timeout > 0 {
			var cancel context.CancelFunc
			runCtx, cancel = context.WithTimeout(ctx, req.Timeout)
			defer cancel()
		}
		// ctxErr returns the error of a run whose context has ended: the
		// caller's cancel, else the timeout; nil while runCtx is live.
		ctxErr := func(stderr string) error {
			if ctx.Err() != nil {
				return &agentcli.CanceledError{Backend: c.Backend, Err: context.Cause(ctx)}
			}
			if runCtx.Err() != nil {
				return &agentcli.TimeoutError{Backend: c.Backend, Timeout: req.Timeout, Stderr: Tail(stderr, 500)}
			}
			return nil
		}
		if err := ctxErr(""); err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		o := c.opts()
		p, err := proc.Start(runCtx, proc.Spec{
			Path:       path,
			Args:       job.Args,
			Dir:        req.Dir,
			Env:        job.Env,
			Stdin:      job.Stdin,
			KillGrace:  o.KillGrace,
			MaxLine:    o.MaxLineBytes,
			StderrTail: o.StderrTailBytes,
		})
		if err != nil {
			if cerr := ctxErr(""); cerr != nil { // proc.Start saw it end
				err = cerr
			} else {
				err = c.startError(path, err)
			}
			yield(agentcli.Event{}, err)
			return
		}
		defer p.Close() // stops and reaps on every path, panics included

		relay := TextRelay{OnText: req.OnText}
	read:
		for {
			line, err := p.ReadLine()
			if err == io.EOF {
				break
			}
			if err != nil {
				// A read error other than EOF: treat like EOF; the exit
				// status and terminal event decide the outcome.
				break
			}
			var evs []agentcli.Event
			if line.TooLong > 0 {
				lerr := &agentcli.LineTooLongError{Limit: maxLine(o), Len: line.TooLong}
				evs = []agentcli.Event{{Kind: agentcli.EventNotice, Err: lerr, Text: lerr.Error()}}
			} else {
				evs = job.Parser.Line(line.Data)
			}
			for _, ev := range evs {
				if runCtx.Err() != nil { // nothing is yielded after the end
					break read
				}
				relay.Observe(ev)
				if !yield(ev, nil) {
					p.Stop()
					p.Wait()
					return
				}
			}
		}
		if runCtx.Err() != nil {
			p.Stop() // proc stops it too, from another goroutine
		}
		exit := p.Wait()
		if err := ctxErr(exit.Stderr); err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		res, rerr := job.Parser.End(Exit{Code: exit.Code, Stderr: exit.Stderr})
		if res != nil {
			res.Duration = time.Since(start)
			res.ExitCode = exit.Code
			if rerr != nil || res.IsError {
				res.Stderr = Tail(exit.Stderr, 500)
			}
		}
		if rerr != nil {
			yield(agentcli.Event{}, rerr)
			return
		}
		yield(agentcli.Event{Kind: agentcli.EventResult, SessionID: res.SessionID, Result: res, Raw: res.Raw}, nil)
	}
}

func maxLine(o agentcli.Options) int {
	if o.MaxLineBytes > 0 {
		return o.MaxLineBytes
	}
	return proc.DefaultMaxLine
}

// startError maps an exec start failure to a *BinaryError.
func (c Config) startError(path string, err error) error {
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
	return &agentcli.BinaryError{Backend: c.Backend, Path: path, Err: kind, Cause: err}
}

// Run consumes Stream and returns the final result. When the run fails
// after the CLI reported a result, that result is returned with the error.
func Run(ctx context.Context, c Config, req *agentcli.Request, prepare func() (*Job, error)) (*agentcli.Result, error) {
	return Collect(c.Backend, Stream(ctx, c, req, prepare))
}

// Collect consumes a run's event stream and returns its final result, with
// Backend.Run's contract: the Result of a *agentcli.ResultError comes back
// with the error, and a stream that ends without a result is a
// *agentcli.NoResultError.
func Collect(backend string, seq iter.Seq2[agentcli.Event, error]) (*agentcli.Result, error) {
	var res *agentcli.Result
	for ev, err := range seq {
		if err != nil {
			var re *agentcli.ResultError
			if errors.As(err, &re) && re.Result != nil {
				return re.Result, err
			}
			return res, err
		}
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
	}
	if res == nil {
		return nil, &agentcli.NoResultError{Backend: backend}
	}
	return res, nil
}

// Tail returns at most n characters from the end of s, with secrets
// redacted and surrounding space trimmed.
func Tail(s string, n int) string {
	s = strings.TrimSpace(Redact(s))
	r := []rune(s)
	if len(r) > n {
		r = r[len(r)-n:]
	}
	return strings.ToValidUTF8(string(r), "\uFFFD")
}

// ExitError builds the *agentcli.ExitError for a non-zero exit with no
// result that explains it. Parsers add a Hint for failures their CLI is
// known for.
func ExitError(backend string, e Exit) *agentcli.ExitError {
	return &agentcli.ExitError{
		Backend: backend,
		Code:    e.Code,
		Stderr:  Tail(e.Stderr, 500),
		Kind:    agentcli.ClassifyMessage(e.Stderr),
	}
}
