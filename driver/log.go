package driver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
)

// runLog writes a run's log records: at debug level what was started and
// how long each stage took (spawn, first byte, first event, end), and at
// info level one record when the run ends. Secrets are redacted; of the
// prompt and the system prompt only the length is logged.
type runLog struct {
	ctx     context.Context
	log     *slog.Logger
	backend string
	pkg     string // the CLI's npm package
	model   string
	debug   bool

	start, spawned, firstLine, firstEvent time.Time
	res                                   *agentcli.Result
	err                                   error
}

func (b *Backend) newRunLog(ctx context.Context, req *agentcli.Request) *runLog {
	return &runLog{
		ctx:     ctx,
		log:     b.opts.Logger,
		backend: b.spec.Name,
		pkg:     b.spec.Package,
		model:   req.Model,
		debug:   b.opts.Logger.Enabled(ctx, slog.LevelDebug),
		start:   time.Now(),
	}
}

// wrap observes what a run yields.
func (l *runLog) wrap(yield func(agentcli.Event, error) bool) func(agentcli.Event, error) bool {
	return func(ev agentcli.Event, err error) bool {
		switch {
		case err != nil:
			l.err = err
		case ev.Kind == agentcli.EventResult:
			l.res = ev.Result
		}
		if err == nil && l.firstEvent.IsZero() {
			l.firstEvent = time.Now()
			if l.debug {
				l.log.Debug("agentcli: first event", "backend", l.backend, "kind", ev.Kind, "after", l.firstEvent.Sub(l.start))
			}
		}
		if l.debug && ev.Kind == agentcli.EventInit && ev.Version != "" {
			l.log.Debug("agentcli: CLI version", "backend", l.backend, "version", ev.Version)
		}
		return yield(ev, err)
	}
}

// started records the process about to start.
func (l *runLog) started(r *Run, args []string, red *Redactor) {
	if !l.debug {
		return
	}
	argv := make([]string, 0, len(args)+1)
	argv = append(argv, r.Path)
	for _, a := range args {
		argv = append(argv, elide(red.Redact(elidePrompts(a, r.Req)), 200))
	}
	attrs := []any{"backend", l.backend, "argv", argv, "dir", r.Dir, "prompt_bytes", len(r.Req.Prompt)}
	if v := installedVersion(r.Path, l.pkg); v != "" {
		attrs = append(attrs, "version", v) // from the npm package's package.json; no process started
	}
	red.Logger(l.log).Debug("agentcli: starting CLI", attrs...)
}

// spawnedAt records the start of the process.
func (l *runLog) spawnedAt(pid int) {
	l.spawned = time.Now()
	if l.debug {
		l.log.Debug("agentcli: CLI started", "backend", l.backend, "pid", pid, "spawn", l.spawned.Sub(l.start))
	}
}

// line records a line of output; only the first is logged.
func (l *runLog) line() {
	if !l.firstLine.IsZero() {
		return
	}
	l.firstLine = time.Now()
	if l.debug {
		l.log.Debug("agentcli: first output", "backend", l.backend, "after", l.firstLine.Sub(l.start))
	}
}

// end writes the records of a finished run, secrets redacted by red.
func (l *runLog) end(red *Redactor) {
	l.log = red.Logger(l.log)
	d := time.Since(l.start)
	outcome := "ok"
	if l.err != nil {
		outcome = errKind(l.err)
	}
	attrs := []any{"backend", l.backend, "duration", d, "outcome", outcome}
	model := l.model
	if l.res != nil {
		if l.res.Model != "" {
			model = l.res.Model
		}
		attrs = append(attrs, "input_tokens", l.res.Usage.InputTokens, "output_tokens", l.res.Usage.OutputTokens)
		if l.res.CostUSD != nil {
			attrs = append(attrs, "cost_usd", *l.res.CostUSD)
		}
	}
	if model != "" {
		attrs = append(attrs, "model", model)
	}
	if l.err != nil {
		attrs = append(attrs, "error", l.err.Error())
	}
	if l.debug {
		l.log.Debug("agentcli: run timings", "backend", l.backend,
			"spawn", since(l.start, l.spawned), "first_byte", since(l.start, l.firstLine),
			"first_event", since(l.start, l.firstEvent), "end", d)
	}
	l.log.Info("agentcli: run ended", attrs...)
}

func since(start, t time.Time) time.Duration {
	if t.IsZero() {
		return -1
	}
	return t.Sub(start)
}

// errKind names the class of a run's error for the log.
func errKind(err error) string {
	for _, k := range []struct {
		err  error
		name string
	}{
		{agentcli.ErrCanceled, "canceled"}, {agentcli.ErrTimeout, "timeout"}, {agentcli.ErrBadRequest, "bad_request"},
		{agentcli.ErrUnsupported, "unsupported"}, {agentcli.ErrSessionNotFound, "session_not_found"},
		{agentcli.ErrAuth, "auth"}, {agentcli.ErrRateLimited, "rate_limited"}, {agentcli.ErrResult, "error_result"},
		{agentcli.ErrNotFound, "binary_not_found"}, {agentcli.ErrNotExecutable, "binary_not_executable"},
		{agentcli.ErrNoResult, "no_result"}, {agentcli.ErrExit, "exit"},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "error"
}

// elidePrompts replaces req's prompt and system prompt in arg (a CLI
// argument that carries one, as an interactive UI's first message does)
// with their length, so that a log never holds any of their text.
func elidePrompts(arg string, req *agentcli.Request) string {
	for _, p := range []struct{ name, text string }{{"prompt", req.Prompt}, {"system prompt", req.SystemPrompt}} {
		// A short text is replaced only where it is the whole argument,
		// so that a prompt such as "x" does not garble every flag.
		if p.text != "" && (arg == p.text || len(p.text) >= 8 && strings.Contains(arg, p.text)) {
			arg = strings.ReplaceAll(arg, p.text, fmt.Sprintf("<%s: %d bytes>", p.name, len(p.text)))
		}
	}
	return arg
}

// elide shortens s to its first n characters and says how long it was.
func elide(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return fmt.Sprintf("%s…(%d bytes)", string(r[:n]), len(s))
}
