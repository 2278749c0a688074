//go:build linux

package conformance

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/internal/mcptest"
	"github.com/agentcli/agentcli/internal/ptytest"
	"golang.org/x/sys/unix"
)

// interactiveCase is what the interactive scenarios know about one CLI's
// UI.
type interactiveCase struct {
	name string
	// ready appears on the screen once the UI takes input.
	ready string
	// quit is the UI's own command to exit (typed, then Enter).
	quit string
	// system: Request.SystemPrompt reaches the model in the system
	// prompt (rather than prepended to the first message, gemini).
	system bool
	// resumePrompt: the UI takes a first message when it resumes a
	// session (opencode's ignores it: the backend refuses the request).
	resumePrompt bool
}

var interactiveCLIs = []interactiveCase{
	{name: "qwen", ready: "Type your message", quit: "/quit", system: true, resumePrompt: true},
	{name: "opencode", ready: "ctrl+p commands", quit: "/exit", system: true},
	{name: "gemini", ready: "Type your message", quit: "/quit", resumePrompt: true},
	{name: "claude", ready: "bypass permissions on", quit: "/exit", system: true, resumePrompt: true},
	{name: "codex", ready: "Ask Codex to do anything", quit: "/quit", system: true, resumePrompt: true},
	{name: "copilot", ready: "? help", quit: "/exit", system: true, resumePrompt: true},
}

// interactiveAnswer is the scripted answer: one word, so that it stays on
// one line of the screen.
const interactiveAnswer = "INTERACTIVE-ANSWER-5e1f"

// interactiveSystem marks the system prompt.
const interactiveSystem = "SYSTEM-MARKER-interactive-3b9a"

// TestInteractive drives each CLI's own interactive UI on a
// pseudo-terminal through agentcli.Interactive, against the scripted
// model server:
//
//   - typed: the UI starts with an MCP server (Request.MCPServers), takes a
//     prompt typed at the terminal (the model is offered the server's
//     tool), shows the scripted answer and exits 0 on its own quit command;
//   - initial: the same with Request.Prompt as the first message, the
//     model, the system prompt and PermissionAsk passed as for a run;
//   - resume: the UI resumes the session of a run (Request.SessionID) and
//     the model sees its history; the first message is a single word that
//     names one of the CLI's subcommands ("doctor"), which must reach the
//     model rather than run the subcommand;
//   - cancel: cancelling the context while the UI runs returns within
//     KillGrace plus a few seconds, with ErrCanceled, no process of the
//     run left and the terminal's mode restored.
func TestInteractive(t *testing.T) {
	for _, c := range interactiveCLIs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := openBackend(t, c.name, nil)
			t.Run("typed", func(t *testing.T) { testInteractiveTyped(t, c, b) })
			t.Run("initial", func(t *testing.T) { testInteractiveInitial(t, c, b) })
			t.Run("resume", func(t *testing.T) { testInteractiveResume(t, c, b) })
			t.Run("cancel", func(t *testing.T) { testInteractiveCancel(t, c, b) })
		})
	}
}

// session is one interactive run on a pseudo-terminal.
type session struct {
	t      *testing.T
	pty    *ptytest.PTY
	cancel context.CancelFunc
	done   chan struct{}
	code   int
	err    error
	tag    string
}

// startInteractive runs agentcli.Interactive on a fresh pseudo-terminal in
// the background. The scripted server answers with interactiveAnswer
// (three times: codex and gemini make an extra call, a title or a summary,
// that the server cannot tell from a main one and that may come first).
// Turns in first come before those.
func startInteractive(t *testing.T, c interactiveCase, b agentcli.Backend, edit func(*env, *agentcli.Request), first ...agentclitest.Turn) (*session, *env) {
	t.Helper()
	a := agentclitest.Turn{Text: interactiveAnswer}
	e := newEnv(t, c.name, append(first, a, a, a)...)
	req, tag := e.request("")
	req.ReplaceEnv = true
	req.Env = append(req.Env, "TERM=xterm-256color")
	// The UIs' skip-permissions modes, whose screens c.ready knows (the
	// zero value is the UI's asking mode).
	req.Permission = agentcli.PermissionBypass
	// The session's own bound, as the context's below: a UI on a busy
	// machine may take a minute to be ready, and the steps after that wait
	// up to three (runTimeout, meant for one run, is too short for this).
	req.Timeout = 4 * time.Minute
	if edit != nil {
		edit(e, req)
	}
	s := &session{t: t, pty: ptytest.New(t, 40, 120), done: make(chan struct{}), tag: tag}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	s.cancel = cancel
	go func() {
		defer close(s.done)
		s.code, s.err = agentcli.Interactive(ctx, b, req, &agentcli.Terminal{Stdin: s.pty.Slave, Stdout: s.pty.Slave, Stderr: s.pty.Slave})
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
		assertNoProcs(t, tag)
	})
	return s, e
}

