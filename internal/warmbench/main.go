// Command warmbench measures, on the real pinned CLIs against
// agentclitest's scripted model server, how long a prompt waits for its
// first event: on a cold one-shot run (the CLI starts after the prompt),
// on the first turn of a warm session (agentcli.Pool: the CLI and its
// handshake started before the prompt existed) and on a later turn of the
// same session. It prints the medians side by side.
//
//	go run ./internal/warmbench [-clis claude,codex,gemini,opencode] [-n 3]
//
// The CLIs come from tools/clis/node_modules/.bin (scripts/install-clis.sh).
// Run it where nothing can leave the machine, as root in a private network
// namespace:
//
//	unshare -n sh -c 'ip link set lo up && go run ./internal/warmbench'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	_ "github.com/agentcli/agentcli/claude"
	_ "github.com/agentcli/agentcli/codex"
	_ "github.com/agentcli/agentcli/gemini"
	_ "github.com/agentcli/agentcli/opencode"
)

func main() {
	clis := flag.String("clis", "claude,codex,gemini,opencode", "the CLIs to measure")
	n := flag.Int("n", 3, "measurements of each kind per CLI (medians are printed)")
	bin := flag.String("bin", "tools/clis/node_modules/.bin", "the directory of the pinned CLIs")
	flag.Parse()
	fmt.Printf("time from the prompt to the first event (median of %d, ms)\n\n", *n)
	fmt.Printf("%-9s %10s %12s %12s %14s\n", "cli", "cold", "warm 1st", "later turn", "warm start")
	for _, cli := range strings.Split(*clis, ",") {
		r, err := measure(cli, filepath.Join(*bin, cli), *n)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", cli, err)
			os.Exit(1)
		}
		fmt.Printf("%-9s %10s %12s %12s %14s\n", cli, ms(r.cold), ms(r.warm), ms(r.later), ms(r.start))
	}
}

type result struct{ cold, warm, later, start []time.Duration }

func ms(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("%.0f", float64(s[len(s)/2])/float64(time.Millisecond))
}

// first returns how long the first event of seq took to arrive, reading
// the rest.
func first(seq func(func(agentcli.Event, error) bool), start time.Time) (time.Duration, error) {
	var d time.Duration
	var rerr error
	for ev, err := range seq {
		if err != nil {
			rerr = err
			break
		}
		if d == 0 {
			d = time.Since(start)
		}
		_ = ev
	}
	return d, rerr
}

func measure(cli, path string, n int) (*result, error) {
	ctx := context.Background()
	var r result
	for range n {
		srv := agentclitest.NewServer()
		defer srv.Close()
		home, err := os.MkdirTemp("", "warmbench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(home)
		w, err := srv.Wire(cli, home)
		if err != nil {
			return nil, err
		}
		b, err := agentcli.Open(cli, &agentcli.Options{Path: path})
		if err != nil {
			return nil, err
		}
		// Cold: a one-shot run.
		srv.Push(agentclitest.Turn{Text: "cold answer"})
		req := &agentcli.Request{Prompt: "hello", Timeout: 2 * time.Minute}
		w.Apply(req)
		t0 := time.Now()
		d, err := first(b.Stream(ctx, req), t0)
		if err != nil {
			return nil, fmt.Errorf("cold run: %w", err)
		}
		r.cold = append(r.cold, d)
		// Warm: a session started before the prompt, as a Pool keeps
		// them (StartSession itself, so that no replacement boots while
		// the turn is timed).
		preq := &agentcli.Request{Timeout: 2 * time.Minute}
		w.Apply(preq)
		t0 = time.Now()
		s, err := agentcli.StartSession(ctx, b, preq)
		if err != nil {
			return nil, fmt.Errorf("start: %w", err)
		}
		r.start = append(r.start, time.Since(t0))
		srv.Push(agentclitest.Turn{Text: "warm answer"}, agentclitest.Turn{Text: "later answer"})
		t0 = time.Now()
		d, err = first(s.Stream(ctx, "hello"), t0)
		if err != nil {
			return nil, fmt.Errorf("warm turn: %w", err)
		}
		r.warm = append(r.warm, d)
		t0 = time.Now()
		d, err = first(s.Stream(ctx, "and again"), t0)
		if err != nil {
			return nil, fmt.Errorf("later turn: %w", err)
		}
		r.later = append(r.later, d)
		s.Close()
	}
	return &r, nil
}
