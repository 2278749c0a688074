// Package toyagent is toyagent, a coding-agent CLI small enough to read in
// one sitting, for the example backend of package toy: a scripted model
// (no network) behind the command line and output of a real agent CLI. Its
// command is cmd/toyagent.
//
//	toyagent [-json] [-model=NAME] [-resume=ID] [-system-file=PATH] [-max-turns=N] [-yolo] [--]
//	toyagent -version
//
// It reads the prompt on stdin, to its end. Options are parsed by Go's
// flag package (Flags): a value option takes the next argument whatever
// it is, so callers glue values (-model=NAME); the first argument that is
// not an option, or "--", ends the options, and toyagent takes no
// positional argument.
//
// It needs a credential: TOYAGENT_API_KEY, or a file "credentials" in its
// home directory ($TOYAGENT_HOME, else ~/.toyagent), which is also where it
// keeps its sessions (sessions/ID.json, the prompts so far).
//
// With -json it prints one JSON object a line:
//
//	{"type":"session","id":ID,"model":MODEL}     first
//	{"type":"thinking","text":T}                 for a prompt with "think"
//	{"type":"tool_call","id":C,"name":"shell","input":{"command":CMD}}
//	{"type":"tool_result","id":C,"output":OUT,"exit_code":N,"denied":B}
//	{"type":"message","text":T}
//	{"type":"usage","input_tokens":N,"output_tokens":N}
//	{"type":"done","session":ID,"text":T,"turns":N}                  last, on success
//	{"type":"failed","session":ID,"error":{"kind":K,"status":S,"message":M}}  last, on failure
//
// and exits 0 after "done", 1 after "failed", 2 for a command line it
// refuses. Without -json it prints only the answer's text.
//
// The scripted model answers "You said: PROMPT", with "(turn N)" in a
// resumed session, prefixed with "Arr! " when the system prompt mentions
// pirates. A prompt "run: CMD" calls the shell tool with CMD, which runs
// (sh -c, in the working directory) only under -yolo and is refused
// otherwise; it takes two turns, so -max-turns=1 fails it. A prompt
// containing "overloaded" fails with a rate limit (status 429), and
// -model names one of toy-1 (the default) and toy-2.
package toyagent

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Config is a toyagent command line.
type Config struct {
	JSON       bool
	Model      string
	Resume     string
	SystemFile string
	MaxTurns   int
	Yolo       bool
	Version    bool
}

// Version is toyagent's version, which -version prints.
const Version = "0.3.0"

// Flags defines toyagent's options on fs and returns where they land.
func Flags(fs *flag.FlagSet) *Config {
	c := &Config{}
	fs.BoolVar(&c.JSON, "json", false, "print JSON lines")
	fs.StringVar(&c.Model, "model", "toy-1", "model: toy-1 or toy-2")
	fs.StringVar(&c.Resume, "resume", "", "resume the session with this id")
	fs.StringVar(&c.SystemFile, "system-file", "", "file holding a system prompt")
	fs.IntVar(&c.MaxTurns, "max-turns", 0, "maximum model turns (0: no limit)")
	fs.BoolVar(&c.Yolo, "yolo", false, "run tools without asking")
	fs.BoolVar(&c.Version, "version", false, "print the version and exit")
	return c
}

// sessionID is what a session id looks like.
var sessionID = regexp.MustCompile(`^toy-[0-9a-f]{12}$`)

// Main runs toyagent with args (without the program name) and returns its
// exit status.
func Main(args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("toyagent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := Flags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.Version {
		fmt.Fprintln(stdout, "toyagent", Version)
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "toyagent: unexpected argument %q (the prompt is read from stdin)\n", fs.Arg(0))
		return 2
	}
	home := env("TOYAGENT_HOME")
	if home == "" {
		home = filepath.Join(env("HOME"), ".toyagent")
	}
	if env("TOYAGENT_API_KEY") == "" {
		if _, err := os.Stat(filepath.Join(home, "credentials")); err != nil {
			fmt.Fprintln(stderr, "toyagent: not logged in: set TOYAGENT_API_KEY or write ~/.toyagent/credentials")
			return 1
		}
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "toyagent:", err)
		return 1
	}
	r := &run{cfg: c, home: home, out: stdout}
	return r.turn(strings.TrimSpace(string(in)))
}

// run is one toyagent run.
type run struct {
	cfg     *Config
	home    string
	out     io.Writer
	session string
}

