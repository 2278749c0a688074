package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// BenchmarkCLIRSS measures what one CLI process costs a worker, for
// sizing MaxRuns: the peak resident memory of a one-shot run's process
// tree, and of a live session idle after one turn, for each pinned CLI
// against the scripted model server (no network needed; run it in a
// private network namespace as root):
//
//	unshare -n sh -c 'ip link set lo up && cd cluster && GOPROXY=off \
//	  go test -run "^$" -bench CLIRSS -benchtime 3x ./cmd/agentcli-worker'
func BenchmarkCLIRSS(b *testing.B) {
	bin, err := filepath.Abs(filepath.Join("..", "..", "..", "tools", "clis", "node_modules", ".bin"))
	if err != nil {
		b.Fatal(err)
	}
	for _, cli := range []string{"claude", "codex", "gemini", "opencode"} {
		b.Run(cli, func(b *testing.B) {
			path := filepath.Join(bin, cli)
			if _, err := os.Stat(path); err != nil {
				b.Skip("not installed: scripts/install-clis.sh")
			}
			be, err := agentcli.Open(cli, &agentcli.Options{Path: path})
			if err != nil {
				b.Fatal(err)
			}
			var peakRun, idle float64
			for b.Loop() {
				srv := agentclitest.NewServer()
				w, err := srv.Wire(cli, b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				req := func(tag string) *agentcli.Request {
					return &agentcli.Request{Prompt: "say hi", Dir: w.Dir, ReplaceEnv: true,
						Env: append(append([]string(nil), w.Env...), rssTag+"="+tag), ExtraArgs: w.Args,
						Timeout: 2 * time.Minute}
				}
				ctx := context.Background()
				srv.Push(agentclitest.Turn{Text: "hi"})
				tag := newRSSTag()
				stop := watchRSS(tag)
				if _, err := be.Run(ctx, req(tag)); err != nil {
					b.Fatalf("run: %v", err)
				}
				peakRun += stop()

				srv.Push(agentclitest.Turn{Text: "hi"})
				tag = newRSSTag()
				s, err := agentcli.StartSession(ctx, be, req(tag))
				if err != nil {
					b.Fatalf("session: %v", err)
				}
				if _, err := s.Run(ctx, "say hi"); err != nil {
					b.Fatalf("turn: %v", err)
				}
				time.Sleep(2 * time.Second)
				idle += rssOf(tag)
				_ = s.Close()
				srv.Close()
			}
			b.ReportMetric(peakRun/float64(b.N), "MiB-peak-run")
			b.ReportMetric(idle/float64(b.N), "MiB-idle-session")
		})
	}
}

const rssTag = "AGENTCLI_RSS_BENCH"

func newRSSTag() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// rssOf sums the resident memory, in MiB, of the processes whose
// environment carries the tag.
func rssOf(tag string) float64 {
	needle := "\x00" + rssTag + "=" + tag + "\x00"
	ents, _ := os.ReadDir("/proc")
	kb := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !strings.Contains("\x00"+string(env), needle) {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
				kb += n
			}
		}
	}
	return float64(kb) / 1024
}

// watchRSS samples rssOf every 20 ms until the returned function is
// called, which returns the peak.
func watchRSS(tag string) func() float64 {
	var mu sync.Mutex
	peak := 0.0
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			r := rssOf(tag)
			mu.Lock()
			peak = max(peak, r)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() float64 {
		close(done)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}
