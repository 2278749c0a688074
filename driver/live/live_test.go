//go:build unix

package live

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

func TestMain(m *testing.M) {
	switch os.Getenv("LIVE_FAKE_PEER") {
	case "1":
		runPeer()
		os.Exit(0)
	case "rpc":
		runRPCPeer()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const testGrace = 300 * time.Millisecond

// startToy starts a session on the fake peer. start is LIVE_PEER_START.
func startToy(t *testing.T, start string, req *agentcli.Request, opts *agentcli.Options) (*Session, int, error) {
	t.Helper()
	return startToyWith(t, start, req, opts, nil)
}

// startToyWith is startToy with edit changing the session's Config.
func startToyWith(t *testing.T, start string, req *agentcli.Request, opts *agentcli.Options, edit func(*Config)) (*Session, int, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Without opts, an unanswered interrupt kills the session after
	// testGrace too (TestInterruptGrace* test the default).
	o := agentcli.Options{Path: self, KillGrace: testGrace, InterruptGrace: testGrace}
	if opts != nil {
		o = *opts
		o.Path = self
		if o.KillGrace == 0 {
			o.KillGrace = testGrace
		}
	}
	pids := make(chan int, 1)
	if req == nil {
		req = &agentcli.Request{}
	}
	cleaned := make(chan struct{})
	cfg := Config{
		Backend: "toy",
		Path:    o.Path,
		Options: o,
		Env:     append(os.Environ(), "LIVE_FAKE_PEER=1", "LIVE_PEER_START="+start),
		Request: req,
		Proto:   func(h *Host) Proto { return &toyProto{h: h, ready: make(chan int, 1), pids: pids} },
		Cleanup: func() { close(cleaned) },
	}
	if edit != nil {
		edit(&cfg)
	}
	s, err := Start(context.Background(), cfg)
	if err != nil {
		select {
		case <-cleaned:
		default:
			t.Error("Cleanup did not run after a failed start")
		}
		return nil, 0, err
	}
	pid := <-pids
	t.Cleanup(func() {
		s.Close()
		assertGone(t, pid)
		select {
		case <-cleaned:
		case <-time.After(5 * time.Second):
			t.Error("Cleanup did not run after Close")
		}
	})
	return s, pid, nil
}

func mustToy(t *testing.T, start string, req *agentcli.Request) (*Session, int) {
	t.Helper()
	s, pid, err := startToy(t, start, req, nil)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s, pid
}

// assertGone fails t if pid is still alive (zombies count as gone: a
// reaped-or-dead process cannot act).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	if pid == 0 {
		return
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return
	}
	if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
		return
	}
	t.Errorf("peer process %d is still alive", pid)
}

func collect(s *Session, ctx context.Context, prompt string) ([]agentcli.Event, *agentcli.Result, error) {
	var evs []agentcli.Event
	for ev, err := range s.Stream(ctx, prompt) {
		if err != nil {
			return evs, nil, err
		}
		if ev.Kind == agentcli.EventResult {
			return evs, ev.Result, nil
		}
		evs = append(evs, ev)
	}
	return evs, nil, errors.New("no result")
}

func TestMultiTurn(t *testing.T) {
	var text strings.Builder
	s, _ := mustToy(t, "", &agentcli.Request{OnText: func(s string) { text.WriteString(s) }})
	if s.ID() != "" {
		t.Errorf("ID() = %q before any turn", s.ID())
	}
	for i := 1; i <= 3; i++ {
		evs, res, err := collect(s, context.Background(), "echo hello world")
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if want := "hello world #" + strconv.Itoa(i); res.Text != want {
			t.Errorf("turn %d: text %q, want %q", i, res.Text, want)
		}
		if len(evs) != 2 || res.Duration <= 0 || res.SessionID != "toy-session" {
			t.Errorf("turn %d: %d events, result %+v", i, len(evs), res)
		}
	}
	if s.ID() != "toy-session" {
		t.Errorf("ID() = %q", s.ID())
	}
	if got := text.String(); got != strings.Repeat("hello world ", 3) {
		t.Errorf("OnText got %q", got)
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err() = %v on a live session", err)
	}
}