// emit prints one event (with -json).
func (r *run) emit(v map[string]any) {
	if r.cfg.JSON {
		b, _ := json.Marshal(v)
		r.out.Write(append(b, '\n'))
	}
}

// fail ends the run with an error.
func (r *run) fail(kind string, status int, msg string) int {
	if !r.cfg.JSON {
		fmt.Fprintln(r.out, "error:", msg)
	}
	r.emit(map[string]any{"type": "failed", "session": r.session,
		"error": map[string]any{"kind": kind, "status": status, "message": msg}})
	return 1
}

// turn answers prompt and returns the exit status.
func (r *run) turn(prompt string) int {
	if prompt == "" {
		r.emit(map[string]any{"type": "failed", "error": map[string]any{"kind": "bad_request", "message": "empty prompt"}})
		return 1
	}
	if r.cfg.Model != "toy-1" && r.cfg.Model != "toy-2" {
		return r.fail("bad_request", 400, fmt.Sprintf("unknown model %q (toy-1 or toy-2)", r.cfg.Model))
	}
	var history []string
	if id := r.cfg.Resume; id != "" {
		b, err := os.ReadFile(filepath.Join(r.home, "sessions", id+".json"))
		if !sessionID.MatchString(id) || err != nil {
			return r.fail("session_not_found", 404, "no session "+id)
		}
		if err := json.Unmarshal(b, &history); err != nil {
			return r.fail("internal", 500, "session "+id+" is damaged")
		}
		r.session = id
	} else {
		var b [6]byte
		rand.Read(b[:])
		r.session = "toy-" + hex.EncodeToString(b[:])
	}
	r.emit(map[string]any{"type": "session", "id": r.session, "model": r.cfg.Model})
	system := ""
	if r.cfg.SystemFile != "" {
		b, err := os.ReadFile(r.cfg.SystemFile)
		if err != nil {
			return r.fail("bad_request", 400, "cannot read the system prompt file")
		}
		system = string(b)
	}
	if strings.Contains(prompt, "overloaded") {
		return r.fail("rate_limit", 429, "the toy model is overloaded, try again later")
	}
	if strings.Contains(prompt, "think") {
		r.emit(map[string]any{"type": "thinking", "text": "Let me think about " + prompt})
	}
	turns := 1
	answer := "You said: " + prompt
	if cmd, ok := strings.CutPrefix(prompt, "run: "); ok {
		if r.cfg.MaxTurns == 1 {
			return r.fail("max_turns", 0, "max turns (1) reached")
		}
		turns = 2
		answer = r.shell(cmd)
	}
	if len(history) > 0 {
		answer += fmt.Sprintf(" (turn %d)", len(history)+1)
	}
	if strings.Contains(strings.ToLower(system), "pirate") {
		answer = "Arr! " + answer
	}
	history = append(history, prompt)
	if err := r.save(history); err != nil {
		return r.fail("internal", 500, "saving the session: "+err.Error())
	}
	r.emit(map[string]any{"type": "message", "text": answer})
	r.emit(map[string]any{"type": "usage", "input_tokens": len(prompt) + len(system), "output_tokens": len(answer)})
	r.emit(map[string]any{"type": "done", "session": r.session, "text": answer, "turns": turns})
	if !r.cfg.JSON {
		fmt.Fprintln(r.out, answer)
	}
	return 0
}

// shell calls the shell tool with cmd and returns the answer about it.
func (r *run) shell(cmd string) string {
	r.emit(map[string]any{"type": "tool_call", "id": "call-1", "name": "shell", "input": map[string]any{"command": cmd}})
	if !r.cfg.Yolo {
		r.emit(map[string]any{"type": "tool_result", "id": "call-1", "denied": true, "output": "permission denied: run with -yolo"})
		return "I was not allowed to run " + cmd
	}
	var out bytes.Buffer
	c := exec.Command("sh", "-c", cmd)
	c.Stdout, c.Stderr = &out, &out
	code := 0
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			code = -1
			out.WriteString(err.Error())
		} else {
			code = ee.ExitCode()
		}
	}
	r.emit(map[string]any{"type": "tool_result", "id": "call-1", "output": out.String(), "exit_code": code})
	return fmt.Sprintf("I ran %s: %s", cmd, strings.TrimSpace(out.String()))
}

// save writes the session's prompts.
func (r *run) save(history []string) error {
	dir := filepath.Join(r.home, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(history)
	return os.WriteFile(filepath.Join(dir, r.session+".json"), b, 0o600)
}
