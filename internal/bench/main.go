// Command bench measures agentcli against the official TypeScript SDKs
// (@anthropic-ai/claude-agent-sdk, @openai/codex-sdk) on the same bytes:
// each side runs one query against the same fake CLI (./fakecli), which
// prints a realistic synthetic stream (internal/benchdata). Contenders run
// interleaved, round after round, each in its own process, and the table
// gives medians:
//
//	agentcli   agentcli.Open + Stream through the public API (./gorunner)
//	TS SDK     query() / runStreamed() under Node (./node/run.mjs)
//	bare       os/exec reading lines without parsing: the floor for the
//	           time to first event
//	fake|cat   the fake piped into cat: the ceiling of any pipe reader
//
// Peak RSS is the contender process's VmHWM, read from /proc by this driver
// after the contender has reported and before it exits, the same way for
// both sides. Run it through scripts/bench.sh, which installs the SDKs
// first:
//
//	scripts/bench.sh                      # quick: 2 MB streams
//	scripts/bench.sh -sizes 2MB,200MB,2000MB -slow -huge
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentcli/agentcli/internal/benchdata"
)

type config struct {
	sizes      []int64
	clis       []benchdata.CLI
	rounds     int
	slow       bool
	slowSize   int64
	slowEvents int
	huge       bool
	hugeSize   int64
	nodeDir    string
	work       string
	timeout    time.Duration
	out        string
	buildFlags []string // extra go build flags for the contender binaries
	// variants are other builds of the agentcli runner (./gorunner) run
	// as contenders of their own, by name: a baseline, or a build without
	// one technique, measured side by side.
	variants map[string]string
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	sizes := fs.String("sizes", "2MB", "comma-separated stream sizes (e.g. 2MB,200MB,2000MB; MB = 10^6 bytes)")
	clis := fs.String("clis", "claude,codex,gemini,opencode", "comma-separated CLIs")
	rounds := fs.Int("rounds", 3, "interleaved rounds; the table gives medians")
	slow := fs.Bool("slow", false, "also run the slow consumer (1 ms per event) and report its peak RSS")
	slowSize := fs.String("slow-size", "200MB", "stream size of the slow-consumer run")
	slowEvents := fs.Int("slow-events", 3000, "events the slow consumer reads before it stops")
	huge := fs.Bool("huge", false, "also run a stream holding one huge line")
	hugeSize := fs.String("huge-size", "50MB", "size of the huge line")
	nodeDir := fs.String("node", "", "folder with run.mjs and node_modules of the TypeScript SDKs (empty: agentcli only)")
	work := fs.String("work", "", "scratch folder (default: a temporary one, removed at the end)")
	timeout := fs.Duration("timeout", 15*time.Minute, "limit for one contender run")
	out := fs.String("o", "", "also write the markdown report to this file")
	variants := fs.String("variants", "", "comma-separated NAME=PATH of other gorunner builds to run as contenders \"agentcli [NAME]\" (a baseline, a build without one technique)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c := config{rounds: *rounds, slow: *slow, slowEvents: *slowEvents, huge: *huge, nodeDir: *nodeDir, work: *work, timeout: *timeout, out: *out}
	for s := range strings.SplitSeq(*sizes, ",") {
		n, err := parseSize(s)
		if err != nil {
			return err
		}
		c.sizes = append(c.sizes, n)
	}
	var err error
	if c.slowSize, err = parseSize(*slowSize); err != nil {
		return err
	}
	if c.hugeSize, err = parseSize(*hugeSize); err != nil {
		return err
	}
	for v := range strings.SplitSeq(*variants, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		name, path, ok := strings.Cut(v, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("bad -variants entry %q, want NAME=PATH", v)
		}
		if c.variants == nil {
			c.variants = map[string]string{}
		}
		c.variants[name] = path
	}
	for s := range strings.SplitSeq(*clis, ",") {
		cli := benchdata.CLI(strings.TrimSpace(s))
		if !slices.Contains(benchdata.CLIs, cli) {
			return fmt.Errorf("unknown CLI %q", s)
		}
		c.clis = append(c.clis, cli)
	}
	if c.rounds < 1 {
		return errors.New("-rounds must be at least 1")
	}
	if c.work == "" {
		dir, err := os.MkdirTemp("", "agentcli-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		c.work = dir
	}
	report, err := bench(context.Background(), c, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, report)
	if c.out != "" {
		return os.WriteFile(c.out, []byte(report), 0o644)
	}
	return nil
}

// parseSize reads "2MB", "50MB", "2000MB", "1GB", "300KB" or a byte count.
// Units are decimal, as in MB/s.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(n * float64(mult)), nil
}

// A contender is one way of consuming a run.
type contender string

const (
	cAgentcli contender = "agentcli"
	cDropRaw            = cAgentcli + dropRawSuffix
	// cEveryRaw keeps Raw even on a huge line (Request.MaxRawBytes -1).
	cEveryRaw           = cAgentcli + everyRawSuffix
	cTS       contender = "TS SDK"
	cBare     contender = "bare os/exec"
	cFloor    contender = "fake | cat"

	dropRawSuffix  contender = ", DropRaw"
	everyRawSuffix contender = ", every Raw"
)

// variantContenders returns the contenders of the variant runners, by
// name: "agentcli [NAME]".
func variantContenders(c config) []contender {
	var cs []contender
	for name := range c.variants {
		cs = append(cs, contender(string(cAgentcli)+" ["+name+"]"))
	}
	slices.Sort(cs)
	return cs
}

// A scenario is one kind of run: a stream of some size, the slow consumer,
// or the huge line.
type scenario struct {
	name  string
	size  int64 // bytes the fake prints, per CLI (filled in later)
	slow  int   // events the slow consumer reads
	huge  bool
	files map[benchdata.CLI]string // huge: the stream file per CLI
	bytes map[benchdata.CLI]int64  // exact stream size per CLI
}

// sample is one contender run's report (see gorunner.Result).
type sample struct {
	WallNS int64  `json:"wall_ns"`
	TTFENS int64  `json:"ttfe_ns"`
	Events int64  `json:"events"`
	Err    string `json:"err,omitempty"`
	RSSKB  int64  `json:"-"`
}

type key struct {
	sc  int
	cli benchdata.CLI
	c   contender
}

func tsSDK(cli benchdata.CLI) string {
	switch cli {
	case benchdata.Claude:
		return "@anthropic-ai/claude-agent-sdk"
	case benchdata.Codex:
		return "@openai/codex-sdk"
	}
	return ""
}

func bench(ctx context.Context, c config, log io.Writer) (string, error) {
	bin := filepath.Join(c.work, "bin")
	fake, runner := filepath.Join(bin, "fakecli"), filepath.Join(bin, "gorunner")
	fmt.Fprintln(log, "bench: building the fake CLI and the agentcli runner")
	for _, b := range [][2]string{{fake, "./internal/bench/fakecli"}, {runner, "./internal/bench/gorunner"}} {
		args := append(append([]string{"build"}, c.buildFlags...), "-o", b[0], b[1])
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = moduleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	node := ""
	if c.nodeDir != "" {
		abs, err := filepath.Abs(c.nodeDir)
		if err != nil {
			return "", err
		}
		c.nodeDir = abs
		if _, err := os.Stat(filepath.Join(c.nodeDir, "node_modules")); err != nil {
			return "", fmt.Errorf("-node %s: %v (run scripts/bench.sh, which installs the SDKs)", c.nodeDir, err)
		}
		if node, err = exec.LookPath("node"); err != nil {
			return "", err
		}
	}

	var scs []*scenario
	for _, s := range c.sizes {
		scs = append(scs, &scenario{name: fmt.Sprintf("Stream of %s", human(s)), size: s})
	}
	if c.slow {
		scs = append(scs, &scenario{name: fmt.Sprintf("Slow consumer (1 ms per event, first %d events of a %s stream)", c.slowEvents, human(c.slowSize)), size: c.slowSize, slow: c.slowEvents})
	}
	if c.huge {
		scs = append(scs, &scenario{name: fmt.Sprintf("One %s line", human(c.hugeSize)), size: c.hugeSize, huge: true})
	}
	for _, sc := range scs {
		sc.bytes = map[benchdata.CLI]int64{}
		sc.files = map[benchdata.CLI]string{}
		for _, cli := range c.clis {
			g, err := benchdata.New(cli)
			if err != nil {
				return "", err
			}
			if sc.huge {
				name := filepath.Join(c.work, string(cli)+"-huge.jsonl")
				data := g.HugeStream(int(sc.size))
				if err := os.WriteFile(name, data, 0o644); err != nil {
					return "", err
				}
				sc.files[cli], sc.bytes[cli] = name, int64(len(data))
				continue
			}
			n, _, err := g.WriteStream(io.Discard, sc.size)
			if err != nil {
				return "", err
			}
			sc.bytes[cli] = n
		}
	}

	contenders := func(sc *scenario, cli benchdata.CLI) []contender {
		var cs []contender
		for _, base := range append([]contender{cAgentcli}, variantContenders(c)...) {
			cs = append(cs, base)
			if sc.slow == 0 {
				cs = append(cs, base+dropRawSuffix)
			}
			if sc.huge {
				cs = append(cs, base+everyRawSuffix)
			}
		}
		if node != "" && tsSDK(cli) != "" {
			cs = append(cs, cTS)
		}
		if sc.slow == 0 {
			cs = append(cs, cBare, cFloor)
		}
		return cs
	}
	samples := map[key][]sample{}
	start := time.Now()
	for round := range c.rounds {
		for si, sc := range scs {
			for _, cli := range c.clis {
				cs := contenders(sc, cli)
				for i := range cs { // rotate the order every round
					ct := cs[(i+round)%len(cs)]
					fmt.Fprintf(log, "bench: round %d/%d, %s, %s, %s\n", round+1, c.rounds, sc.name, cli, ct)
					s, err := runOne(ctx, c, ct, cli, sc, fake, runner, node)
					if err != nil {
						return "", fmt.Errorf("%s, %s, %s: %v", sc.name, cli, ct, err)
					}
					samples[key{si, cli, ct}] = append(samples[key{si, cli, ct}], s)
				}
			}
		}
	}
	return report(c, scs, samples, contenders, time.Since(start)), nil
}

func runOne(ctx context.Context, c config, ct contender, cli benchdata.CLI, sc *scenario, fake, runner, node string) (sample, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var cmd *exec.Cmd
	switch ct {
	case cTS:
		args := []string{filepath.Join(c.nodeDir, "run.mjs"), string(cli), fake}
		if sc.slow > 0 {
			args = append(args, strconv.Itoa(sc.slow))
		}
		cmd = exec.CommandContext(ctx, node, args...)
		cmd.Dir = c.nodeDir
	default:
		mode := map[contender]string{cBare: "bare", cFloor: "floor"}[ct]
		bin, dropRaw, maxRaw := runner, false, 0
		if mode == "" {
			mode = "agentcli"
			base := strings.TrimSuffix(strings.TrimSuffix(string(ct), string(dropRawSuffix)), string(everyRawSuffix))
			if name, ok := strings.CutPrefix(base, string(cAgentcli)+" ["); ok {
				bin = c.variants[strings.TrimSuffix(name, "]")]
			}
			dropRaw = strings.HasSuffix(string(ct), string(dropRawSuffix))
			if strings.HasSuffix(string(ct), string(everyRawSuffix)) {
				maxRaw = -1
			}
		}
		cmd = exec.CommandContext(ctx, bin, "-mode", mode, "-cli", string(cli), "-fake", fake, "-slow-events", strconv.Itoa(sc.slow),
			"-drop-raw="+strconv.FormatBool(dropRaw), "-max-raw="+strconv.Itoa(maxRaw))
	}
	cmd.Env = append(os.Environ(), "BENCH_FAKE_CLI="+string(cli), "BENCH_FAKE_BYTES="+strconv.FormatInt(sc.size, 10),
		"GORACE=atexit_sleep_ms=0") // race-built binaries (the smoke test) otherwise sleep 1 s at exit
	if sc.huge {
		cmd.Env = append(cmd.Env, "BENCH_FAKE_FILE="+sc.files[cli])
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return sample{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return sample{}, err
	}
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	line, rerr := bufio.NewReader(stdout).ReadBytes('\n')
	rss := vmHWM(cmd.Process.Pid)
	stdin.Close()
	werr := cmd.Wait()
	var s sample
	if err := json.Unmarshal(line, &s); err != nil {
		return s, fmt.Errorf("bad report %q (%v, %v): %s", line, rerr, werr, tail(stderr.String()))
	}
	if s.Err != "" {
		return s, fmt.Errorf("%s; stderr: %s", s.Err, tail(stderr.String()))
	}
	s.RSSKB = rss
	return s, nil
}

// vmHWM returns the peak resident set size of a live process, in KiB.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func tail(s string) string {
	if len(s) > 1000 {
		s = s[len(s)-1000:]
	}
	return strings.TrimSpace(s)
}

// moduleRoot finds the folder of go.mod, from the working directory up.
func moduleRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

func human(n int64) string {
	switch {
	case n >= 1e9 && n%1e9 == 0:
		return fmt.Sprintf("%d GB", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%g MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%g KB", float64(n)/1e3)
}
