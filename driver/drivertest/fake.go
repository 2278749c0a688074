package drivertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The environment variables that make a process the fake CLI (FakeEnv sets
// them). They are exported for tests that look for the fake's processes or
// write its environment by hand.
const (
	// EnvFlavor names the kit the fake stands in for (Kit.Name); set, it
	// makes MaybeRunFakeCLI play the fake.
	EnvFlavor = "AGENTCLI_FAKE_FLAVOR"
	// EnvScript is the path of the script file.
	EnvScript = "AGENTCLI_FAKE_SCRIPT"
	// EnvRecord is the path the fake writes its Record to, as JSON.
	EnvRecord = "AGENTCLI_FAKE_RECORD"
	// EnvPids is the path every process of the fake appends its pid to,
	// one a line.
	EnvPids  = "AGENTCLI_FAKE_PIDS"
	envSleep = "AGENTCLI_FAKE_SLEEPER"
	// envChild makes the process a helper child: "write <fd> <interval>
	// <duration>" or "daemon <fd> <interval> <duration>" (fd is 1 or 2; a
	// zero interval writes nothing).
	envChild = "AGENTCLI_FAKE_CHILD"
)

// maxRecordedFile bounds the files a Record keeps.
const maxRecordedFile = 1 << 20

// Record is what the fake CLI saw of one run.
type Record struct {
	// Args are its arguments, without the program name.
	Args []string `json:"args"`
	// Stdin is what it read on stdin: all of it for a script, the lines
	// it read so far for a live script.
	Stdin string `json:"stdin"`
	// Files holds the content of every regular file of at most 1 MiB
	// that an argument names, as it was when the fake started: the
	// argument itself, or what follows the first "=" in it (as in
	// --system-prompt-file=PATH), is the file's path and the key.
	// Backends pass private files (a system prompt, a configuration) that
	// are gone once the run ends; this is where a test reads them.
	Files map[string]string `json:"files,omitempty"`
	// FileModes holds the permission bits of those files.
	FileModes map[string]uint32 `json:"file_modes,omitempty"`
	// Env is its environment.
	Env []string `json:"env"`
	// Dir is its working directory.
	Dir string `json:"dir"`
}

// FakeEnv writes script to dir and returns the environment entries that
// make a test binary, whose TestMain calls MaybeRunFakeCLI, the fake CLI
// of the kit named name playing script, with dir as its record directory
// (see ReadRecord and Pids). Kit.Setup calls it; a test that starts the
// fake by other means (an Options.Env of its own, a program's environment)
// calls it directly.
func FakeEnv(dir, name string, script ...string) ([]string, error) {
	sp := filepath.Join(dir, "script")
	if err := os.WriteFile(sp, []byte(strings.Join(script, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	return []string{
		EnvFlavor + "=" + name,
		EnvScript + "=" + sp,
		EnvRecord + "=" + filepath.Join(dir, "record.json"),
		EnvPids + "=" + filepath.Join(dir, "pids"),
		// A -race test binary otherwise sleeps 1s at exit.
		"GORACE=atexit_sleep_ms=0",
	}, nil
}

// ReadRecord reads what the fake CLI recorded in its record directory dir.
// It fails when the fake has not started (or was refused before it could
// write anything).
func ReadRecord(dir string) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, "record.json"))
	if err != nil {
		return nil, err
	}
	var r Record
	return &r, json.Unmarshal(b, &r)
}

// Pids returns the pids of the processes the fake CLI with record
// directory dir started (itself, its children, the second fork of a
// daemon), in the order they started.
func Pids(dir string) []int {
	b, _ := os.ReadFile(filepath.Join(dir, "pids"))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// Alive reports whether a process with that pid exists and is not a
// zombie.
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

// MaybeRunFakeCLI makes the process the fake CLI when its environment says
// so (see FakeEnv), and then never returns; otherwise it returns at once.
// A test package that runs the fake calls it first thing in TestMain:
//
//	func TestMain(m *testing.M) {
//		drivertest.MaybeRunFakeCLI(kit)
//		os.Exit(m.Run())
//	}
//
// kits are the kits whose fakes the package runs: the fake of the kit
// named by its environment judges its command line with that kit's
// CheckArgs, or Args, and refuses one the real CLI would refuse, printing
// the message on stderr and exiting with Kit.UsageExit. The fake of a
// name no kit has accepts any command line.
func MaybeRunFakeCLI(kits ...Kit) {
	if d := os.Getenv(envSleep); d != "" {
		sleeper(d)
	}
	if c := os.Getenv(envChild); c != "" {
		child(c)
	}
	name := os.Getenv(EnvFlavor)
	if name == "" {
		return
	}
	var kit Kit
	for _, k := range kits {
		if k.Name == name {
			kit = k
		}
	}
	os.Exit(runFake(&kit))
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

// self is the fake's own binary, which its helper children run.
func self() string {
	p, err := os.Executable()
	if err != nil {
		return "/proc/self/exe"
	}
	return p
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
		c := exec.Command(self())
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

// runFake plays the fake CLI of kit and returns its exit status.
func runFake(kit *Kit) int {
	appendPid(os.Getpid())
	args := os.Args[1:]
	rec := &Record{Args: args, Env: os.Environ()}
	rec.Dir, _ = os.Getwd()
	recordFiles(rec)
	script := os.Getenv(EnvScript)
	live := isLive(script)
	if msg := kit.refuse(args, live); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		writeRecord(rec)
		if kit.UsageExit == 0 {
			return 2
		}
		return kit.UsageExit
	}
	if live {
		writeRecord(rec)
		return playLive(script, rec)
	}
	// Like the real CLIs, read stdin to EOF when it is not a terminal.
	in, _ := io.ReadAll(os.Stdin)
	rec.Stdin = string(in)
	writeRecord(rec)
	return play(script)
}

// recordFiles keeps in rec the files its arguments name.
func recordFiles(rec *Record) {
	for _, a := range rec.Args {
		paths := []string{a}
		if _, v, ok := strings.Cut(a, "="); ok {
			paths = append(paths, v)
		}
		for _, p := range paths {
			fi, err := os.Stat(p)
			if p == "" || err != nil || !fi.Mode().IsRegular() || fi.Size() > maxRecordedFile {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			if rec.Files == nil {
				rec.Files, rec.FileModes = map[string]string{}, map[string]uint32{}
			}
			rec.Files[p], rec.FileModes[p] = string(b), uint32(fi.Mode().Perm())
		}
	}
}

// writeRecord replaces the record file at once (a temporary file renamed
// over it), so that a fake killed while it writes leaves the last whole
// record rather than a truncated one.
func writeRecord(r *Record) {
	if p := os.Getenv(EnvRecord); p != "" {
		b, _ := json.Marshal(r)
		tmp := fmt.Sprintf("%s.%d.tmp", p, os.Getpid())
		if os.WriteFile(tmp, b, 0o644) == nil {
			os.Rename(tmp, p)
		}
	}
}

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
		c := exec.Command(self())
		c.Env = childEnv(clean, append(env, EnvFlavor+"=")...)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if setsid {
			c.SysProcAttr = newSession()
		}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "drivertest fake CLI:", err)
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
			opt, text, _ := strings.Cut(arg, " ")
			if p := lastValue(os.Args[1:], opt); p != "" {
				if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
					fmt.Fprintln(os.Stderr, "drivertest fake CLI:", err)
				}
			}
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
		default:
			if code, end := scriptCommand(cmd, arg, out, "script"); end {
				return code
			}
		}
	}
	return 0
}

