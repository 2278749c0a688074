package drivertest

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// FaultMatrix runs every fault case against k's backend on the fake CLI,
// each a subtest, one after another (they check process and goroutine
// state globally). The scripts are k's Success, Partial and Truncated
// lines with faults around them; the backend must
//
//   - succeed on a Success run (Result.Text and SessionID as scripted)
//     whatever else happens: descendants that hold its pipes or escape
//     its process group, a 10 MB stderr flood, a 100 MB line (an
//     *agentcli.LineTooLongError notice), noise that is not JSON,
//     invalid UTF-8, and lines of JSON with an unknown "type" or none
//     (each surfacing once, as an EventUnknown or EventNotice with the
//     line in Raw);
//   - fail a run that crashes (an *agentcli.ExitError with the stderr
//     tail, secrets redacted), exits 0 without its terminal event or cuts
//     it short (agentcli.ErrNoResult), hangs (an *agentcli.TimeoutError
//     after Request.Timeout, SIGTERM ignored or not), or has no binary
//     (an *agentcli.BinaryError);
//   - honour cancellation (an *agentcli.CanceledError, no event after the
//     cancel, within the kill grace), a caller that breaks out of the loop
//     or panics in a callback, and a caller that keeps only the Result
//     (no line kept alive);
//
// and every case ends with every process the fake started reaped, no
// goroutine of the driver left and no file of Kit.TempPrefix left in
// os.TempDir.
func FaultMatrix(t *testing.T, k Kit) {
	const sess = "sess-fault-1"
	ok := func(t *testing.T, evs []agentcli.Event, err error, text string) {
		t.Helper()
		if err != nil {
			t.Fatalf("run failed: %v", err)
		}
		if len(evs) == 0 || evs[len(evs)-1].Kind != agentcli.EventResult {
			t.Fatalf("last event is not a result: %+v", evs)
		}
		r := evs[len(evs)-1].Result
		if r.Text != text || r.SessionID != sess {
			t.Fatalf("result text %q session %q; want %q %q", r.Text, r.SessionID, text, sess)
		}
	}
	countNotices := func(evs []agentcli.Event, target error) int {
		n := 0
		for _, ev := range evs {
			if ev.Kind == agentcli.EventNotice && ev.Err != nil && errors.Is(ev.Err, target) {
				n++
			}
		}
		return n
	}
	type tc struct {
		name    string
		script  []string
		opts    *agentcli.Options
		timeout time.Duration
		check   func(t *testing.T, evs []agentcli.Event, err error, elapsed time.Duration)
		// escapes: the script starts a process without the run tag (after
		// cleanenv) outside the CLI's group, which agentcli cannot find by
		// design; the test kills it before checking that the rest is reaped.
		escapes bool
	}
	// The fault cases run with KillGrace 300ms (Setup). A run must end
	// within KillGrace + 1 s of the CLI's exit whatever escaped descendants
	// do; the failure mode is "forever", so the assertion has slack.
	const grace = 300 * time.Millisecond
	bounded := func(t *testing.T, elapsed, bound time.Duration) {
		t.Helper()
		if elapsed > bound+boundSlack {
			t.Fatalf("run took %v; want at most %v (+%v slack)", elapsed, bound, boundSlack)
		}
	}
	cases := []tc{
		{
			name:   "success",
			script: k.Success("hello", sess),
			check: func(t *testing.T, evs []agentcli.Event, err error, _ time.Duration) {
				ok(t, evs, err, "hello")
			},
		},
		{
			name:   "crash mid-stream",
			script: concat(k.Partial(sess), []string{"err panic: boom", "exit 2"}),
			check: func(t *testing.T, _ []agentcli.Event, err error, _ time.Duration) {
				var ee *agentcli.ExitError
				if !errors.As(err, &ee) || ee.Code != 2 || !errors.Is(err, agentcli.ErrExit) {
					t.Fatalf("err = %v; want *ExitError with code 2", err)
				}
				if !strings.Contains(ee.Stderr, "panic: boom") {
					t.Fatalf("stderr tail %q lacks the CLI's message", ee.Stderr)
				}
			},
		},
		{
			name:   "exit 0 without result",
			script: concat(k.Partial(sess), []string{"exit 0"}),
			check: func(t *testing.T, _ []agentcli.Event, err error, _ time.Duration) {
				if !errors.Is(err, agentcli.ErrNoResult) || errors.Is(err, agentcli.ErrExit) {
					t.Fatalf("err = %v; want ErrNoResult only", err)
				}
			},
		},
		{
			name:    "silent hang",
			script:  []string{"hang"},
			timeout: 2 * time.Second, // long enough for a -race fake on a loaded machine to start
			check: func(t *testing.T, _ []agentcli.Event, err error, elapsed time.Duration) {
				var te *agentcli.TimeoutError
				if !errors.As(err, &te) || !errors.Is(err, agentcli.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("err = %v; want *TimeoutError", err)
				}
				if !strings.Contains(err.Error(), "query timed out") {
					t.Fatalf("message %q", err)
				}
			},
		},
		{
			name:    "child ignores SIGTERM",
			script:  concat(k.Partial(sess), []string{"ignoreterm", "hang"}),
			timeout: 2 * time.Second, // long enough for a -race fake on a loaded machine to start
			check: func(t *testing.T, _ []agentcli.Event, err error, _ time.Duration) {
				if !errors.Is(err, agentcli.ErrTimeout) {
					t.Fatalf("err = %v; want ErrTimeout", err)
				}
			},
		},
		{
			name:   "grandchild holds stdout after child exits",
			script: concat([]string{"grandchild 60s"}, k.Success("hello", sess), []string{"exit 0"}),
			check: func(t *testing.T, evs []agentcli.Event, err error, elapsed time.Duration) {
				ok(t, evs, err, "hello")
				if elapsed > 30*time.Second {
					t.Fatalf("run took %v: waited for the grandchild", elapsed)
				}
			},
		},
		{
			// Escaped (setsid) but carrying the run tag: found and killed.
			name:   "escaped descendant holds stdout",
			script: concat([]string{"escapee 20s"}, k.Success("hello", sess), []string{"exit 0"}),
			check: func(t *testing.T, evs []agentcli.Event, err error, elapsed time.Duration) {
				ok(t, evs, err, "hello")
				bounded(t, elapsed, grace+time.Second)
			},
		},
		{
			name:   "escaped writer keeps writing to stdout",
			script: concat([]string{"escapee-writer 10ms 60s"}, k.Success("hello", sess), []string{"exit 0"}),
			check: func(t *testing.T, evs []agentcli.Event, err error, elapsed time.Duration) {
				ok(t, evs, err, "hello")
				bounded(t, elapsed, grace+time.Second)
			},
		},
		{
			name:    "untagged escaped writer keeps writing to stdout",
			script:  concat([]string{"cleanenv", "escapee-writer 10ms 60s"}, k.Success("hello", sess), []string{"exit 0"}),
			escapes: true,
			check: func(t *testing.T, evs []agentcli.Event, err error, elapsed time.Duration) {
				ok(t, evs, err, "hello")
				bounded(t, elapsed, grace+time.Second)
			},
		},
		{
			name:   "daemon keeps writing to stderr",
			script: concat([]string{"daemon-stderr 10ms 60s"}, k.Success("hello", sess), []string{"exit 0"}),
			check: func(t *testing.T, evs []agentcli.Event, err error, elapsed time.Duration) {
				ok(t, evs, err, "hello")
				bounded(t, elapsed, grace+time.Second)
			},
		},
		{
			name:    "untagged daemon keeps writing to stderr",
			script:  concat([]string{"cleanenv", "daemon-stderr 10ms 60s"}, k.Success("hello", sess), []string{"exit 0"}),
			escapes: true,
			check: func(t *testing.T, evs []agentcli.Event, err error, elapsed time.Duration) {
				ok(t, evs, err, "hello")
				bounded(t, elapsed, grace+time.Second)
			},
		},
		{
			name:    "untagged silent daemon holds stdout",
			script:  concat([]string{"cleanenv", "silent-daemon 60s"}, k.Success("hello", sess), []string{"exit 0"}),
			escapes: true,
			check: func(t *testing.T, evs []agentcli.Event, err error, elapsed time.Duration) {
				ok(t, evs, err, "hello")
				bounded(t, elapsed, grace+time.Second)
			},
		},
		{
			name:   "timeout while an untagged escapee writes and the CLI ignores SIGTERM",
			script: concat([]string{"cleanenv", "escapee-writer 5ms 60s"}, k.Partial(sess), []string{"ignoreterm", "hang"}),
			// Long enough for a -race fake on a busy machine to start
			// and record its pid.
			timeout: 2 * time.Second,
			escapes: true,
			check: func(t *testing.T, _ []agentcli.Event, err error, elapsed time.Duration) {
				if !errors.Is(err, agentcli.ErrTimeout) {
					t.Fatalf("err = %v; want ErrTimeout", err)
				}
				bounded(t, elapsed, 2*time.Second+grace+100*time.Millisecond)
			},
		},
		{
			// What the CLI wrote before it exited reaches a consumer slower
			// than KillGrace (about 64 KB sit in the pipe at exit, read
			// one event per millisecond, with a 10 ms grace).
			name:   "slow consumer loses nothing",
			opts:   &agentcli.Options{KillGrace: 10 * time.Millisecond},
			script: concat(k.Partial(sess), []string{"repeat 400 " + strings.Repeat("n", 1000)}, k.Success("hello", sess), []string{"exit 0"}),
			check: func(t *testing.T, evs []agentcli.Event, err error, _ time.Duration) {
				ok(t, evs, err, "hello")
			},
		},
		{
			name:   "10 MB stderr flood",
			script: concat([]string{"errflood 10000000"}, k.Success("hello", sess)),
			check: func(t *testing.T, evs []agentcli.Event, err error, _ time.Duration) {
				ok(t, evs, err, "hello")
			},
		},
		{
			name:   "10 MB stderr flood then failure",
			script: []string{"errflood 10000000", "err sk-ant-api03-abcdefghijklmnopqrstuvwxyz fatal: it broke", "exit 3"},
			check: func(t *testing.T, _ []agentcli.Event, err error, _ time.Duration) {
				var ee *agentcli.ExitError
				if !errors.As(err, &ee) || ee.Code != 3 {
					t.Fatalf("err = %v; want *ExitError code 3", err)
				}
				if n := len([]rune(ee.Stderr)); n > 500 || !strings.Contains(ee.Stderr, "fatal: it broke") {
					t.Fatalf("stderr tail (%d chars) = %q", n, ee.Stderr)
				}
				if strings.Contains(err.Error(), "abcdefghijklmnop") {
					t.Fatalf("secret not redacted: %v", err)
				}
			},
		},
		{
			name:   "100 MB line",
			script: concat(k.Partial(sess), []string{"bigline 100000000"}, k.Success("hello", sess)),
			check: func(t *testing.T, evs []agentcli.Event, err error, _ time.Duration) {
				ok(t, evs, err, "hello")
				var lt *agentcli.LineTooLongError
				found := false
				for _, ev := range evs {
					if errors.As(ev.Err, &lt) {
						found = lt.Len == 100000000 && lt.Limit == 64<<20
					}
				}
				if !found {
					t.Fatalf("no LineTooLongError{Len:100000000, Limit:64MiB} notice")
				}
			},
		},
		{
			name:   "line over a configured limit",
			opts:   &agentcli.Options{MaxLineBytes: 1 << 20},
			script: concat([]string{"bigline 2000000"}, k.Success("hello", sess)),
			check: func(t *testing.T, evs []agentcli.Event, err error, _ time.Duration) {
				ok(t, evs, err, "hello")
				if countNotices(evs, agentcli.ErrLineTooLong) != 1 {
					t.Fatalf("want exactly one line-too-long notice")
				}
			},
		},
		{
			name:   "non-JSON noise",
			script: concat([]string{"out Loading...", "out WARNING: something"}, k.Success("hello", sess), []string{"out trailing noise"}),
			check: func(t *testing.T, evs []agentcli.Event, err error, _ time.Duration) {
				ok(t, evs, err, "hello")
			},
		},
		{
			name:   "invalid UTF-8",
			script: concat([]string{"badutf8"}, k.Success("hello", sess)),
			check: func(t *testing.T, evs []agentcli.Event, err error, _ time.Duration) {
				ok(t, evs, err, "hello")
			},
		},
		{
			name:   "unknown event types",
			script: concat([]string{`out {"type":"from_the_future","session_id":"x","payload":{"a":[1,2]}}`, `out {"no_type_at_all":true}`}, k.Success("hello", sess)),
			check: func(t *testing.T, evs []agentcli.Event, err error, _ time.Duration) {
				ok(t, evs, err, "hello")
				n := 0
				for _, ev := range evs {
					if (ev.Kind == agentcli.EventUnknown || ev.Kind == agentcli.EventNotice) && strings.Contains(string(ev.Raw), "from_the_future") {
						n++
					}
				}
				if n != 1 {
					t.Fatalf("the unknown line surfaced %d times; want once, raw", n)
				}
			},
		},
		{
			name:   "truncated last line",
			script: k.Truncated(sess),
			check: func(t *testing.T, _ []agentcli.Event, err error, _ time.Duration) {
				if !errors.Is(err, agentcli.ErrNoResult) {
					t.Fatalf("err = %v; want ErrNoResult", err)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			b, dir := k.Setup(t, c.opts, c.script...)
			// Every case carries a system prompt, so backends that put it in
			// a temporary file show that the file is gone on every path.
			req := &agentcli.Request{Prompt: "hi", Timeout: c.timeout, SystemPrompt: k.system()}
			start := time.Now()
			var evs []agentcli.Event
			var err error
			if c.name == "slow consumer loses nothing" {
				evs, err = collectSlowly(context.Background(), b, req, time.Millisecond)
			} else {
				evs, err = Collect(context.Background(), b, req)
			}
			elapsed := time.Since(start)
			if c.escapes {
				// Outside our reach by design; end it here.
				t.Cleanup(func() { killPids(dir) })
			}
			c.check(t, evs, err, elapsed)
			if c.escapes {
				killPids(dir)
			}
			AssertReaped(t, dir)
			AssertNoLeaks(t, k.TempPrefix)
		})
	}

	t.Run("binary missing", func(t *testing.T) {
		b := k.New(&agentcli.Options{Path: filepath.Join(t.TempDir(), "no-such-cli")})
		for _, err := range []error{b.Check(context.Background()), runErr(b)} {
			var be *agentcli.BinaryError
			if !errors.As(err, &be) || !errors.Is(err, agentcli.ErrNotFound) || be.Backend != k.Name {
				t.Fatalf("err = %v; want *BinaryError ErrNotFound naming %s", err, k.Name)
			}
			if !strings.Contains(err.Error(), "no-such-cli") {
				t.Fatalf("error %q does not name the path", err)
			}
		}
	})
	t.Run("binary missing on PATH", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		b := k.New(nil)
		if err := b.Check(context.Background()); !errors.Is(err, agentcli.ErrNotFound) {
			t.Fatalf("err = %v; want ErrNotFound", err)
		}
	})
	t.Run("binary not executable", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "cli")
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		b := k.New(&agentcli.Options{Path: p})
		for _, err := range []error{b.Check(context.Background()), runErr(b)} {
			if !errors.Is(err, agentcli.ErrNotExecutable) {
				t.Fatalf("err = %v; want ErrNotExecutable", err)
			}
		}
	})
	cancelFaults(t, k, sess)
	t.Run("a kept result keeps no line alive", func(t *testing.T) {
		// Lines are read into chunks shared with other lines: a caller
		// that keeps only the Result of a run must not keep them alive.
		text := strings.Repeat("hello ", 40)
		b, dir := k.Setup(t, nil, k.Success(text, sess)...)
		var alive atomic.Int64 // lines watched and not yet collected
		res, ids, lines := keepResultOnly(t, b, &alive)
		if res == nil || res.Text != text {
			t.Fatalf("result %+v; want text %q", res, text)
		}
		if len(ids) == 0 || ids[0] != sess {
			t.Fatalf("session ids %q; want %q", ids, sess)
		}
		if lines == 0 {
			t.Fatal("no event carried a line")
		}
		if n := waitCollected(&alive); n > 0 {
			t.Fatalf("%d of %d events' lines are still alive while only the Result and the session ids are kept", n, lines)
		}
		runtime.KeepAlive(res)
		runtime.KeepAlive(ids)
		runtime.KeepAlive(b)
		AssertReaped(t, dir)
	})
	t.Run("cancel", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		b, dir := k.Setup(t, nil, concat(k.Partial(sess), []string{"hang"})...)
		ctx, cancel := context.WithCancel(context.Background())
		var err error
		for ev, e := range b.Stream(ctx, &agentcli.Request{Prompt: "hi", SystemPrompt: k.system()}) {
			if e != nil {
				err = e
				break
			}
			if ev.SessionID != "" {
				cancel()
			}
		}
		cancel()
		var ce *agentcli.CanceledError
		if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || !errors.Is(err, agentcli.ErrCanceled) {
			t.Fatalf("err = %v; want *CanceledError wrapping context.Canceled", err)
		}
		AssertReaped(t, dir)
		AssertNoLeaks(t, k.TempPrefix)
	})
	t.Run("panic in a callback", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		b, dir := k.Setup(t, nil, concat(k.Success("hello", sess), []string{"hang"})...)
		req := &agentcli.Request{Prompt: "hi", SystemPrompt: k.system(), OnText: func(string) { panic("callback panic") }}
		func() {
			defer func() {
				if r := recover(); r != "callback panic" {
					t.Fatalf("recovered %v", r)
				}
			}()
			b.Run(context.Background(), req)
			t.Fatal("Run returned without the callback panicking")
		}()
		AssertReaped(t, dir)
		AssertNoLeaks(t, k.TempPrefix)
	})
	t.Run("break out of the loop", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		b, dir := k.Setup(t, nil, concat(k.Partial(sess), []string{"ignoreterm", "hang"})...)
		for range b.Stream(context.Background(), &agentcli.Request{Prompt: "hi", SystemPrompt: k.system()}) {
			break
		}
		AssertReaped(t, dir)
		AssertNoLeaks(t, k.TempPrefix)
	})
}