// waitFor waits up to d for text to be on the screen; on failure the test
// ends, showing the screen.
func (s *session) waitFor(text string, d time.Duration) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	select {
	case <-s.done:
		// The UI is gone; what it drew is all there is.
		ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel2()
		ctx = ctx2
	default:
	}
	if err := s.pty.WaitScreen(ctx, text); err != nil {
		select {
		case <-s.done:
			s.t.Fatalf("%v\n(Interactive returned %d, %v)", err, s.code, s.err)
		default:
		}
		s.t.Fatal(err)
	}
}

// enter types text, then Enter once the UI has drawn it (see
// ptytest.PTY.Submit; up to 30 s, then Enter anyway, and what the test
// waits for next shows the screen).
func (s *session) enter(text string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.pty.Submit(ctx, text); err != nil {
		s.t.Fatal(err)
	}
}

// settle waits (up to 30 s) until the UI has stopped drawing for a
// moment, so that what is typed next reaches an idle UI.
func (s *session) settle() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.pty.WaitQuiet(ctx, 1500*time.Millisecond)
}

// wait waits for Interactive to return.
func (s *session) wait(d time.Duration) (int, error) {
	s.t.Helper()
	select {
	case <-s.done:
		return s.code, s.err
	case <-time.After(d):
		s.t.Fatalf("Interactive did not return within %v; the screen shows:\n%s", d, s.pty.Screen())
		return 0, nil
	}
}

// quit makes the UI exit with its quit command and checks that it exited
// 0 and left nothing behind.
func (s *session) quit(c interactiveCase) {
	s.t.Helper()
	// Typed while the UI is still busy with the answer, the command would
	// be queued as the next message: wait until it has stopped drawing.
	s.settle()
	s.enter(c.quit)
	// A UI on a busy machine may take the Enter before it has drawn the
	// command's menu (opencode), and drop it: press Enter again while it
	// has not exited, for up to a minute in all.
	for range 3 {
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			if err := s.pty.Type("\r"); err != nil {
				s.t.Fatal(err)
			}
			continue
		}
		break
	}
	code, err := s.wait(15 * time.Second)
	if err != nil || code != 0 {
		s.t.Errorf("Interactive = %d, %v; want 0, nil (after %s)", code, err, c.quit)
	}
	assertNoProcs(s.t, s.tag)
}

func testInteractiveTyped(t *testing.T, c interactiveCase, b agentcli.Backend) {
	const server = "probe-srv"
	tool := mcpToolName(c.name, server, mcptest.ToolProbe)
	s, e := startInteractive(t, c, b, func(e *env, req *agentcli.Request) {
		cmd, env, err := mcptest.StdioCommand(filepath.Join(t.TempDir(), "mcp.log"))
		if err != nil {
			t.Fatal(err)
		}
		req.MCPServers = []agentcli.MCPServer{{Name: server, Command: cmd, Env: env}}
	})
	s.waitFor(c.ready, 2*time.Minute)
	s.settle()
	const prompt = "say the interactive answer"
	s.enter(prompt)
	s.waitFor(interactiveAnswer, 2*time.Minute)
	s.quit(c)
	typed := userRequest(e.main(), prompt)
	switch {
	case typed.Path == "":
		t.Errorf("no model request carried the typed prompt %q; requests: %s", prompt, describe(e.srv.Requests()))
	case !offered(typed, tool):
		t.Errorf("the MCP server's tool %s was not offered to the model; tools %v", tool, typed.Tools)
	}
}