// scriptCommand runs the commands both fakes' scripts know: err TEXT (a
// line on stderr), sleep DURATION, hang, exit CODE and blank lines. end
// reports that the fake exits with code: after exit, or on a command
// that neither knows (code 99; kind names the script in the message).
func scriptCommand(cmd, arg string, out *bufio.Writer, kind string) (code int, end bool) {
	switch cmd {
	case "err":
		fmt.Fprintln(os.Stderr, arg)
	case "sleep":
		d, _ := time.ParseDuration(arg)
		out.Flush()
		time.Sleep(d)
	case "hang":
		out.Flush()
		for { // not select{}: the runtime would report a deadlock
			time.Sleep(time.Hour)
		}
	case "exit":
		n, _ := strconv.Atoi(arg)
		out.Flush()
		return n, true
	case "":
	default:
		fmt.Fprintf(os.Stderr, "drivertest fake CLI: unknown %s command %q\n", kind, cmd)
		return 99, true
	}
	return 0, false
}

// lastValue returns the value of the last occurrence of option opt in
// args, written opt=value or opt value; "" when there is none.
func lastValue(args []string, opt string) string {
	v := ""
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, opt+"="):
			v = a[len(opt)+1:]
		case a == opt && i+1 < len(args):
			v = args[i+1]
		}
	}
	return v
}