// Nothing is sent before the sequence is iterated.
func TestStreamIsLazy(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	seq := s.Stream(context.Background(), "echo one")
	_ = seq
	_, res, err := collect(s, context.Background(), "echo two")
	if err != nil || res.Text != "two #1" {
		t.Fatalf("first iterated turn: %+v, %v (an uniterated Stream sent its prompt)", res, err)
	}
}

func TestInterrupt(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	done := make(chan error, 1)
	go func() {
		_, _, err := collect(s, context.Background(), "stall")
		done <- err
	}()
	waitTurn(t, s)
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("turn error %v, want ErrInterrupted", err)
	}
	if s.Err() != nil {
		t.Fatalf("session died: %v", s.Err())
	}
	_, res, err := collect(s, context.Background(), "echo again")
	if err != nil || res.Text != "again #2" {
		t.Fatalf("next turn: %+v, %v", res, err)
	}
	if err := s.Interrupt(context.Background()); err != nil {
		t.Errorf("Interrupt without a turn: %v", err)
	}
}

// waitTurn waits until a turn is running and its prompt was sent.
func waitTurn(t *testing.T, s *Session) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		tr := s.turn
		s.mu.Unlock()
		if tr != nil {
			select {
			case <-tr.sent:
				time.Sleep(50 * time.Millisecond) // let the peer read it
				return
			default:
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no turn started")
}

// A CLI that ignores the interrupt: the turn still ends (ErrInterrupted)
// after the interrupt grace, the session is killed and reports why.
func TestInterruptNeverAnswered(t *testing.T) {
	s, pid := mustToy(t, "", nil)
	done := make(chan error, 1)
	go func() {
		_, _, err := collect(s, context.Background(), "deaf")
		done <- err
	}()
	waitTurn(t, s)
	start := time.Now()
	// Interrupt gives up with its context, typed; the turn still ends.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := s.Interrupt(ctx); !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Interrupt past its deadline: %v; want a *CanceledError", err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never ended")
	}
	t.Logf("ended after %v: %v", time.Since(start), err)
	if !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("turn error %v, want ErrInterrupted", err)
	}
	if !errors.Is(s.Err(), agentcli.ErrProtocol) || !strings.Contains(s.Err().Error(), "did not end the turn") {
		t.Fatalf("Err() = %v, want the unanswered interrupt (a *ProtocolError)", s.Err())
	}
	if _, err := s.Run(context.Background(), "echo x"); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Fatalf("turn on the killed session: %v", err)
	}
	assertGone(t, pid)
}

func TestDiesMidTurn(t *testing.T) {
	s, pid := mustToy(t, "", nil)
	evs, _, err := collect(s, context.Background(), "die")
	var ee *agentcli.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || !strings.Contains(ee.Stderr, "died on purpose") {
		t.Fatalf("turn error %#v, want an *ExitError with code 3 and the stderr tail", err)
	}
	if len(evs) != 1 || evs[0].Text != "dying" {
		t.Errorf("events before the death: %+v", evs)
	}
	if !errors.As(s.Err(), &ee) {
		t.Errorf("Err() = %v", s.Err())
	}
	_, err = s.Run(context.Background(), "echo more")
	if !errors.Is(err, agentcli.ErrSessionClosed) || !errors.As(err, &ee) {
		t.Fatalf("next turn: %v, want ErrSessionClosed wrapping the *ExitError", err)
	}
	assertGone(t, pid)
	if err := s.Close(); err != nil {
		t.Errorf("Close after death: %v", err)
	}
	if !errors.As(s.Err(), &ee) {
		t.Errorf("Close replaced the crash error: %v", s.Err())
	}
}