func testInteractiveInitial(t *testing.T, c interactiveCase, b agentcli.Backend) {
	var cc cliCase
	for _, x := range clis {
		if x.name == c.name {
			cc = x
		}
	}
	const prompt = "--version: answer, do not parse me"
	s, e := startInteractive(t, c, b, func(e *env, req *agentcli.Request) {
		req.Prompt = prompt
		req.SystemPrompt = interactiveSystem
		req.Model = cc.model
		if cc.modelEnv != nil {
			req.Env = append(req.Env, cc.modelEnv(t, e.w)...)
		}
		req.Permission = agentcli.PermissionAsk
	})
	s.waitFor(interactiveAnswer, 3*time.Minute)
	first := userRequest(e.main(), prompt)
	switch {
	case first.Path == "":
		t.Errorf("no model request carried the first message %q; requests: %s", prompt, describe(e.srv.Requests()))
	case c.system && !strings.Contains(first.System, interactiveSystem) && !hasText(first.Messages, "developer", interactiveSystem):
		t.Errorf("the system prompt did not reach the model's system prompt; system: %s", shorten(first.System))
	case !c.system && first.LastUserText() != interactiveSystem+"\n\n"+prompt:
		t.Errorf("first message = %q; want the system prompt prepended", first.LastUserText())
	case first.Model != cc.atServer:
		t.Errorf("model at the server = %q, want %q", first.Model, cc.atServer)
	}
	s.quit(c)
}

func testInteractiveResume(t *testing.T, c interactiveCase, b agentcli.Backend) {
	const (
		prompt1 = "Remember the word apple."
		answer1 = "I will remember apple."
		prompt2 = "doctor"
	)
	s, e := startInteractive(t, c, b, func(e *env, req *agentcli.Request) {
		r1, tag := e.request(prompt1)
		res, _, err := run(t, b, r1, tag)
		if err != nil {
			t.Fatalf("first Run: %s", errSummary(err))
		}
		req.SessionID = res.SessionID
		req.Prompt = prompt2
		if !c.resumePrompt {
			// Refused before anything starts; then typed.
			pty := ptytest.New(t, 40, 120)
			code, err := agentcli.Interactive(context.Background(), b, req, &agentcli.Terminal{Stdin: pty.Slave, Stdout: pty.Slave})
			if code != -1 || !errors.Is(err, agentcli.ErrUnsupported) {
				t.Errorf("Interactive with SessionID and Prompt = %d, %v; want -1 and ErrUnsupported", code, err)
			}
			req.Prompt = ""
		}
	}, agentclitest.Turn{Text: answer1})
	if !c.resumePrompt {
		s.waitFor(c.ready, 2*time.Minute)
		s.settle()
		s.enter(prompt2)
	}
	s.waitFor(interactiveAnswer, 3*time.Minute)
	var resumed agentclitest.ModelRequest
	for _, r := range e.main() {
		if strings.TrimSpace(r.LastUserText()) == prompt2 {
			resumed = r
		}
	}
	switch {
	case resumed.Path == "":
		t.Errorf("no model request carried the first message %q; requests: %s", prompt2, describe(e.srv.Requests()))
	case !hasText(resumed.Messages, "user", prompt1) || !hasText(resumed.Messages, "assistant", answer1):
		t.Errorf("the resumed session's request lacks the run's history: %+v", resumed.Messages)
	}
	s.quit(c)
}

func testInteractiveCancel(t *testing.T, c interactiveCase, b agentcli.Backend) {
	s, _ := startInteractive(t, c, b, nil)
	var before unix.Termios
	if tio, err := unix.IoctlGetTermios(int(s.pty.Slave.Fd()), unix.TCGETS); err == nil {
		before = *tio
	}
	s.waitFor(c.ready, 2*time.Minute)
	if tio, err := unix.IoctlGetTermios(int(s.pty.Slave.Fd()), unix.TCGETS); err != nil || *tio == before {
		t.Errorf("the UI did not change the terminal's mode (%v): nothing to restore", err)
	}
	start := time.Now()
	s.cancel()
	code, err := s.wait(killGrace + 30*time.Second)
	if d := time.Since(start); d > killGrace+5*time.Second {
		t.Errorf("Interactive returned %v after the cancel; want within KillGrace (%v) + a few seconds", d, killGrace)
	}
	if code != -1 || !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Errorf("Interactive = %d, %v (%s); want -1 and ErrCanceled", code, err, errSummary(err))
	}
	assertNoProcs(t, s.tag)
	if tio, err := unix.IoctlGetTermios(int(s.pty.Slave.Fd()), unix.TCGETS); err != nil || *tio != before {
		t.Errorf("terminal mode not restored after the cancel (%v)", err)
	}
}

// userRequest returns the model request whose last user message is text
// (or ends with a blank line and text: a system prompt prepended), not a
// title or summary request that quotes it; the zero value if none is.
func userRequest(reqs []agentclitest.ModelRequest, text string) agentclitest.ModelRequest {
	for _, r := range reqs {
		if u := strings.TrimSpace(r.LastUserText()); u == text || strings.HasSuffix(u, "\n\n"+text) {
			return r
		}
	}
	return agentclitest.ModelRequest{}
}
