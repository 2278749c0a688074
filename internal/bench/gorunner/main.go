// Command gorunner is one contender of the throughput benchmark
// (internal/bench). It consumes one run of a fake CLI and prints one
// JSON line of measurements to stdout, then waits for its stdin to close,
// so that the driver can read its peak RSS from /proc before it exits.
//
// Modes:
//
//	agentcli  agentcli.Open(cli, &Options{Path: fake}) and Stream, as a
//	          user writes it: every event yielded, Raw kept (with
//	          -drop-raw: Request.DropRaw; -max-raw N: Request.MaxRawBytes)
//	bare      a bare os/exec baseline: start the fake, read its lines, no
//	          parsing (the time to the first line is the floor for agentcli's
//	          time to first event)
//	floor     fake | cat > /dev/null: the ceiling of any pipe reader
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
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/agentcli/agentcli"
	_ "github.com/agentcli/agentcli/claude"
	_ "github.com/agentcli/agentcli/codex"
	_ "github.com/agentcli/agentcli/gemini"
	_ "github.com/agentcli/agentcli/opencode"
)

// Result is what a contender reports; the node runner prints the same.
type Result struct {
	WallNS int64  `json:"wall_ns"`
	TTFENS int64  `json:"ttfe_ns"`
	Events int64  `json:"events"`
	Bytes  int64  `json:"bytes,omitempty"` // bytes of Raw seen (agentcli without -drop-raw), or read (bare)
	Err    string `json:"err,omitempty"`
}

func main() {
	mode := flag.String("mode", "agentcli", "agentcli, bare or floor")
	cli := flag.String("cli", "claude", "backend name")
	fake := flag.String("fake", "", "path of the fake CLI")
	slow := flag.Int("slow-events", 0, "if > 0: sleep 1 ms per event and stop after this many events")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	memProfile := flag.String("memprofile", "", "write an allocation profile of the run to this file")
	dropRaw := flag.Bool("drop-raw", false, "agentcli mode: set Request.DropRaw")
	maxRaw := flag.Int("max-raw", 0, "agentcli mode: Request.MaxRawBytes (-1: keep every Raw)")
	flag.Parse()
	if *memProfile != "" {
		runtime.MemProfileRate = 64 << 10
		defer func() {
			if f, err := os.Create(*memProfile); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0) //nolint:errcheck // best effort
				f.Close()
			}
		}()
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			pprof.StartCPUProfile(f) //nolint:errcheck // best effort
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	var r Result
	var err error
	switch *mode {
	case "agentcli":
		r, err = runAgentcli(*cli, *fake, *slow, *dropRaw, *maxRaw)
	case "bare":
		r, err = runBare(*cli, *fake)
	case "floor":
		r, err = runFloor(*cli, *fake)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		r.Err = err.Error()
	}
	b, _ := json.Marshal(r)
	os.Stdout.Write(append(b, '\n'))
	io.Copy(io.Discard, os.Stdin) // the driver reads /proc/<pid>/status, then closes stdin
}

func runAgentcli(cli, fake string, slow int, dropRaw bool, maxRaw int) (Result, error) {
	var r Result
	// The fake needs no credential; the backend, which checks for one
	// before it starts a CLI, is given one.
	b, err := agentcli.Open(cli, &agentcli.Options{Path: fake, Env: credentials})
	if err != nil {
		return r, err
	}
	req := &agentcli.Request{Prompt: "Fix the failing tests.", DropRaw: dropRaw, MaxRawBytes: maxRaw}
	start := time.Now()
	var res *agentcli.Result
	for ev, err := range b.Stream(context.Background(), req) {
		if r.Events == 0 {
			r.TTFENS = int64(time.Since(start))
		}
		if err != nil {
			return r, err
		}
		r.Events++
		r.Bytes += int64(len(ev.Raw))
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
		if slow > 0 {
			time.Sleep(time.Millisecond)
			if r.Events >= int64(slow) {
				r.WallNS = int64(time.Since(start))
				return r, nil
			}
		}
	}
	r.WallNS = int64(time.Since(start))
	if res == nil {
		return r, errors.New("no result event")
	}
	return r, nil
}

// credentials sets a credential variable of each CLI the runner may run.
// They are spelled out here rather than taken from internal/fakecli, whose
// test machinery (drivertest, rapid, encoding/gob, text/template) a
// program using agentcli does not link: linked, it costs the runner about
// 2.5 MB of peak RSS (the binary's pages and rapid's tables) that a user's
// program would not pay.
var credentials = []string{"ANTHROPIC_API_KEY=bench", "CODEX_API_KEY=bench", "GEMINI_API_KEY=bench", "OPENCODE_API_KEY=bench"}

// stdinFor returns what agentcli writes to the CLI's stdin, so that the
// baselines feed the fake the same input.
func stdinFor(cli string) ([]byte, []string) {
	if cli == "claude" {
		return []byte(`{"type":"user","message":{"role":"user","content":"Fix the failing tests."},"parent_tool_use_id":null,"session_id":""}` + "\n"),
			[]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}
	}
	return nil, nil
}

func runBare(cli, fake string) (Result, error) {
	var r Result
	in, args := stdinFor(cli)
	start := time.Now()
	cmd := exec.Command(fake, args...)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	if err := cmd.Start(); err != nil {
		return r, err
	}
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if r.Events == 0 && len(line) > 0 {
			r.TTFENS = int64(time.Since(start))
		}
		r.Bytes += int64(len(line))
		if err == nil {
			r.Events++
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != io.EOF {
			return r, err
		}
		break
	}
	err = cmd.Wait()
	r.WallNS = int64(time.Since(start))
	return r, err
}

func runFloor(cli, fake string) (Result, error) {
	var r Result
	in, args := stdinFor(cli)
	start := time.Now()
	src := exec.Command(fake, args...)
	src.Stdin = bytes.NewReader(in)
	sink := exec.Command("cat")
	pr, pw, err := os.Pipe()
	if err != nil {
		return r, err
	}
	src.Stdout = pw
	sink.Stdin = pr
	if err := sink.Start(); err != nil {
		return r, err
	}
	if err := src.Start(); err != nil {
		return r, err
	}
	pw.Close()
	pr.Close()
	err = errors.Join(src.Wait(), sink.Wait())
	r.WallNS = int64(time.Since(start))
	return r, err
}
