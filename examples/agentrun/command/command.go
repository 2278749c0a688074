// Package command is agentrun (see examples/agentrun) as a function,
// for programs that add backends to it: a backend registered by an import
// of the program (as any driver.Register does, from the backend's init)
// is available to -backend like the built-in ones, which this
// package imports:
//
//	import (
//		"github.com/agentcli/agentcli/examples/agentrun/command"
//		_ "example.com/mybackend"
//	)
//
//	func main() { os.Exit(command.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
package command

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/acpagent"
	"github.com/agentcli/agentcli/agentclitest"
	_ "github.com/agentcli/agentcli/claude"
	_ "github.com/agentcli/agentcli/codex"
	_ "github.com/agentcli/agentcli/copilot"
	"github.com/agentcli/agentcli/driver"
	_ "github.com/agentcli/agentcli/droid"
	_ "github.com/agentcli/agentcli/gemini"
	_ "github.com/agentcli/agentcli/opencode"
	_ "github.com/agentcli/agentcli/qwen"
)

// Main runs agentrun with the command-line arguments args (without the
// program name) and the standard streams, and returns its exit status. It
// blocks until the run, session or interactive UI ends.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := agentcli.ConfigFromEnv(logger)
	f, ok := parseFlags(args, cfg, stderr)
	if !ok {
		return 2
	}
	if f.doctor {
		return runDoctor(f.cliPath, f.asJSON, stdout)
	}
	out := output{stdout: stdout, stderr: stderr, enc: json.NewEncoder(stdout), json: f.asJSON, stream: f.stream}
	if f.replay != "" {
		return runReplay(f.backend, f.replay, out)
	}
	if code := f.check(stderr); code != 0 {
		return code
	}
	prompt, in, code := f.input(stdin, stderr)
	if code != 0 {
		return code
	}
	b, wire, code := f.open(cfg, logger, stderr)
	if code != 0 {
		return code
	}
	if f.list {
		return listSessions(b, out)
	}
	req := f.request(cfg, b, prompt, in, stderr)
	if f.wireLog != "" {
		w, err := os.Create(f.wireLog)
		if err != nil {
			fmt.Fprintln(stderr, "agentrun:", err)
			return 1
		}
		defer w.Close()
		req.WireLog = w
	}
	// script prepares the offline model's answer to a prompt.
	script := func(string) {}
	if f.offline {
		var undo func()
		if script, undo, code = f.offlineModel(req, wire, stderr); code != 0 {
			return code
		}
		defer undo()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.interactive {
		if !f.timeoutSet {
			req.Timeout = 0 // a person is at the terminal
		}
		req.MaxTurns = 0 // no interactive UI takes a turn limit (BACKEND_MAX_TURNS has a default)
		return runInteractive(ctx, b, req, stdin, stdout, stderr)
	}
	if !f.stream && !f.asJSON {
		req.OnText = func(s string) { fmt.Fprint(stdout, s) }
	}
	if f.chat {
		return chatLoop(ctx, b, req, in, script, out, f.attach)
	}
	req.Attachments = f.attach
	script(req.Prompt)
	if !out.turn(b.Stream(ctx, req)) {
		return 1
	}
	return 0
}

// flags are agentrun's command line.
type flags struct {
	backend, cliPath, model, session, system, permission string
	reply, wireLog, replay, newID                        string
	timeout                                              time.Duration
	timeoutSet                                           bool // -timeout was given
	asJSON, stream, offline, doctor, chat, interactive   bool
	toolDemo, cont, fork, list                           bool
	attach                                               []agentcli.Attachment
	agentArgs                                            []string
	args                                                 []string // the arguments after the flags
	usage                                                func()
}

