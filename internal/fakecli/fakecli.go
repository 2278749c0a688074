// Package fakecli is a scriptable stand-in for the real CLIs, for fault
// injection in tests. A test binary becomes the fake when its TestMain calls
// MaybeRun first:
//
//	func TestMain(m *testing.M) {
//		fakecli.MaybeRun()
//		os.Exit(m.Run())
//	}
//
// and the backend under test is pointed at the test binary itself
// (os.Executable) with the environment from Env. The fake parses its argv
// the way the named real CLI does (Flavors), rejecting unknown flags with
// that CLI's usage exit status, records argv, stdin and the files named by
// some flags, then plays a script.
//
// A script is a list of lines, one command each:
//
//	out <text>            write text and a newline to stdout
//	outraw <text>         write text without a newline
//	err <text>            write text and a newline to stderr
//	bigline <n>           write one JSON string line of n bytes to stdout
//	errflood <n>          write n bytes to stderr
//	badutf8               write a line with invalid UTF-8 to stdout
//	repeat <n> <text>     write text and a newline to stdout n times
//	sleep <duration>      sleep
//	hang                  sleep until killed
//	ignoreterm            ignore SIGTERM from now on
//	grandchild <duration> start a child that keeps stdout and stderr open for duration, in the same group
//	escapee <duration>    like grandchild, but in a new session (outside the group)
//	escapee-writer <interval> <duration>
//	                      start a child in a new session that writes the line
//	                      "escapee tick" to stdout every interval for duration
//	                      (it keeps stderr open too)
//	daemon-stderr <interval> <duration>
//	                      double-fork a daemon (new session; its parent exits at
//	                      once) that writes "daemon tick" to stderr every
//	                      interval for duration (it keeps stdout open too)
//	silent-daemon <duration>
//	                      double-fork a daemon that holds stdout and stderr open
//	                      for duration and writes nothing
//	cleanenv              children started by later commands get only the
//	                      fake's own variables (AGENTCLI_FAKE_*, GORACE), as if
//	                      exec'd with a fresh environment: no run tag
//	flood <text>          write text and a newline to stdout until killed
//	exit <code>           exit with code (the default at the end is 0)
//	file <flag> <text>    write text to the file named by the last value of
//	                      flag in the parsed argv (as a CLI writes an output
//	                      file it was given)
//
// A script whose first line is "live" plays a live session's CLI: stdin is
// not read up front, but line by line as the script says, and every line
// read is recorded (Record.Stdin, one per line, as read). Its commands:
//
//	expect <text>         read stdin lines until one contains text (at the
//	                      end of stdin the fake exits 0); it becomes the last
//	                      message
//	save <name>           remember the last message as name
//	reply <text>          out, with $ID replaced by the last message's "id"
//	                      (JSON, as sent), $RID by its "request_id" and
//	                      $ID:name by the id of the message saved as name
//	expectn <n> <text>    read stdin until n lines containing text came
//	repeatn <n> <text>    write text n times, $N replaced by 1..n
//	deaf                  never read stdin again
//	drain                 read stdin to its end, then exit 0
//
// Every process the fake starts (itself, its children, the second fork of a
// daemon) appends its pid to the file named by AGENTCLI_FAKE_PIDS.
package fakecli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Environment variables understood by the fake.
const (
	EnvFlavor = "AGENTCLI_FAKE_FLAVOR" // which CLI's argv rules apply; enables the fake
	EnvScript = "AGENTCLI_FAKE_SCRIPT" // path of the script file
	EnvRecord = "AGENTCLI_FAKE_RECORD" // path to write the Record JSON to
	EnvPids   = "AGENTCLI_FAKE_PIDS"   // path to append started pids to, one a line
	envSleep  = "AGENTCLI_FAKE_SLEEPER"
	// envChild makes the process a helper child: "write <fd> <interval>
	// <duration>" or "daemon <fd> <interval> <duration>" (fd is 1 or 2; a
	// zero interval writes nothing).
	envChild = "AGENTCLI_FAKE_CHILD"
)

// Record is what the fake saw.
type Record struct {
	Args  []string          `json:"args"`
	Stdin string            `json:"stdin"`
	Files map[string]string `json:"files,omitempty"` // flag → content of the file it names
	// FileModes holds the permission bits of those files.
	FileModes map[string]uint32 `json:"file_modes,omitempty"`
	Env       []string          `json:"env"`
	Dir       string            `json:"dir"`
	Prompt    string            `json:"prompt"` // positional prompt text, if any
	// StdinPrompt is the prompt as the CLI reads it from stdin (decoded
	// from structured input where the flavor knows how).
	StdinPrompt string `json:"stdin_prompt"`
}

// Env returns the environment entries that make a test binary behave as the
// fake CLI of the given flavor, running script (written to dir).
func Env(dir, flavor string, script ...string) []string {
	sp := dir + "/script"
	if err := os.WriteFile(sp, []byte(strings.Join(script, "\n")+"\n"), 0o644); err != nil {
		panic(err)
	}
	env := []string{
		EnvFlavor + "=" + flavor,
		EnvScript + "=" + sp,
		EnvRecord + "=" + dir + "/record.json",
		EnvPids + "=" + dir + "/pids",
		// A -race test binary otherwise sleeps 1s at exit.
		"GORACE=atexit_sleep_ms=0",
	}
	if v, ok := credential[flavor]; ok {
		env = append(env, v+"="+Credential)
	}
	return env
}

