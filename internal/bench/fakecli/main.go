// Command fakecli stands in for claude, codex, gemini or opencode in the
// throughput benchmark (internal/bench): it prints a synthetic stream
// of the CLI's output from internal/benchdata as fast as the pipe takes it.
//
// It is configured by its environment, which both agentcli and the
// TypeScript SDKs pass on to the CLI they start:
//
//	BENCH_FAKE_CLI    claude, codex, gemini or opencode
//	BENCH_FAKE_BYTES  stream size in bytes (at least; whole turns are written)
//	BENCH_FAKE_FILE   if set, print this file instead of a generated stream
//
// Before printing it reads its input as the real CLI would: claude in
// stream-json input mode reads lines up to the user message, answering an
// initialize control_request on the way (the Agent SDK sends one); the
// others read stdin to its end.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcli/agentcli/internal/benchdata"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakecli:", err)
		os.Exit(1)
	}
}

func run() error {
	cli := benchdata.CLI(os.Getenv("BENCH_FAKE_CLI"))
	if !slices.Contains(benchdata.CLIs, cli) {
		return fmt.Errorf("BENCH_FAKE_CLI=%q: want one of %v", cli, benchdata.CLIs)
	}
	if slices.Contains(os.Args[1:], "--version") {
		fmt.Println("0.0.0 (agentcli bench fake)")
		return nil
	}
	out := bufio.NewWriterSize(os.Stdout, 256<<10)
	if cli == benchdata.Claude && streamJSONInput(os.Args[1:]) {
		if err := claudeInput(os.Stdin, out); err != nil {
			return err
		}
	} else if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		return err
	}
	if name := os.Getenv("BENCH_FAKE_FILE"); name != "" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := out.Flush(); err != nil {
			return err
		}
		_, err = io.Copy(os.Stdout, f)
		return err
	}
	size, err := strconv.ParseInt(os.Getenv("BENCH_FAKE_BYTES"), 10, 64)
	if err != nil {
		return fmt.Errorf("BENCH_FAKE_BYTES: %v", err)
	}
	g, err := benchdata.New(cli)
	if err != nil {
		return err
	}
	if _, _, err := g.WriteStream(out, size); err != nil {
		return err
	}
	return out.Flush()
}

func streamJSONInput(args []string) bool {
	for i, a := range args {
		if a == "--input-format=stream-json" || a == "--input-format" && i+1 < len(args) && args[i+1] == "stream-json" {
			return true
		}
	}
	return false
}

// claudeInput reads stream-json input up to the first user message,
// answering control requests.
func claudeInput(r io.Reader, out *bufio.Writer) error {
	in := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var msg struct {
				Type      string `json:"type"`
				RequestID string `json:"request_id"`
			}
			if jerr := json.Unmarshal(line, &msg); jerr != nil {
				return fmt.Errorf("stdin: %v", jerr)
			}
			switch msg.Type {
			case "user":
				return nil
			case "control_request":
				id, _ := json.Marshal(msg.RequestID)
				fmt.Fprintf(out, `{"type":"control_response","response":{"subtype":"success","request_id":%s,"response":{}}}`+"\n", id)
				if err := out.Flush(); err != nil {
					return err
				}
			}
		}
		if err == io.EOF {
			return nil // no user message: print anyway
		}
		if err != nil {
			return err
		}
	}
}