// parseFlags parses args, with defaults from cfg (the environment's);
// false when they do not parse (the flag package has said why).
func parseFlags(args []string, cfg agentcli.Config, stderr io.Writer) (*flags, bool) {
	f := &flags{}
	fs := flag.NewFlagSet("agentrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.backend, "backend", cfg.Backend, "backend name (default from AGENT_BACKEND, else claude)")
	fs.StringVar(&f.cliPath, "cli", cfg.CLIPath, "CLI binary path (default from BACKEND_CLI_PATH)")
	fs.StringVar(&f.model, "model", cfg.Model, "model (default from BACKEND_MODEL)")
	fs.StringVar(&f.session, "session", "", "session id to resume")
	fs.StringVar(&f.system, "system", "", "system prompt")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "timeout for the whole run (0: none)")
	fs.BoolVar(&f.asJSON, "json", false, "print the final result as one JSON object")
	fs.BoolVar(&f.stream, "stream", false, "print every normalized event as a JSON line")
	fs.BoolVar(&f.offline, "offline", false, "answer from a local scripted model server instead of the real API")
	fs.StringVar(&f.reply, "offline-reply", "Hello from the offline model server!", "the canned reply used with -offline")
	fs.StringVar(&f.wireLog, "wire-log", "", "write the run's wire log (every CLI output line and stdin message) to this file")
	fs.StringVar(&f.replay, "replay", "", "print the events of a wire log written by -wire-log (with -backend) instead of running")
	fs.BoolVar(&f.doctor, "doctor", false, "report every backend's CLI (path, version, credentials set) and exit; no model call")
	fs.BoolVar(&f.chat, "chat", false, "live session: each stdin line is one turn")
	fs.StringVar(&f.permission, "permission", "", "permission mode: bypass, ask, deny or plan (default: PERMISSION_MODE, else deny)")
	fs.BoolVar(&f.interactive, "interactive", false, "hand the terminal to the CLI's own interactive UI (the prompt, optional, is the first message)")
	fs.BoolVar(&f.toolDemo, "tool-demo", false, "give the agent a host tool written in Go: current_time")
	fs.Func("attach", "send FILE with the prompt (an image: PNG, JPEG, GIF, WebP; or a text file); repeatable; with -chat, with the first turn", func(path string) error {
		f.attach = append(f.attach, agentcli.Attachment{Path: path})
		return nil
	})
	fs.Func("arg", "an argument that starts the agent of backend acp in ACP mode (e.g. -arg=--acp); repeatable; replaces a known ACP agent's own (default from BACKEND_CLI_ARGS)", func(a string) error {
		f.agentArgs = append(f.agentArgs, a)
		return nil
	})
	fs.BoolVar(&f.cont, "continue", false, "continue the most recent session of the current directory")
	fs.BoolVar(&f.fork, "fork", false, "with -session or -continue: fork that session into a new one (the original stays as it was)")
	fs.StringVar(&f.newID, "session-id", "", "the id (a UUID) of the new session (with -fork: of the fork)")
	fs.BoolVar(&f.list, "list", false, "list the sessions of the current directory, newest first, one per line (id, updated, title) and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: agentrun [flags] prompt|-\n       agentrun -chat [flags]\n       agentrun -interactive [flags] [prompt]\n\nbackends: %v\n\n", agentcli.Backends())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, false
	}
	fs.Visit(func(fl *flag.Flag) { f.timeoutSet = f.timeoutSet || fl.Name == "timeout" })
	f.args, f.usage = fs.Args(), fs.Usage
	if len(f.agentArgs) == 0 {
		f.agentArgs = cfg.Args // BACKEND_CLI_ARGS
	}
	return f, true
}

// arg returns the i-th argument after the flags, or "".
func (f *flags) arg(i int) string {
	if i < len(f.args) {
		return f.args[i]
	}
	return ""
}