// Credential is the value of the credential variable Env sets, so that
// the backend, which fails a run without credentials before it starts,
// runs the fake.
const Credential = "fakecli-credential"

// Credentials returns a credential variable of each CLI set to
// Credential, for a backend that runs something else than the fake (a
// cat of a stream) and must not fail for lack of credentials.
func Credentials() []string {
	var env []string
	for _, f := range slices.Sorted(maps.Keys(credential)) {
		env = append(env, credential[f]+"="+Credential)
	}
	return env
}

// credential maps flavors to one of their CLI's credential variables.
var credential = map[string]string{
	"claude": "ANTHROPIC_API_KEY", "codex": "CODEX_API_KEY", "gemini": "GEMINI_API_KEY", "opencode": "OPENCODE_API_KEY",
	"copilot": "COPILOT_GITHUB_TOKEN", "droid": "FACTORY_API_KEY",
}

// ReadRecord reads what the fake recorded in dir.
func ReadRecord(dir string) (*Record, error) {
	b, err := os.ReadFile(dir + "/record.json")
	if err != nil {
		return nil, err
	}
	var r Record
	return &r, json.Unmarshal(b, &r)
}

// ReadPids returns the pids the fake and its children recorded in dir.
func ReadPids(dir string) []int {
	b, _ := os.ReadFile(dir + "/pids")
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// Alive reports whether a process with that pid exists and is not a zombie.
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return signalZero(pid)
	}
	// state is the field after the ")" that ends the command name
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return true
	}
	return s[i+2] != 'Z' && s[i+2] != 'X'
}

// MaybeRun turns the process into the fake CLI when the environment says
// so; it then never returns. Otherwise it returns at once.
func MaybeRun() {
	if d := os.Getenv(envSleep); d != "" {
		sleeper(d)
	}
	if c := os.Getenv(envChild); c != "" {
		child(c)
	}
	flavor := os.Getenv(EnvFlavor)
	if flavor == "" {
		return
	}
	os.Exit(run(flavor))
}

func appendPid(pid int) {
	if p := os.Getenv(EnvPids); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, pid)
			f.Close()
		}
	}
}

func sleeper(d string) {
	appendPid(os.Getpid())
	signal.Ignore(syscall.SIGTERM)
	dur, _ := time.ParseDuration(d)
	time.Sleep(dur)
	os.Exit(0)
}

// child plays a helper process (see envChild); it never returns.
func child(spec string) {
	appendPid(os.Getpid())
	signal.Ignore(syscall.SIGTERM)
	f := strings.Fields(spec)
	if len(f) != 4 {
		os.Exit(96)
	}
	if f[0] == "daemon" {
		// The second fork: a new session, reparented once we exit.
		c := exec.Command("/proc/self/exe")
		c.Env = append(os.Environ(), envChild+"=write "+strings.Join(f[1:], " "))
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		c.SysProcAttr = newSession()
		if err := c.Start(); err != nil {
			os.Exit(98)
		}
		os.Exit(0)
	}
	w, text := os.Stdout, "escapee tick\n"
	if f[1] == "2" {
		w, text = os.Stderr, "daemon tick\n"
	}
	every, _ := time.ParseDuration(f[2])
	dur, _ := time.ParseDuration(f[3])
	end := time.Now().Add(dur)
	for time.Now().Before(end) {
		if every <= 0 {
			time.Sleep(time.Until(end))
			break
		}
		w.WriteString(text) // EPIPE once the reader is gone kills us: fine
		time.Sleep(every)
	}
	os.Exit(0)
}

// childEnv is the environment for a child the fake starts: its own
// environment, or only the fake's control variables after cleanenv.
func childEnv(clean bool, extra ...string) []string {
	env := os.Environ()
	if clean {
		env = nil
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "AGENTCLI_FAKE_") || strings.HasPrefix(kv, "GORACE=") {
				env = append(env, kv)
			}
		}
	}
	return append(env, extra...)
}

