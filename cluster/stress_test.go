package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// TestStressKillsAndRestart runs 300 scripted runs, in 30 conversations
// of 10 turns each (8 as live sessions, 22 as one-shot runs resuming
// their session), on 3 workers while workers are killed at random (and
// replaced by fresh ones with empty disks) and the NATS server restarts
// once, a third of the way. It checks:
//
//   - nothing lost: every call returns, with success or a
//     *WorkerLostError for a run its worker had started (and only when a
//     worker was killed); work whose worker died before starting it runs
//     elsewhere (a *WorkerLostError with Started false only once
//     maxResubmits workers in a row died so: kills this frequent do
//     that, rarely, on a loaded machine);
//   - nothing run twice: no prompt reaches a CLI twice, and every
//     successful one exactly once;
//   - per-session order: the turns of each session ran in the order they
//     were sent, each finding its session's earlier successful turns, in
//     order (so the sessions moved between workers with their history).
func TestStressKillsAndRestart(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := testingSeed(); s != 0 {
		seed = s
	}
	t.Logf("seed %d (CLUSTER_STRESS_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	const (
		sessions = 30
		live     = 8
		turns    = 10
	)
	n := startNATS(t)
	log := &turnLog{}
	porter := &fakePorter{}
	reply := agentclitest.Reply("fine", "x")
	reply.Delay = 5 * time.Millisecond

	// Workers' and the pool's warnings, in the test's log.
	warnings := slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var wmu sync.Mutex
	workers := map[string]*testWorker{}
	nextWorker := 0
	spawn := func() {
		wmu.Lock()
		nextWorker++
		name := "W" + strconv.Itoa(nextWorker)
		wmu.Unlock()
		o := testWorkerOptions()
		o.ID, o.Sessions, o.MaxRuns = name, porter, 8
		o.Logger = warnings
		tw := startWorker(t, n, newTranscriptBackend(name, log, reply), o)
		wmu.Lock()
		workers[name] = tw
		wmu.Unlock()
	}
	for range 3 {
		spawn()
	}
	po := testOptions()
	po.Logger = warnings
	b := newPoolBackend(t, n, po)

	// The chaos: kills every 50-250 ms, a NATS restart after a third of
	// the runs.
	var finished atomic.Int64
	var kills, restarts atomic.Int64
	stop := make(chan struct{})
	// Halfway through, every conversation waits for the second kill: a
	// kill or a spawn can take seconds around the NATS restart, and the
	// chaos must strike while runs are under way, not after.
	twoKills := make(chan struct{})
	chaosDone := make(chan struct{})
	restartDone := make(chan struct{})
	go func() {
		defer close(restartDone)
		for finished.Load() < sessions*turns/3 {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
		n.restart()
		restarts.Add(1)
	}()
	go func() {
		defer close(chaosDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(50+rng.IntN(200)) * time.Millisecond):
			}
			wmu.Lock()
			names := make([]string, 0, len(workers))
			for name := range workers {
				names = append(names, name)
			}
			slices.Sort(names)
			victim := workers[names[rng.IntN(len(names))]]
			delete(workers, victim.w.ID())
			wmu.Unlock()
			_ = victim.kill()
			if kills.Add(1) == 2 {
				close(twoKills)
			}
			spawn()
		}
	}()

	type outcome struct {
		prompt  string
		session string // the CLI session it ran in, when it succeeded
		err     error
	}
	results := make([][]outcome, sessions)
	var dumpOnce sync.Once
	var wg sync.WaitGroup
	for k := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			go func() {
				// A conversation this slow is stuck: show where.
				select {
				case <-time.After(90 * time.Second):
					dumpOnce.Do(func() {
						buf := make([]byte, 1<<23)
						buf = buf[:runtime.Stack(buf, true)]
						t.Errorf("conversation %d still running after 90 s; goroutines:\n%s", k, buf)
					})
				case <-ctx.Done():
				}
			}()
			var s agentcli.Session
			sid := ""
			for i := range turns {
				if i == turns/2 {
					select {
					case <-twoKills:
					case <-ctx.Done():
					}
				}
				prompt := fmt.Sprintf("s%02d-t%02d", k, i)
				var res *agentcli.Result
				var err error
				if k < live {
					for s == nil && ctx.Err() == nil {
						s, err = b.StartSession(ctx, &agentcli.Request{})
						if err != nil && !errors.Is(err, ErrWorkerLost) {
							break
						}
					}
					if s != nil {
						res, err = s.Run(ctx, prompt)
					}
				} else {
					res, err = b.Run(ctx, &agentcli.Request{Prompt: prompt, SessionID: sid})
				}
				o := outcome{prompt: prompt, err: err}
				if err == nil {
					o.session = res.SessionID
					sid = res.SessionID
				}
				results[k] = append(results[k], o)
				finished.Add(1)
			}
			if s != nil {
				_ = s.Close()
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-chaosDone
	<-restartDone
	if restarts.Load() == 0 {
		t.Error("the NATS server never restarted")
	}
	if kills.Load() < 2 {
		t.Errorf("only %d kills", kills.Load())
	}
	t.Logf("%d kills, %d restart", kills.Load(), restarts.Load())

	// Nothing lost: every call returned, successfully or with a lost
	// worker.
	succeeded := map[string]string{} // prompt → session
	lost, lostUnstarted, notSaved := 0, 0, 0
	for _, rs := range results {
		for _, o := range rs {
			var wl *WorkerLostError
			switch {
			case o.err == nil:
				succeeded[o.prompt] = o.session
			case errors.As(o.err, &wl):
				lost++
				if !wl.Started {
					lostUnstarted++
					t.Logf("%s: lost before starting: %v", o.prompt, o.err)
					if wl.tries < maxResubmits {
						t.Errorf("%s: lost before starting by %d worker(s): it should have been handed to %d",
							o.prompt, wl.tries, maxResubmits)
					}
				}
			case errors.Is(o.err, ErrSessionNotSaved):
				notSaved++ // ran, told so; not counted as part of the history
			default:
				t.Errorf("%s: %v (%T)", o.prompt, o.err, o.err)
			}
		}
	}
	t.Logf("%d succeeded, %d lost with their worker (%d before starting), %d not saved",
		len(succeeded), lost, lostUnstarted, notSaved)
	if notSaved > 0 {
		t.Errorf("%d sessions not saved: a NATS restart should only delay saving", notSaved)
	}
	if lost > 0 && kills.Load() == 0 {
		t.Error("runs lost without a kill")
	}
	if len(succeeded) < sessions*turns/2 {
		t.Errorf("only %d of %d runs succeeded", len(succeeded), sessions*turns)
	}

	// Nothing run twice; every success ran once.
	ran := map[string]int{}
	bySession := map[string][]turnRecord{}
	for _, r := range log.all() {
		ran[r.Prompt]++
		bySession[r.Session] = append(bySession[r.Session], r)
	}
	for p, c := range ran {
		if c > 1 {
			t.Errorf("%s ran %d times", p, c)
		}
	}
	for p := range succeeded {
		if ran[p] != 1 {
			t.Errorf("%s succeeded but ran %d times", p, ran[p])
		}
	}

	// Per-session order and history.
	for sess, recs := range bySession {
		for i, r := range recs {
			if i > 0 && recs[i-1].Prompt >= r.Prompt {
				t.Errorf("session %s: %s ran after %s", sess, r.Prompt, recs[i-1].Prompt)
			}
			if !slices.IsSorted(r.History) || slices.Contains(r.History, r.Prompt) {
				t.Errorf("session %s: %s found history %v", sess, r.Prompt, r.History)
			}
			for _, earlier := range recs[:i] {
				if succeeded[earlier.Prompt] == sess && !slices.Contains(r.History, earlier.Prompt) {
					t.Errorf("session %s: %s did not find the earlier successful turn %s in %v",
						sess, r.Prompt, earlier.Prompt, r.History)
				}
			}
			for _, h := range r.History {
				if !strings.HasPrefix(h, r.Prompt[:4]) {
					t.Errorf("session %s: %s found a turn of another conversation: %s", sess, r.Prompt, h)
				}
			}
		}
	}
	if porter.crossings() == 0 {
		t.Error("no session moved between workers")
	}
	t.Logf("%d archives crossed workers", porter.crossings())
}

// testingSeed reads CLUSTER_STRESS_SEED.
func testingSeed() uint64 {
	s, _ := strconv.ParseUint(getenv("CLUSTER_STRESS_SEED"), 10, 64)
	return s
}

type tlogWriter struct{ t *testing.T }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