// check refuses flags that do not go together, and a permission mode or
// a number of arguments that is off: 2, after saying why; 0 when they
// are fine.
func (f *flags) check(stderr io.Writer) int {
	wantArgs := 1
	if f.chat || f.list || f.interactive && len(f.args) == 0 {
		wantArgs = 0
	}
	switch agentcli.PermissionMode(f.permission) {
	case "", agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan:
	default:
		fmt.Fprintf(stderr, "agentrun: unknown permission mode %q (bypass, ask, deny or plan)\n", f.permission)
		return 2
	}
	switch {
	case f.asJSON && f.stream:
		fmt.Fprintln(stderr, "agentrun: -json and -stream cannot be combined: -stream already prints the result as its last line")
	case f.interactive && (f.chat || f.asJSON || f.stream || f.wireLog != ""):
		fmt.Fprintln(stderr, "agentrun: -interactive hands the terminal to the CLI: it cannot be combined with -chat, -json, -stream or -wire-log")
	case f.interactive && f.arg(0) == "-":
		fmt.Fprintln(stderr, "agentrun: -interactive reads the terminal: the first message cannot come from stdin")
	case f.list && (f.chat || f.interactive || f.cont || f.fork || f.newID != "" || f.session != ""):
		fmt.Fprintln(stderr, "agentrun: -list runs nothing: it cannot be combined with -chat, -interactive, -continue, -fork, -session or -session-id")
	case len(f.args) != wantArgs:
		f.usage()
	default:
		return 0
	}
	return 2
}

// input returns the prompt (read from stdin for "-") and what answers the
// session's questions and permission requests, or an exit status.
func (f *flags) input(stdin io.Reader, stderr io.Writer) (string, *lines, int) {
	prompt := ""
	if !f.chat {
		prompt = f.arg(0)
	}
	var in *lines
	if f.interactive {
		in = newLines(nil) // the terminal is the CLI's: reading it here would stop us (SIGTTIN)
	} else if prompt == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "agentrun: reading stdin:", err)
			return "", nil, 1
		}
		prompt = string(b)
		in = newLines(nil) // stdin is used up: nothing answers permission requests
	} else {
		in = newLines(stdin)
	}
	if !f.chat && !f.interactive && !f.list && strings.TrimSpace(prompt) == "" {
		fmt.Fprintln(stderr, "agentrun: the prompt is empty")
		return "", nil, 2
	}
	return prompt, in, 0
}

// open opens the backend, its CLI found as -cli says or where the
// project's scripts installed it, and returns it with the CLI's own name
// (see wireName), or an exit status.
func (f *flags) open(cfg agentcli.Config, logger *slog.Logger, stderr io.Writer) (agentcli.Backend, string, int) {
	name, err := agentcli.Resolve(f.backend)
	if err != nil {
		fmt.Fprintln(stderr, "agentrun:", err)
		return nil, "", 2
	}
	opts := &agentcli.Options{Path: f.cliPath, Logger: logger, Args: f.agentArgs}
	wire := wireName(name, f.cliPath)
	switch {
	case opts.Path == "":
		opts.Path = installedCLI(wire)
	case !strings.ContainsRune(opts.Path, filepath.Separator):
		if p := installedCLI(opts.Path); p != "" {
			opts.Path = p
		}
	}
	if name == acpagent.Name && opts.Path == "" {
		fmt.Fprintln(stderr, "agentrun: -backend acp runs the agent given by -cli, with the arguments of -arg (e.g. -cli qwen -arg=--acp)")
		return nil, "", 2
	}
	b, err := agentcli.Open(name, opts)
	if err != nil {
		fmt.Fprintln(stderr, "agentrun:", err)
		return nil, "", 2
	}
	return b, wire, 0
}