// boundSlack is added to every "returns within" bound: the failure mode
// these bounds guard against is a run that never returns, and the machine
// running the tests may be slow and shared.
const boundSlack = 2 * time.Second

// collectSlowly is Collect with a consumer that sleeps after every event.
func collectSlowly(ctx context.Context, b agentcli.Backend, req *agentcli.Request, per time.Duration) ([]agentcli.Event, error) {
	var evs []agentcli.Event
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
		time.Sleep(per)
	}
	return evs, nil
}

// keepResultOnly runs b and returns its Result and the session ids of
// its events, as a caller that keeps them to resume does, dropping the
// rest of each event; it watches the Raw line of every event but the
// result, counting in alive those not yet collected (see waitCollected),
// and returns how many it watches.
func keepResultOnly(t *testing.T, b agentcli.Backend, alive *atomic.Int64) (*agentcli.Result, []string, int) {
	t.Helper()
	var res *agentcli.Result
	var ids []string
	n := 0
	for ev, err := range b.Stream(context.Background(), &agentcli.Request{Prompt: "hi"}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.SessionID != "" {
			ids = append(ids, ev.SessionID)
		}
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		} else if len(ev.Raw) > 0 {
			alive.Add(1)
			runtime.AddCleanup(&ev.Raw[0], func(struct{}) { alive.Add(-1) }, struct{}{})
			n++
		}
	}
	return res, ids, n
}

