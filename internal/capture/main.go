//go:build linux

// Command capture runs the real, pinned coding-agent CLIs against an
// agentclitest.Server and records what they print, as golden transcripts for
// the parsers: <out>/<cli>/testdata/real/<scenario>.{stdout,stderr,exit}, plus
// a README.md per CLI describing the exact command lines and what reached the
// server.
//
// Nothing may leave loopback, so run it inside a private network namespace
// (as root):
//
//	go build -o /tmp/capture ./internal/capture
//	unshare -n sh -c 'ip link set lo up; /tmp/capture -out .'
//
// or, equivalently, `unshare -n sh -c 'ip link set lo up; go run
// ./internal/capture -out .'` (the build needs no network). The command
// refuses to run when a non-loopback interface is up unless -allow-network is
// given.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentcli/agentcli/agentclitest"
)

var (
	outDir   = flag.String("out", ".", "repository root; transcripts go to <out>/<cli>/testdata/real")
	binDir   = flag.String("bin", "", "directory holding the CLI binaries (default <out>/tools/clis/node_modules/.bin)")
	clis     = flag.String("clis", "claude,codex,gemini,opencode", "comma-separated CLIs to capture")
	only     = flag.String("only", "", "capture only scenarios whose name starts with this prefix")
	timeout  = flag.Duration("timeout", 3*time.Minute, "wall-clock limit per CLI run")
	scratch  = flag.String("scratch", "", "parent directory for throwaway homes (default: a new dir under /var/tmp, else the OS temp dir)")
	reqLog   = flag.String("reqlog", "", "if set, write every recorded model request (JSON) of each run into this directory")
	allowNet = flag.Bool("allow-network", false, "run even though a non-loopback network interface is up")
	keep     = flag.Bool("keep", false, "keep the throwaway homes")
)

// run is one CLI invocation of a scenario.
type run struct {
	name  string   // scenario file name, e.g. "text-stream"
	args  []string // CLI arguments (before the wiring's extra args are inserted)
	stdin string
	turns []agentclitest.Turn
}

// scenario is one or more runs sharing a server and a home (resume).
type scenario struct {
	name string
	runs []run
	// resume, if set, builds the second run's args from the first run's
	// session id.
	resume func(id string) []string
}

const (
	prompt       = "Say hello."
	toolPrompt   = "Run the conformance command."
	shellCommand = "echo conformance"
	helloText    = "Hello from agentclitest."
	thinkingText = "The user wants a greeting; keep it short."
	dashPrompt   = "--help"
	errorMessage = "agentclitest says no"
)

// cliSpec says how to run one CLI headless.
type cliSpec struct {
	name string
	// variants: output-format flag sets, with a file-name suffix.
	variants []variant
	// base returns the argv (without program) for a fresh run.
	base func(v variant) []string
	// resume returns the argv for resuming session id.
	resume func(v variant, id string) []string
	// thinking adds flags for the thinking scenario.
	thinkingArgs []string
	// resumeNote documents how the session id was passed.
	resumeNote string
	// notes are observations made with the pinned version when these
	// transcripts were first captured; re-check them after an upgrade.
	notes []string
}

type variant struct {
	suffix string
	flags  []string
}