// request returns the run's request: the flags' settings over cfg's (the
// environment's), with the answers to permission requests and questions
// read from in, and the demo tool.
func (f *flags) request(cfg agentcli.Config, b agentcli.Backend, prompt string, in *lines, stderr io.Writer) *agentcli.Request {
	req := &agentcli.Request{
		Prompt:       prompt,
		SystemPrompt: f.system,
		SessionID:    f.session,
		Continue:     f.cont,
		ForkSession:  f.fork,
		NewSessionID: f.newID,
		Model:        f.model,
		Timeout:      f.timeout,
	}
	if f.permission != "" {
		req.Permission = agentcli.PermissionMode(f.permission)
	}
	cfg.Apply(req, b.Capabilities())
	if (req.Permission == agentcli.PermissionAsk || f.chat) && !f.interactive {
		// In -chat mode too: "/permission ask" may switch to it.
		req.OnPermission = askOn(in, stderr)
	}
	if f.toolDemo {
		req.Tools = append(req.Tools, currentTime())
	}
	if f.chat && b.Capabilities().Questions {
		req.OnQuestion = questionOn(in, stderr)
	}
	return req
}

// offlineModel points req's CLI (wire) at a local scripted model server
// in a private home, and returns what scripts the model's answer to a
// prompt and what removes the server and the home, or an exit status.
func (f *flags) offlineModel(req *agentcli.Request, wire string, stderr io.Writer) (func(string), func(), int) {
	srv := agentclitest.NewServer()
	script := func(p string) {
		if srv.Remaining() > 0 {
			return // an earlier turn ended before using its answer
		}
		if asksToRun(p) {
			srv.Push(agentclitest.Turn{Shell: "touch made-by-the-offline-model.txt"})
		}
		if f.toolDemo && strings.Contains(strings.ToLower(p), "time") {
			srv.Push(agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: agentclitest.HostToolName(wire, "current_time"),
				Args: map[string]any{"zone": "UTC"}}})
		}
		if f.chat && asksToAsk(p) {
			srv.Push(agentclitest.Turn{Tool: agentclitest.QuestionCall(wire, offlineQuestion)})
		}
		srv.Push(agentclitest.Turn{Text: f.reply})
	}
	for i := 0; f.interactive && i < 100; i++ {
		srv.Push(agentclitest.Turn{Text: f.reply}) // every message typed gets it
	}
	home, err := os.MkdirTemp("", "agentrun-offline-")
	if err != nil {
		srv.Close()
		fmt.Fprintln(stderr, "agentrun:", err)
		return nil, nil, 1
	}
	undo := func() {
		srv.Close()
		os.RemoveAll(home)
	}
	w, err := srv.Wire(wire, home)
	if err != nil {
		undo()
		fmt.Fprintln(stderr, "agentrun:", err)
		return nil, nil, 1
	}
	w.Apply(req)
	return script, undo, 0
}

// listSessions prints the sessions b's CLI keeps for the current
// directory, newest first: one line each (id, update time, title on one
// line), or with -json one JSON object each.
func listSessions(b agentcli.Backend, out output) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	list, err := agentcli.ListSessions(ctx, b, "")
	if err != nil {
		fmt.Fprintln(out.stderr, "agentrun:", err)
		return 1
	}
	for _, s := range list {
		if out.json {
			out.enc.Encode(s)
			continue
		}
		title := strings.Join(strings.Fields(s.Title), " ")
		if r := []rune(title); len(r) > 80 {
			title = string(r[:79]) + "…"
		}
		fmt.Fprintf(out.stdout, "%s\t%s\t%s\n", s.ID, s.Updated.Local().Format(time.DateTime), title)
	}
	return 0
}

// runInteractive hands the terminal (stdin, stdout and stderr, when they are
// files) to the CLI's interactive UI and returns its exit status, or 1 when
// it could not run.
func runInteractive(ctx context.Context, b agentcli.Backend, req *agentcli.Request, stdin io.Reader, stdout, stderr io.Writer) int {
	term := &agentcli.Terminal{}
	term.Stdin, _ = stdin.(*os.File)
	term.Stdout, _ = stdout.(*os.File)
	term.Stderr, _ = stderr.(*os.File)
	if term.Stdin == nil || term.Stdout == nil {
		fmt.Fprintln(stderr, "agentrun: -interactive needs stdin and stdout to be a terminal")
		return 1
	}
	code, err := agentcli.Interactive(ctx, b, req, term)
	if err != nil {
		fmt.Fprintln(stderr, "agentrun:", err)
		return 1
	}
	return code
}