// waitCollected collects garbage until the lines keepResultOnly watches
// are gone (alive is zero), for up to about five seconds, and returns how
// many are left.
func waitCollected(alive *atomic.Int64) int64 {
	for i := 0; i < 250 && alive.Load() > 0; i++ {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	return alive.Load()
}

// killPids kills every process the fake started with record directory dir
// that is still alive: on Linux the processes whose environment names dir's
// pid file (the fake and all it starts carry it, also after cleanenv), so a
// recorded pid that died and was reused by an unrelated process is never
// signalled; elsewhere the recorded pids that are alive.
func killPids(dir string) {
	// A daemon may fork its next process while we scan, and a process
	// in the middle of execve shows an empty environment for a moment,
	// so one pass can miss it. Scan until two passes in a row, 20 ms
	// apart, find nothing alive and no recorded pid is alive either (a
	// recorded pid is never signalled by number: it may have been
	// reused; a pass that finds it by its environment kills it).
	deadline := time.Now().Add(10 * time.Second)
	for clean := 0; clean < 2 && time.Now().Before(deadline); {
		if killPidsOnce(dir) == 0 && !recordedAlive(dir) {
			clean++
		} else {
			clean = 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recordedAlive reports whether a pid the fake recorded in dir is alive.
func recordedAlive(dir string) bool {
	for _, pid := range Pids(dir) {
		if Alive(pid) {
			return true
		}
	}
	return false
}

// killPidsOnce kills the fake's live processes, found by the pids-file
// variable in their environment (never by a recorded pid, which may have
// been reused, unless /proc is missing), and reports how many it found
// alive.
func killPidsOnce(dir string) int {
	n := 0
	marker := []byte(EnvPids + "=" + dir + "/pids")
	names, err := os.ReadDir("/proc")
	if err != nil {
		for _, pid := range Pids(dir) {
			if Alive(pid) {
				killPid(pid)
				n++
			}
		}
		return n
	}
	for _, e := range names {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, marker) {
				if Alive(pid) {
					killPid(pid)
					n++
				}
				break
			}
		}
	}
	return n
}

// cancelFaults are the cases about cancellation: bounds after cancel, no
// events after cancel, and the error type when the context ends at once.
func cancelFaults(t *testing.T, k Kit, sess string) {
	const grace = 300 * time.Millisecond
	// canceled is how a canceled run went.
	type canceled struct {
		after int           // events yielded after the cancel
		took  time.Duration // from the cancel to the end of the run
		dir   string        // the fake's record directory
		err   error         // the final error
	}
	// cancelAt runs script and cancels delay after the first event pick
	// accepts.
	cancelAt := func(t *testing.T, opts *agentcli.Options, pick func(agentcli.Event) bool, delay time.Duration, script ...string) canceled {
		t.Helper()
		t.Setenv("TMPDIR", t.TempDir())
		b, dir := k.Setup(t, opts, script...)
		t.Cleanup(func() { killPids(dir) })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var after int
		var err error
		var canceledAt time.Time
		var mu sync.Mutex
		done := false
		for ev, e := range b.Stream(ctx, &agentcli.Request{Prompt: "hi", SystemPrompt: k.system()}) {
			if e != nil {
				err = e
				break
			}
			mu.Lock()
			if !canceledAt.IsZero() {
				after++
			}
			if !done && pick(ev) {
				done = true
				if delay == 0 {
					canceledAt = time.Now()
					cancel()
				} else {
					time.AfterFunc(delay, func() {
						mu.Lock()
						canceledAt = time.Now()
						mu.Unlock()
						cancel()
					})
				}
			}
			mu.Unlock()
		}
		mu.Lock()
		defer mu.Unlock()
		if canceledAt.IsZero() {
			t.Fatalf("the run ended (err %v) before it was canceled", err)
		}
		return canceled{after: after, took: time.Since(canceledAt), dir: dir, err: err}
	}
	isCanceled := func(t *testing.T, err error) {
		t.Helper()
		var ce *agentcli.CanceledError
		if !errors.As(err, &ce) || !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v; want *CanceledError", err)
		}
	}
	hasSession := func(ev agentcli.Event) bool { return ev.SessionID != "" }

	t.Run("no events after cancel", func(t *testing.T) {
		// The CLI ignores SIGTERM and floods stdout with events for the
		// whole grace period; nothing of it may surface after the cancel.
		partial := k.Partial(sess)
		flood := "flood " + strings.TrimPrefix(partial[len(partial)-1], "out ")
		r := cancelAt(t, nil, hasSession, 0, concat(partial, []string{"ignoreterm", flood})...)
		isCanceled(t, r.err)
		if r.after != 0 {
			t.Fatalf("%d events yielded after cancel", r.after)
		}
		AssertReaped(t, r.dir)
		AssertNoLeaks(t, k.TempPrefix)
	})
	t.Run("cancel while an untagged escapee writes and the CLI ignores SIGTERM", func(t *testing.T) {
		r := cancelAt(t, nil, hasSession, 0, concat([]string{"cleanenv", "escapee-writer 1ms 60s"}, k.Partial(sess), []string{"ignoreterm", "hang"})...)
		isCanceled(t, r.err)
		if r.after != 0 {
			t.Fatalf("%d events yielded after cancel", r.after)
		}
		if r.took > grace+100*time.Millisecond+boundSlack {
			t.Fatalf("returned %v after cancel; want at most KillGrace + 100ms", r.took)
		}
		killPids(r.dir)
		AssertNoLeaks(t, k.TempPrefix)
	})
	t.Run("cancel after the CLI exited while an untagged daemon holds stdout", func(t *testing.T) {
		// A long grace: only acting on the cancel ends this run early.
		opts := &agentcli.Options{KillGrace: 30 * time.Second}
		r := cancelAt(t, opts, hasSession, 500*time.Millisecond, concat([]string{"cleanenv", "silent-daemon 60s"}, k.Success("hello", sess), []string{"exit 0"})...)
		isCanceled(t, r.err)
		if r.took > 100*time.Millisecond+boundSlack {
			t.Fatalf("returned %v after cancel; want at most 100ms", r.took)
		}
		killPids(r.dir)
		AssertNoLeaks(t, k.TempPrefix)
	})
	t.Run("rapid cancel", func(t *testing.T) {
		// The context ends in the first milliseconds: while the binary is
		// resolved, the process started or its runtime initialised. The
		// error is always the cancellation, never a start failure.
		t.Setenv("TMPDIR", t.TempDir())
		b, dir := k.Setup(t, nil, concat(k.Partial(sess), []string{"hang"})...)
		t.Cleanup(func() { killPids(dir) })
		rng := rand.New(rand.NewPCG(1, uint64(len(k.Name))))
		for i := 0; i < 200; i++ {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Duration(rng.Int64N(int64(3*time.Millisecond))), cancel)
			_, err := b.Run(ctx, &agentcli.Request{Prompt: "hi", SystemPrompt: k.system()})
			cancel()
			var ce *agentcli.CanceledError
			if !errors.As(err, &ce) || !errors.Is(err, agentcli.ErrCanceled) {
				t.Fatalf("run %d: err = %v; want *CanceledError", i, err)
			}
		}
		for i := 0; i < 20; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.Int64N(int64(3*time.Millisecond))))
			_, err := b.Run(ctx, &agentcli.Request{Prompt: "hi"})
			cancel()
			if !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("ctx deadline, run %d: err = %v; want ErrCanceled wrapping DeadlineExceeded", i, err)
			}
		}
		for i, d := range []time.Duration{1, time.Microsecond, time.Millisecond, 3 * time.Millisecond} {
			_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi", Timeout: d})
			var te *agentcli.TimeoutError
			if !errors.As(err, &te) || !errors.Is(err, agentcli.ErrTimeout) {
				t.Fatalf("Timeout %v (run %d): err = %v; want *TimeoutError", d, i, err)
			}
		}
		// Most runs end before the fake records its pid; those that got
		// that far must be gone.
		for _, pid := range Pids(dir) {
			if Alive(pid) {
				t.Errorf("process %d is still alive after the run", pid)
			}
		}
		AssertNoLeaks(t, k.TempPrefix)
	})
}

func runErr(b agentcli.Backend) error {
	_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi"})
	return err
}

func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
	for i := 0; i < 100 && Alive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
}