func run(flavor string) int {
	appendPid(os.Getpid())
	fl, ok := Flavors[flavor]
	if !ok {
		fmt.Fprintf(os.Stderr, "fakecli: unknown flavor %q\n", flavor)
		return 97
	}
	rec := &Record{Args: os.Args[1:], Env: os.Environ(), Files: map[string]string{}, FileModes: map[string]uint32{}}
	rec.Dir, _ = os.Getwd()
	if script := os.Getenv(EnvScript); isLive(script) && fl.Live != nil {
		if msg := fl.Live(os.Args[1:]); msg != "" {
			fmt.Fprintln(os.Stderr, msg)
			writeRecord(rec)
			return fl.UsageExit
		}
		writeRecord(rec)
		return playLive(script, rec)
	}
	parsed, err := fl.Parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		writeRecord(rec)
		return fl.UsageExit
	}
	rec.Prompt = strings.Join(parsed.Positional, " ")
	argValues = parsed.Values
	for _, f := range fl.FileFlags {
		for _, v := range parsed.Values[f] {
			b, err := os.ReadFile(v)
			if err != nil {
				fmt.Fprintf(os.Stderr, "fakecli: %s %s: %v\n", f, v, err)
				writeRecord(rec)
				return 1
			}
			rec.Files[f] = string(b)
			if fi, err := os.Stat(v); err == nil {
				rec.FileModes[f] = uint32(fi.Mode().Perm())
			}
		}
	}
	if fl.Validate != nil {
		if msg := fl.Validate(parsed.Values, parsed.Positional); msg != "" {
			fmt.Fprintln(os.Stderr, msg)
			writeRecord(rec)
			return fl.UsageExit
		}
	}
	if isLive(os.Getenv(EnvScript)) {
		writeRecord(rec)
		return playLive(os.Getenv(EnvScript), rec)
	}
	// Like the real CLIs, read stdin to EOF when it is not a terminal.
	in, _ := io.ReadAll(os.Stdin)
	rec.Stdin = string(in)
	rec.StdinPrompt = rec.Stdin
	if fl.StdinPrompt != nil {
		p, msg := fl.StdinPrompt(parsed.Values, in)
		if msg != "" {
			fmt.Fprintln(os.Stderr, msg)
			writeRecord(rec)
			return 1
		}
		rec.StdinPrompt = p
	}
	writeRecord(rec)
	return play(os.Getenv(EnvScript))
}

func writeRecord(r *Record) {
	if p := os.Getenv(EnvRecord); p != "" {
		b, _ := json.Marshal(r)
		os.WriteFile(p, b, 0o644)
	}
}

// argValues are the option values of the parsed argv, for the script's
// file command.
var argValues map[string][]string

func play(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	clean := false // cleanenv seen
	spawn := func(setsid bool, env ...string) int {
		out.Flush()
		c := exec.Command("/proc/self/exe")
		c.Env = childEnv(clean, append(env, EnvFlavor+"=")...)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if setsid {
			c.SysProcAttr = newSession()
		}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fakecli:", err)
			return 98
		}
		return 0
	}
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "out":
			out.WriteString(arg + "\n")
			out.Flush()
		case "outraw":
			out.WriteString(arg)
			out.Flush()
		case "file":
			flag, text, _ := strings.Cut(arg, " ")
			if v := argValues[flag]; len(v) > 0 {
				if err := os.WriteFile(v[len(v)-1], []byte(text), 0o600); err != nil {
					fmt.Fprintln(os.Stderr, "fakecli:", err)
				}
			}
		case "err":
			fmt.Fprintln(os.Stderr, arg)
		case "bigline":
			n, _ := strconv.Atoi(arg)
			out.WriteString(`"`)
			chunk := strings.Repeat("x", 1<<16)
			for left := n - 2; left > 0; left -= len(chunk) {
				if left < len(chunk) {
					chunk = chunk[:left]
				}
				out.WriteString(chunk)
			}
			out.WriteString("\"\n")
			out.Flush()
		case "errflood":
			n, _ := strconv.Atoi(arg)
			chunk := []byte(strings.Repeat("e", 1<<16))
			for left := n; left > 0; left -= len(chunk) {
				if left < len(chunk) {
					chunk = chunk[:left]
				}
				os.Stderr.Write(chunk)
			}
		case "repeat":
			ns, text, _ := strings.Cut(arg, " ")
			n, _ := strconv.Atoi(ns)
			for i := 0; i < n; i++ {
				out.WriteString(text + "\n")
			}
			out.Flush()
		case "badutf8":
			out.Write([]byte("{\"type\":\"\xff\xfe\xc3(\",\"x\":\"\xed\xa0\x80\"}\n"))
			out.Flush()
		case "sleep":
			d, _ := time.ParseDuration(arg)
			out.Flush()
			time.Sleep(d)
		case "hang":
			out.Flush()
			for { // not select{}: the runtime would report a deadlock
				time.Sleep(time.Hour)
			}
		case "ignoreterm":
			signal.Ignore(syscall.SIGTERM)
		case "grandchild", "escapee":
			if rc := spawn(cmd == "escapee", envSleep+"="+arg); rc != 0 {
				return rc
			}
		case "escapee-writer":
			if rc := spawn(true, envChild+"=write 1 "+arg); rc != 0 {
				return rc
			}
		case "daemon-stderr":
			if rc := spawn(true, envChild+"=daemon 2 "+arg); rc != 0 {
				return rc
			}
		case "silent-daemon":
			if rc := spawn(true, envChild+"=daemon 1 0s "+arg); rc != 0 {
				return rc
			}
		case "cleanenv":
			clean = true
		case "flood":
			line := arg + "\n"
			for {
				if _, err := out.WriteString(line); err != nil {
					return 1
				}
			}
		case "exit":
			n, _ := strconv.Atoi(arg)
			out.Flush()
			return n
		case "":
		default:
			fmt.Fprintf(os.Stderr, "fakecli: unknown script command %q\n", cmd)
			return 99
		}
	}
	return 0
}