// runReplay prints the events of a wire log as the run printed them.
func runReplay(backend, path string, out output) int {
	name, err := agentcli.Resolve(backend)
	if err != nil {
		fmt.Fprintln(out.stderr, "agentrun:", err)
		return 2
	}
	b, err := agentcli.Open(name, nil)
	if err != nil {
		fmt.Fprintln(out.stderr, "agentrun:", err)
		return 2
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(out.stderr, "agentrun:", err)
		return 1
	}
	defer f.Close()
	seq := agentcli.Replay(b, f)
	if !out.stream && !out.json {
		replayed := seq
		seq = func(yield func(agentcli.Event, error) bool) {
			for ev, err := range replayed {
				if err == nil && ev.Kind == agentcli.EventTextDelta && ev.Subagent == "" {
					fmt.Fprint(out.stdout, ev.Text)
				}
				if !yield(ev, err) {
					return
				}
			}
		}
	}
	// A live session's log (-chat) holds several turns, each ending with
	// its result or error: each is printed as its turn was.
	status := 0
	var turn []replayed
	flush := func() {
		if len(turn) > 0 && !out.turn(replayedSeq(turn)) {
			status = 1
		}
		turn = nil
	}
	for ev, err := range seq {
		turn = append(turn, replayed{ev, err})
		if err != nil || ev.Kind == agentcli.EventResult {
			flush()
		}
	}
	flush()
	return status
}

// replayed is one yield of a replay.
type replayed struct {
	ev  agentcli.Event
	err error
}

// replayedSeq yields its items again.
func replayedSeq(items []replayed) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		for _, it := range items {
			if !yield(it.ev, it.err) {
				return
			}
		}
	}
}

// output prints turns the way the flags say.
type output struct {
	stdout, stderr io.Writer
	enc            *json.Encoder
	json, stream   bool
}

// turn prints one run's or turn's events and reports whether it succeeded.
func (o output) turn(events iter.Seq2[agentcli.Event, error]) bool {
	var res *agentcli.Result
	for ev, err := range events {
		if err != nil {
			if !o.json && !o.stream {
				fmt.Fprintln(o.stdout)
			}
			fmt.Fprintln(o.stderr, "agentrun:", err)
			var re *agentcli.ResultError
			if o.json && errors.As(err, &re) && re.Result != nil {
				o.enc.Encode(re.Result)
			}
			return false
		}
		if o.stream {
			if err := o.enc.Encode(ev); err != nil {
				fmt.Fprintln(o.stderr, "agentrun:", err)
				return false
			}
		}
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
	}
	switch {
	case o.json:
		o.enc.Encode(res)
	case !o.stream:
		fmt.Fprintln(o.stdout)
	}
	return true
}

// chatLoop runs a live session: each stdin line is one turn. A failed turn
// is reported and the session goes on, unless the CLI died. It returns the
// exit status: 1 when any turn failed.
func chatLoop(ctx context.Context, b agentcli.Backend, req *agentcli.Request, in *lines, script func(string), out output, attach []agentcli.Attachment) int {
	s, err := agentcli.StartSession(ctx, b, req)
	if err != nil {
		fmt.Fprintln(out.stderr, "agentrun:", err)
		return 1
	}
	defer s.Close()
	status := 0
	for {
		p, ok := in.next(ctx)
		if !ok {
			return status
		}
		if strings.TrimSpace(p) == "" {
			continue
		}
		if ok, failed := chatCommand(ctx, s, p, out.stderr); ok {
			if failed {
				status = 1
			}
			continue
		}
		script(p)
		turn := &agentcli.Turn{Prompt: p, Attachments: attach}
		attach = nil // the first turn's
		if !out.turn(agentcli.StreamTurn(ctx, s, turn)) {
			status = 1
			if s.Err() != nil || ctx.Err() != nil {
				return 1
			}
		}
	}
}