// A flood of lines reaches a slow consumer complete and in order.
func TestFlood(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	const n = 20000
	i := 0
	for ev, err := range s.Stream(context.Background(), "flood "+strconv.Itoa(n)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == agentcli.EventResult {
			break
		}
		if ev.Text != strconv.Itoa(i) {
			t.Fatalf("event %d has text %q", i, ev.Text)
		}
		if i%5000 == 0 {
			time.Sleep(20 * time.Millisecond)
		}
		i++
	}
	if i != n {
		t.Fatalf("%d events, want %d", i, n)
	}
}

// Breaking out of a flooding turn interrupts it; the session goes on.
func TestBreakInterrupts(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	got := 0
	for _, err := range s.Stream(context.Background(), "stall") {
		if err != nil {
			t.Fatal(err)
		}
		got++
		break
	}
	if got != 1 {
		t.Fatalf("%d events", got)
	}
	_, res, err := collect(s, context.Background(), "echo after break")
	if err != nil || res.Text != "after break #2" {
		t.Fatalf("after break: %+v, %v", res, err)
	}
}

func TestMalformedLines(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	evs, res, err := collect(s, context.Background(), "garbage")
	if err != nil || res.Text != "survived" {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	notices := 0
	for _, ev := range evs {
		if ev.Kind == agentcli.EventNotice && errors.Is(ev.Err, agentcli.ErrParse) {
			notices++
		}
	}
	// Three lines are not JSON; the fourth has a field of the wrong type,
	// which the toy protocol reports too.
	if notices != 4 {
		t.Errorf("%d parse notices, want 4: %+v", notices, evs)
	}
}

func TestLineTooLong(t *testing.T) {
	s, _, err := startToy(t, "", nil, &agentcli.Options{MaxLineBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	evs, res, err := collect(s, context.Background(), "long 5000")
	if err != nil || res.Text != "after long" {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	if len(evs) != 1 || !errors.Is(evs[0].Err, agentcli.ErrLineTooLong) {
		t.Fatalf("events %+v, want one line-too-long notice", evs)
	}
	// A line far over 64 KiB but under the limit is read whole.
	s2, _, err := startToy(t, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err = collect(s2, context.Background(), "long 300000")
	if err != nil || len(evs) != 1 || len(evs[0].Text) != 300000 {
		t.Fatalf("long line: %d events, %v", len(evs), err)
	}
}

func TestCancelAndTimeout(t *testing.T) {
	s, _ := mustToy(t, "", &agentcli.Request{Timeout: 300 * time.Millisecond})
	_, _, err := collect(s, context.Background(), "stall")
	var te *agentcli.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, agentcli.ErrTimeout) {
		t.Fatalf("turn past its timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	_, _, err = collect(s, ctx, "stall")
	if !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled turn: %v", err)
	}
	if _, err := s.Run(context.Background(), "echo still"); err != nil {
		t.Fatalf("the session did not survive: %v", err)
	}
}

// Turns run one at a time: a second Stream waits for the first.
func TestTurnsSerialize(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	var wg sync.WaitGroup
	results := make([]string, 2)
	var first *turn
	for i, p := range []string{"sleep 300ms", "echo quick"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Run(context.Background(), p)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = res.Text
		}()
		if i == 0 {
			waitTurn(t, s) // the first turn runs before the second starts
			s.mu.Lock()
			first = s.turn
			s.mu.Unlock()
		}
	}
	time.Sleep(100 * time.Millisecond)
	s.mu.Lock()
	still := s.turn == first
	s.mu.Unlock()
	if !still {
		t.Error("a second turn started while the first was running")
	}
	wg.Wait()
	if results[0] != "slept" || results[1] != "quick #2" {
		t.Fatalf("results %q", results)
	}
}

// Close never hangs, even on a CLI that ignores the end of stdin and
// SIGTERM; its process is gone when Close returns.
func TestCloseStubborn(t *testing.T) {
	s, pid := mustToy(t, "stubborn", nil)
	if _, err := s.Run(context.Background(), "echo hi"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.Close()
	d := time.Since(start)
	if d > testGrace+time.Second {
		t.Errorf("Close took %v, more than the kill grace (%v) plus a second", d, testGrace)
	}
	assertGone(t, pid)
	if !errors.Is(s.Err(), agentcli.ErrSessionClosed) {
		t.Errorf("Err() = %v", s.Err())
	}
}

// Close during a turn ends the turn with ErrSessionClosed.
func TestCloseMidTurn(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	done := make(chan error, 1)
	go func() {
		_, _, err := collect(s, context.Background(), "deaf")
		done <- err
	}()
	waitTurn(t, s)
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, agentcli.ErrSessionClosed) {
			t.Fatalf("turn error %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("turn did not end")
	}
}

// A CLI that dies during the handshake: Start fails with its typed error
// (classified from stderr), and nothing is left.
func TestStartFailure(t *testing.T) {
	_, _, err := startToy(t, "exit", nil, nil)
	var ee *agentcli.ExitError
	if !errors.As(err, &ee) || ee.Code != 2 || !errors.Is(err, agentcli.ErrSessionNotFound) {
		t.Fatalf("Start: %#v", err)
	}
}

// A start whose context ends before the handshake is done: a
// *CanceledError, and the process is gone.
func TestStartCanceled(t *testing.T) {
	self, _ := os.Executable()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, Config{
		Backend: "toy", Path: self, Options: agentcli.Options{KillGrace: testGrace},
		Env: append(os.Environ(), "LIVE_FAKE_PEER=1", "LIVE_PEER_START=silent"),
		Proto: func(h *Host) Proto {
			return &toyProto{h: h, ready: make(chan int, 1)}
		},
	})
	if !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	_, err := Start(context.Background(), Config{Backend: "toy", Path: "/nonexistent/toy", Proto: func(h *Host) Proto { return &toyProto{h: h, ready: make(chan int, 1)} }})
	if !errors.Is(err, agentcli.ErrNotFound) {
		t.Errorf("missing binary: %v", err)
	}
	self, _ := os.Executable()
	_, err = Start(context.Background(), Config{Backend: "toy", Path: self, Request: &agentcli.Request{Permission: "later"}})
	var ue *agentcli.UnsupportedError
	if !errors.As(err, &ue) || ue.Backend != "toy" {
		t.Errorf("unknown mode: %v", err)
	}
	_, err = Start(context.Background(), Config{Backend: "toy", Path: self, Request: &agentcli.Request{Permission: agentcli.PermissionAsk}})
	if err == nil || !strings.Contains(err.Error(), "OnPermission") {
		t.Errorf("ask without a callback: %v", err)
	}
}

// ask runs one turn asking n permissions with cb and returns the peer's
// record of the answers.
func ask(t *testing.T, req *agentcli.Request, n int) (string, error) {
	t.Helper()
	s, _ := mustToy(t, "", req)
	res, err := s.Run(context.Background(), "ask "+strconv.Itoa(n))
	if err != nil {
		return "", err
	}
	return res.Text, nil
}

func TestPermissionModes(t *testing.T) {
	var calls atomic.Int32
	cb := func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		calls.Add(1)
		if r.Tool.Name != "Bash" {
			t.Errorf("request %+v", r)
		}
		return agentcli.PermissionDecision{Kind: agentcli.AllowAlways}
	}
	cases := []struct {
		mode  agentcli.PermissionMode
		want  string
		calls int32
	}{
		{agentcli.PermissionBypass, "allow_once", 0},
		{agentcli.PermissionAsk, "allow_always", 1},
		{agentcli.PermissionDeny, "reject_once (" + DeniedMessage + ")", 0},
		{agentcli.PermissionPlan, "reject_once (" + DeniedMessage + ")", 0},
	}
	for _, c := range cases {
		t.Run(string(c.mode), func(t *testing.T) {
			calls.Store(0)
			got, err := ask(t, &agentcli.Request{Permission: c.mode, OnPermission: cb}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want || calls.Load() != c.calls {
				t.Errorf("answer %q after %d callback calls, want %q after %d", got, calls.Load(), c.want, c.calls)
			}
		})
	}
}

// The deadline applies the default decision whatever the callback does
// later; a panicking callback refuses too; requests are asked one at a
// time.
func TestPermissionDeadlineAndPanic(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var inFlight, maxInFlight atomic.Int32
	n := 0
	req := &agentcli.Request{
		Permission:        agentcli.PermissionAsk,
		PermissionTimeout: 200 * time.Millisecond,
		OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
			c := inFlight.Add(1)
			defer inFlight.Add(-1)
			if c > maxInFlight.Load() {
				maxInFlight.Store(c)
			}
			n++
			switch n {
			case 1: // honours ctx, too late
				<-ctx.Done()
				return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
			case 2:
				panic("callback bug")
			default:
				return agentcli.PermissionDecision{Kind: agentcli.AllowOnce, Input: []byte(`{"command":"touch Y"}`)}
			}
		},
	}
	got, err := ask(t, req, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := "reject_once (" + DeniedMessage + "); reject_once (" + DeniedMessage + "); " +
		"reject_once (The tool call was refused: it was approved with edited input, which this CLI cannot apply.)"
	if got != want {
		t.Errorf("answers\n%s\nwant\n%s", got, want)
	}
	if maxInFlight.Load() != 1 {
		t.Errorf("%d callbacks ran at once", maxInFlight.Load())
	}
}

// Interrupting a turn answers its pending permission request with the
// default decision at once.
func TestInterruptAnswersPending(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	asked := make(chan struct{}, 1)
	req := &agentcli.Request{
		Permission: agentcli.PermissionAsk,
		OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
			asked <- struct{}{}
			<-release
			return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
		},
	}
	s, _ := mustToy(t, "", req)
	done := make(chan error, 1)
	go func() {
		_, _, err := collect(s, context.Background(), "ask 2")
		done <- err
	}()
	<-asked
	start := time.Now()
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("turn: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the interrupted turn took %v to end", d)
	}
	if s.Err() != nil {
		t.Fatalf("session died: %v", s.Err())
	}
}

// OneShot: one turn, then the session is closed; Timeout covers the start
// and the turn and gives a *TimeoutError.
func TestOneShot(t *testing.T) {
	var pids []int
	var mu sync.Mutex
	start := func(ctx context.Context, req *agentcli.Request) (agentcli.Session, error) {
		s, pid, err := startToy(t, "", req, nil)
		mu.Lock()
		pids = append(pids, pid)
		mu.Unlock()
		if err != nil {
			return nil, err
		}
		if req.Timeout != 0 {
			t.Errorf("the session got Timeout %v; OneShot bounds the run itself", req.Timeout)
		}
		return s, nil
	}
	res, err := driver.Collect("toy", driver.OneShot(context.Background(), start, &agentcli.Request{Prompt: "echo once"}))
	if err != nil || res.Text != "once #1" {
		t.Fatalf("OneShot: %+v, %v", res, err)
	}
	assertGone(t, pids[0])
	_, err = driver.Collect("toy", driver.OneShot(context.Background(), start, &agentcli.Request{Prompt: "stall", Timeout: 300 * time.Millisecond}))
	var te *agentcli.TimeoutError
	if !errors.As(err, &te) || te.Timeout != 300*time.Millisecond {
		t.Fatalf("OneShot past its timeout: %v", err)
	}
	assertGone(t, pids[1])
	for range driver.OneShot(context.Background(), start, &agentcli.Request{Prompt: "stall"}) {
		break
	}
	assertGone(t, pids[2])
}

// A write to a session whose CLI is gone fails, it does not block.
func TestSendAfterDeath(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	s.Run(context.Background(), "die")
	if err := s.host.Send(context.Background(), []byte(`{"op":"prompt"}`)); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Fatalf("Send after death: %v", err)
	}
}

// A helper the CLI started in a session of its own is killed when the
// session closes.
func TestCloseKillsEscapedHelpers(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	res, err := s.Run(context.Background(), "escape")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(res.Text)
	if err != nil {
		t.Fatalf("peer: %s", res.Text)
	}
	s.Close()
	deadline := time.Now().Add(2 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Fields(string(b))[2] == "Z" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the escaped helper %d is still alive after Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