func specs() []cliSpec {
	return []cliSpec{
		{
			name: "claude",
			notes: []string{
				"Only `POST /v1/messages?beta=true` (streaming) reached the server: no `HEAD /`, no count_tokens, nothing else.",
				"The prompt arrives as its own text block after a `<system-reminder>` text block; the environment block is a `role:\"system\"` element at the end of `messages[]`. Default model `claude-opus-5-5`.",
				"A 400 is retried 5 times (6 requests) with fewer beta features or parameters each time (first the `thinking-token-count-2026-05-13` beta, then `thinking.display`, then `advanced-tool-use-2025-11-20`, ...). A single scripted 400 is therefore invisible; the error400 scenario repeats it (`Repeat: -1`). Exit 1, empty stderr, `result` with `is_error:true`, `subtype:\"success\"`, `api_error_status:400`, `terminal_reason:\"api_error\"`.",
				"`--output-format json --verbose` prints one line holding a JSON array of every message (system/init, ..., assistant, result), not a single result object.",
				"With `--include-partial-messages`, thinking deltas are interleaved with `system/thinking_tokens` lines (`estimated_tokens`, `estimated_tokens_delta`); stream_event lines may carry `thinking_display`.",
				"With `CLAUDE_CODE_MAX_RETRIES=0` a 500 fails after one request (~0.7 s), exit 1.",
			},
			variants: []variant{
				{"-stream", []string{"--output-format", "stream-json", "--verbose", "--include-partial-messages"}},
				{"-json", []string{"--output-format", "json"}},
				{"-jsonverbose", []string{"--output-format", "json", "--verbose"}},
			},
			base: func(v variant) []string {
				return append([]string{"-p", "--dangerously-skip-permissions"}, v.flags...)
			},
			resume: func(v variant, id string) []string {
				return append(append([]string{"-p", "--dangerously-skip-permissions"}, v.flags...), "--resume", id)
			},
			resumeNote: "`claude -p ... --resume <session_id>`, run from the same working directory; " +
				"session_id taken from the first run's output (`session_id` field).",
		},
		{
			name: "codex",
			notes: []string{
				"Only `POST /v1/responses` reached the server. The request has no `instructions`: the base prompt, skills and permissions text are `developer` input messages, then an `<environment_context>` user message, then the prompt.",
				"stderr stayed empty in every scenario (no `Reading prompt from stdin...`; no helper-alias warning, since TMPDIR is not an ancestor of CODEX_HOME).",
				"Every run starts with a non-fatal `item.completed` of type `error` (`Model metadata for agentclitest-model not found...`).",
				"Shell tool `exec_command` `{cmd}`; the item shows `/bin/bash -lc 'echo conformance'`; the function_call_output sent back is `Chunk ID: ...\\nWall time: ...\\nProcess exited with code 0\\nOriginal token count: 3\\nOutput:\\nconformance\\n`.",
				"400: one request, exit 1, `error` then `turn.failed`, both carrying the raw response body. A 500 (retries 0) fails after one request, but the message is replaced by `We're currently experiencing high demand, which may cause temporary errors.`",
				"Resume prints `thread.started` again with the same thread_id; `turn.completed.usage` is cumulative over the thread.",
			},
			variants: []variant{{"", nil}},
			base: func(variant) []string {
				return []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-"}
			},
			resume: func(_ variant, id string) []string {
				return []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "resume", id, "-"}
			},
			resumeNote: "`codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox resume <thread_id> -` " +
				"(prompt on stdin); thread_id taken from the first run's `thread.started` event.",
		},
		{
			name: "gemini",
			notes: []string{
				"Without `-m`: first a router `:generateContent` to `gemini-3.5-flash-lite` (`responseMimeType: application/json`, `responseJsonSchema` OBJECT{complexity_reasoning STRING, complexity_score INTEGER}), then `:streamGenerateContent?alt=sse` to `gemini-3.8-flash`. One router call per run, not per tool step. `init.model` is `auto`; stats list the router model too (json: role `utility_router`).",
				"Shell tool `run_shell_command` `{command, description}`. The functionResponse output is wrapped: `<untrusted_context>\\nOutput: conformance\\nProcess Group PGID: N\\n</untrusted_context>`. The CLI adds a `thoughtSignature` to the functionCall part it sends back.",
				"Thought parts (`thought:true`) are not shown in either output format.",
				"`--skip-trust` is not needed with Wire's settings (folderTrust disabled, GEMINI_CLI_TRUST_WORKSPACE=true): yolo was honoured without it.",
				"400: one main request, exit 144. stream-json: final `result` with `status:\"error\"` on stdout. json: stdout empty; stderr has a stack trace followed by pretty-printed `{session_id, error{type:\"Error\", message, code:400}}`. A 500 exits 244 after one request (~1.5 s).",
				"stderr always carries the 256-color warning, `YOLO mode is enabled...` (twice) and `Ripgrep is not available...`.",
			},
			variants: []variant{
				{"-stream", []string{"-o", "stream-json"}},
				{"-json", []string{"-o", "json"}},
			},
			base: func(v variant) []string {
				return append(append([]string{}, v.flags...), "--approval-mode", "yolo", "--skip-trust")
			},
			resume: func(v variant, id string) []string {
				return append(append([]string{}, v.flags...), "--approval-mode", "yolo", "--skip-trust", "--resume", id)
			},
			resumeNote: "`gemini -o ... --approval-mode yolo --skip-trust --resume <session_id>`, same working directory; " +
				"session_id taken from the first run's `init` event (stream-json) or top-level `session_id` (json).",
		},
		{
			name: "opencode",
			notes: []string{
				"A new session makes a title-generation call (`You are a title generator...`, no tools) concurrently with the main call; it may arrive before or after it. Resuming makes none.",
				"Shell tool `bash` `{command, description}`; the tool output sent back is the raw `conformance\\n`.",
				"`--thinking` shows `reasoning_content` deltas as a `reasoning` event.",
				"400: one main request, exit 1 after ~6 s, an `error` event on stdout, empty stderr. A 500 is retried (6 requests, ~72 s, `isRetryable:true`) before exit 1; no knob was found.",
				"stderr was empty in every scenario. ~4-14 s per run.",
			},
			variants: []variant{{"", nil}},
			base: func(variant) []string {
				return []string{"run", "--format", "json"}
			},
			resume: func(_ variant, id string) []string {
				return []string{"run", "--format", "json", "--session", id}
			},
			thinkingArgs: []string{"--thinking"},
			resumeNote: "`opencode run --format json --session <sessionID>` (prompt on stdin), same working directory; " +
				"sessionID taken from the first run's events. `--continue` is not needed.",
		},
		{
			name: "copilot",
			notes: []string{
				"Only `POST /v1/chat/completions` (streaming, `stream_options.include_usage`) reached the server; every user message starts with a `<current_datetime>` element.",
				"The prompt is read from stdin (no -p). The session id appears only in the last line (`result.sessionId`); no usage is printed (agentcli reads `--usage-output-file`).",
				"Shell tool `bash` `{command, description}`; the tool result sent back is `conformance\\n<shellId: 0 completed with exit code 0>`.",
				"Reasoning (`reasoning_content`) arrives as `assistant.reasoning_delta` lines and an `assistant.reasoning` block after the message.",
				"400: one request, `model.call_failure` (errorMessage: the response body), `session.error` {errorType query, statusCode 400}, `result` with exitCode 1, exit 1.",
			},
			variants: []variant{{"", nil}},
			base: func(variant) []string {
				return []string{"--output-format=json", "--no-auto-update", "--allow-all"}
			},
			resume: func(_ variant, id string) []string {
				return []string{"--output-format=json", "--no-auto-update", "--allow-all", "--resume=" + id}
			},
			resumeNote: "`copilot --output-format=json --no-auto-update --allow-all --resume=<sessionId>` (prompt on stdin); " +
				"sessionId taken from the first run's `result` line.",
		},
	}
}