// lines hands out stdin lines: prompts in -chat mode, and answers to
// permission requests (which come while a turn runs, never while the next
// prompt is read). One goroutine reads stdin ahead.
type lines struct {
	ch <-chan string // closed at the end of input
}

// newLines starts reading r; a nil r gives no lines.
func newLines(r io.Reader) *lines {
	ch := make(chan string, 16)
	if r == nil {
		close(ch)
		return &lines{ch: ch}
	}
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return &lines{ch: ch}
}

// next returns the next line, or false at the end of input or of ctx.
func (l *lines) next(ctx context.Context) (string, bool) {
	select {
	case s, ok := <-l.ch:
		return s, ok
	case <-ctx.Done():
		return "", false
	}
}

// askOn returns a permission callback that asks on w and reads the answer
// from in: y allows once, a allows always, anything else refuses. With no
// answer (end of input, or the request's deadline) the call is refused.
func askOn(in *lines, w io.Writer) agentcli.PermissionFunc {
	return func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		what := r.Title
		if what == "" {
			what = string(r.Tool.Input)
		}
		fmt.Fprintf(w, "agentrun: allow %s (%s)? [y]es, [a]lways, [n]o: ", r.Tool.Name, what)
		a, ok := in.next(ctx)
		if !ok {
			fmt.Fprintln(w)
		}
		switch strings.ToLower(strings.TrimSpace(a)) {
		case "y", "yes":
			return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
		case "a", "always":
			return agentcli.PermissionDecision{Kind: agentcli.AllowAlways}
		}
		return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "The user said no."}
	}
}

// currentTime is -tool-demo's host tool.
func currentTime() agentcli.Tool {
	type input struct {
		Zone string `json:"zone" jsonschema:"an IANA time zone such as Europe/Paris, or UTC"`
	}
	t := agentcli.NewTool("current_time", "Returns the current date and time in a time zone.",
		func(ctx context.Context, in input) (string, error) {
			loc, err := time.LoadLocation(in.Zone)
			if err != nil {
				return "", fmt.Errorf("unknown time zone %q", in.Zone)
			}
			return time.Now().In(loc).Format("Monday 2 January 2006, 15:04:05 MST"), nil
		})
	t.Approved = true // it reads the clock: nothing to approve
	return t
}

// offlineQuestion is what the offline model asks in -chat mode.
var offlineQuestion = agentcli.Question{Items: []agentcli.QuestionItem{{Header: "Color", Text: "Which color do you prefer?",
	Options: []agentcli.QuestionOption{{Label: "Red", Description: "warm"}, {Label: "Blue", Description: "cool"}}}}}

// asksToAsk reports whether a prompt asks to be asked something, which
// the offline model answers with a question.
func asksToAsk(p string) bool {
	p = strings.ToLower(p)
	return strings.Contains(p, "ask me")
}

// questionOn returns a question callback that puts each question on w and
// reads its answer from in: option numbers (comma-separated) or words of
// the user's own; an empty line, the end of input or the deadline leave
// the question unanswered.
func questionOn(in *lines, w io.Writer) agentcli.QuestionFunc {
	return func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
		a := &agentcli.Answer{}
		for _, it := range q.Items {
			if it.Header != "" {
				fmt.Fprintf(w, "agentrun: [%s] ", it.Header)
			} else {
				fmt.Fprint(w, "agentrun: ")
			}
			fmt.Fprintln(w, it.Text)
			for i, o := range it.Options {
				fmt.Fprintf(w, "  %d. %s", i+1, o.Label)
				if o.Description != "" {
					fmt.Fprintf(w, " (%s)", o.Description)
				}
				fmt.Fprintln(w)
			}
			hint := "a number"
			if it.MultiSelect {
				hint = "numbers, comma-separated"
			}
			if len(it.Options) == 0 {
				hint = "your answer"
			} else {
				hint += ", or your own words"
			}
			fmt.Fprintf(w, "agentrun: answer (%s): ", hint)
			line, ok := in.next(ctx)
			if !ok {
				fmt.Fprintln(w)
				return nil, ctx.Err()
			}
			a.Answers = append(a.Answers, pick(it, line))
		}
		return a, nil
	}
}