func scenarios(c cliSpec, v variant) []scenario {
	base := c.base(v)
	withThinking := append(append([]string{}, base...), c.thinkingArgs...)
	return []scenario{
		{name: "text", runs: []run{{name: "text" + v.suffix, args: base, stdin: prompt,
			turns: []agentclitest.Turn{{Text: helloText}}}}},
		{name: "tool", runs: []run{{name: "tool" + v.suffix, args: base, stdin: toolPrompt,
			turns: []agentclitest.Turn{{Shell: shellCommand}, {Text: "The command printed conformance."}}}}},
		{name: "resume", runs: []run{
			{name: "resume-1" + v.suffix, args: base, stdin: "Remember the word apple.",
				turns: []agentclitest.Turn{{Text: "I will remember apple."}}},
			{name: "resume-2" + v.suffix, stdin: "What was the word?",
				turns: []agentclitest.Turn{{Text: "The word was apple."}}},
		}, resume: func(id string) []string { return c.resume(v, id) }},
		{name: "error400", runs: []run{{name: "error400" + v.suffix, args: base, stdin: prompt,
			turns: []agentclitest.Turn{{Status: 400, Message: errorMessage, Repeat: -1}}}}},
		{name: "thinking", runs: []run{{name: "thinking" + v.suffix, args: withThinking, stdin: prompt,
			turns: []agentclitest.Turn{{Thinking: thinkingText, Text: helloText}}}}},
		{name: "dashprompt", runs: []run{{name: "dashprompt" + v.suffix, args: base, stdin: dashPrompt,
			turns: []agentclitest.Turn{{Text: helloText}}}}},
	}
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("capture: ")
	flag.Parse()
	if err := checkNetwork(); err != nil && !*allowNet {
		log.Fatal(err)
	}
	root, err := filepath.Abs(*outDir)
	if err != nil {
		log.Fatal(err)
	}
	bin := *binDir
	if bin == "" {
		bin = filepath.Join(root, "tools", "clis", "node_modules", ".bin")
	}
	parent := *scratch
	if parent == "" {
		// codex refuses to create helper aliases when CODEX_HOME is under the
		// OS temp dir (/tmp); /var/tmp avoids that warning.
		parent = "/var/tmp"
		if st, err := os.Stat(parent); err != nil || !st.IsDir() {
			parent = os.TempDir()
		}
	}
	// A fixed path keeps the paths printed in transcripts stable across
	// captures.
	scratchRoot := filepath.Join(parent, "agentcli-capture")
	if err := os.RemoveAll(scratchRoot); err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(scratchRoot, 0o700); err != nil {
		log.Fatal(err)
	}
	if !*keep {
		defer os.RemoveAll(scratchRoot)
	}
	// Become a subreaper so that daemonized grandchildren are reparented to
	// us and can be reaped.
	syscall.RawSyscall(syscall.SYS_PRCTL, 36 /* PR_SET_CHILD_SUBREAPER */, 1, 0)

	want := map[string]bool{}
	for _, c := range strings.Split(*clis, ",") {
		want[strings.TrimSpace(c)] = true
	}
	failed := false
	for _, c := range specs() {
		if !want[c.name] {
			continue
		}
		if err := captureCLI(c, root, bin, scratchRoot); err != nil {
			log.Printf("%s: %v", c.name, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// checkNetwork fails if any non-loopback interface is up.
func checkNetwork() error {
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
			return fmt.Errorf("network interface %s is up; run inside `unshare -n` (or pass -allow-network)", i.Name)
		}
	}
	return nil
}

var sessionRE = regexp.MustCompile(`"(?:session_id|thread_id|sessionID|sessionId)"\s*:\s*"([^"]+)"`)

// report is one README row.
type report struct {
	file, argv, stdin, exit, dur, requests string
}

func captureCLI(c cliSpec, root, bin, scratchRoot string) error {
	dest := filepath.Join(root, c.name, "testdata", "real")
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	var reports []report
	var dashNotes []string
	for _, v := range c.variants {
		for _, sc := range scenarios(c, v) {
			if *only != "" && !strings.HasPrefix(sc.name, *only) {
				continue
			}
			srv := agentclitest.NewServer()
			home := filepath.Join(scratchRoot, c.name+v.suffix+"-"+sc.name)
			if err := os.MkdirAll(home, 0o700); err != nil {
				srv.Close()
				return err
			}
			w, err := srv.Wire(c.name, home)
			if err != nil {
				srv.Close()
				return err
			}
			var sid string
			for i, r := range sc.runs {
				args := r.args
				if i > 0 {
					if sid == "" {
						log.Printf("%s/%s: no session id in first run; skipping %s", c.name, sc.name, r.name)
						break
					}
					args = sc.resume(sid)
				}
				args = insertArgs(c.name, args, w.Args)
				before := len(srv.Requests())
				srv.Push(r.turns...)
				res := execCLI(filepath.Join(bin, c.name), args, r.stdin, w)
				reqs := srv.Requests()[before:]
				if err := writeResult(dest, r.name, res); err != nil {
					srv.Close()
					return err
				}
				if i == 0 {
					if m := sessionRE.FindSubmatch(res.stdout); m != nil {
						sid = string(m[1])
					}
				}
				if *reqLog != "" {
					dumpRequests(filepath.Join(*reqLog, c.name, r.name+".json"), reqs)
				}
				summary := summarize(reqs)
				log.Printf("%s %s: exit %d in %s; requests: %s", c.name, r.name, res.exit, res.dur.Round(10*time.Millisecond), summary)
				reports = append(reports, report{
					file: r.name, argv: shellJoin(append([]string{c.name}, args...)), stdin: r.stdin,
					exit: strconv.Itoa(res.exit), dur: res.dur.Round(100 * time.Millisecond).String(), requests: summary,
				})
				if sc.name == "dashprompt" {
					dashNotes = append(dashNotes, fmt.Sprintf("- `%s`: exit %d; %s", r.name, res.exit, dashOutcome(reqs)))
				}
				if srv.Remaining() != 0 && sc.name != "error400" {
					log.Printf("%s %s: %d scripted turns left unused", c.name, r.name, srv.Remaining())
				}
			}
			srv.Close()
		}
	}
	return writeREADME(dest, c, reports, dashNotes)
}

// insertArgs puts the wiring's extra args right after the subcommand (codex
// exec, opencode run) or first.
func insertArgs(cli string, args, extra []string) []string {
	if len(extra) == 0 {
		return args
	}
	n := 0
	if cli == "codex" || cli == "opencode" {
		n = 1
	}
	out := append([]string{}, args[:n]...)
	out = append(out, extra...)
	return append(out, args[n:]...)
}

type result struct {
	stdout, stderr []byte
	exit           int
	dur            time.Duration
}

// execCLI runs the CLI in its own process group with a definite stdin,
// kills the whole group afterwards and reaps any orphans.
func execCLI(path string, args []string, stdin string, w *agentclitest.Wiring) result {
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = w.Env
	cmd.Dir = w.Dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	dur := time.Since(start)
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	reapOrphans()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if ctx.Err() != nil {
			errb.WriteString("\n[capture: killed after timeout]\n")
		}
	case err != nil:
		code = -1
		errb.WriteString("\n[capture: " + err.Error() + "]\n")
	}
	return result{stdout: out.Bytes(), stderr: errb.Bytes(), exit: code, dur: dur}
}

// reapOrphans waits for reparented descendants (we are a subreaper) for a
// short while.
func reapOrphans() {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.ECHILD) {
			return
		}
		if pid <= 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func writeResult(dest, name string, r result) error {
	if err := os.WriteFile(filepath.Join(dest, name+".stdout"), r.stdout, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dest, name+".stderr"), r.stderr, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dest, name+".exit"), []byte(strconv.Itoa(r.exit)+"\n"), 0o644)
}