// pick turns an answer line into the answer to item it: the labels of the
// option numbers it lists, or the line itself.
func pick(it agentcli.QuestionItem, line string) []string {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	var labels []string
	for _, f := range strings.Split(line, ",") {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(f), "%d", &n); err != nil || n < 1 || n > len(it.Options) ||
			fmt.Sprint(n) != strings.TrimSpace(f) {
			return []string{line}
		}
		labels = append(labels, it.Options[n-1].Label)
	}
	if !it.MultiSelect && len(labels) > 1 {
		return []string{line}
	}
	return labels
}

// asksToRun reports whether a prompt asks to run something, which the
// offline model answers with a shell tool call.
func asksToRun(p string) bool {
	p = strings.ToLower(p)
	return strings.Contains(p, "run") || strings.Contains(p, "execute")
}

// runDoctor prints agentcli.Doctor's report as a table, or as JSON. Each
// backend runs the CLI on PATH, else the pinned one, unless -cli is given.
// The exit status is 1 when a backend fails.
func runDoctor(cli string, asJSON bool, stdout io.Writer) int {
	var ds []agentcli.Diagnosis
	for _, d := range agentcli.Doctor(context.Background(), &agentcli.Options{Path: cli}) {
		if cli == "" && d.Status == agentcli.DiagnosisFailure && d.Backend != acpagent.Name {
			if p := installedCLI(wireName(d.Backend, "")); p != "" {
				if b, err := agentcli.Open(d.Backend, &agentcli.Options{Path: p}); err == nil {
					if dg, ok := b.(driver.Diagnoser); ok {
						d = dg.Diagnose(context.Background())
					}
				}
			}
		}
		ds = append(ds, d)
	}
	code := 0
	for _, d := range ds {
		if d.Status == agentcli.DiagnosisFailure {
			code = 1
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(ds)
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tSTATUS\tVERSION\tTESTED\tCREDENTIALS\tPATH\tHINT")
	for _, d := range ds {
		creds := strings.Join(d.Credentials, ",")
		if creds == "" {
			creds = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Backend, d.Status, d.Version, d.Tested, creds, d.Path, d.Hint)
	}
	tw.Flush()
	return code
}

// wireName is the CLI that backend name runs, for its installed copy and
// agentclitest's wiring: the backend's own name, a known ACP agent's
// binary, or, for the generic ACP backend, the base name of cli.
func wireName(name, cli string) string {
	if name == acpagent.Name {
		return strings.TrimSuffix(filepath.Base(cli), ".exe")
	}
	if a, ok := acpagent.Lookup(name); ok {
		return a.Binary
	}
	return name
}

// installedCLI returns the CLI that scripts/install-clis.sh installed, when
// the backend's binary is not on PATH; otherwise "" (the backend default).
func installedCLI(name string) string {
	if _, err := exec.LookPath(name); err == nil {
		return ""
	}
	_, file, _, ok := runtime.Caller(0)
	candidates := []string{filepath.Join("tools", "clis", "node_modules", ".bin", name)}
	if ok {
		candidates = append(candidates, filepath.Join(filepath.Dir(file), "..", "..", "..", "tools", "clis", "node_modules", ".bin", name))
	}
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
			abs, _ := filepath.Abs(c)
			return abs
		}
	}
	return ""
}