// summarize lists the recorded requests compactly.
func summarize(reqs []agentclitest.ModelRequest) string {
	var parts []string
	for _, r := range reqs {
		s := r.Method + " " + r.Path
		if r.Query != "" {
			s += "?" + r.Query
		}
		s += " model=" + r.Model
		if r.Utility {
			s += " (utility)"
		}
		if len(r.ToolResults) > 0 {
			s += fmt.Sprintf(" toolResults=%q", r.ToolResults[0].Output)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// dashOutcome says whether the "--help" prompt reached the server verbatim.
func dashOutcome(reqs []agentclitest.ModelRequest) string {
	for _, r := range reqs {
		if r.Utility {
			continue
		}
		for _, m := range r.Messages {
			if m.Role == "user" && m.Text == dashPrompt {
				return "the prompt reached the server verbatim as a user text part (`--help`)"
			}
		}
		for _, m := range r.Messages {
			if m.Role == "user" && strings.Contains(m.Text, dashPrompt) {
				return fmt.Sprintf("the prompt reached the server inside a user text part: %q", clip(m.Text, 200))
			}
		}
	}
	if len(reqs) == 0 {
		return "no model request was made"
	}
	return "the prompt did NOT reach the server as user text"
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func dumpRequests(path string, reqs []agentclitest.ModelRequest) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Print(err)
		return
	}
	type out struct {
		agentclitest.ModelRequest
		Body json.RawMessage
	}
	var all []out
	for _, r := range reqs {
		b := json.RawMessage(r.Body)
		if !json.Valid(b) {
			b, _ = json.Marshal(string(r.Body))
		}
		all = append(all, out{r, b})
	}
	data, _ := json.MarshalIndent(all, "", " ")
	os.WriteFile(path, data, 0o644)
}

func shellJoin(args []string) string {
	var out []string
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$`\\*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

func writeREADME(dest string, c cliSpec, reports []report, dash []string) error {
	if *only != "" {
		return nil // partial capture: keep the README of the last full one
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Real %s transcripts\n\n", c.name)
	fmt.Fprintf(&b, "Captured by `internal/capture` (%s) with the pinned CLI from\n", time.Now().UTC().Format("2006-01-02"))
	b.WriteString("`tools/clis`, run inside a private network namespace against an `agentclitest.Server`\n")
	b.WriteString("wired with `Server.Wire`. Each `<scenario>.stdout`/`.stderr` is the CLI's raw output;\n")
	b.WriteString("`.exit` is its exit status. Paths, ids and timestamps are those of the capture run.\n\n")
	b.WriteString("Resume: " + c.resumeNote + "\n\n")
	b.WriteString("| file | command (prompt on stdin) | stdin | exit | time | model requests seen by the server |\n|---|---|---|---|---|---|\n")
	for _, r := range reports {
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s | %s |\n", r.file, r.argv, strings.ReplaceAll(r.stdin, "|", `\|`), r.exit, r.dur,
			strings.ReplaceAll(r.requests, "|", `\|`))
	}
	if len(c.notes) > 0 {
		b.WriteString("\nObservations (pinned version, at capture time):\n\n")
		for _, n := range c.notes {
			b.WriteString("- " + n + "\n")
		}
	}
	if len(dash) > 0 {
		b.WriteString("\nPrompt `--help` on stdin (dashprompt):\n\n")
		b.WriteString(strings.Join(dash, "\n") + "\n")
	}
	return os.WriteFile(filepath.Join(dest, "README.md"), []byte(b.String()), 0o644)
}
