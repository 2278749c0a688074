package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/nats-io/nats.go/jetstream"
)

var askCaps = agentcli.Capabilities{Sessions: true, Interrupt: true, EditInput: true,
	PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny}}

// TestPermissionAcrossTheWire: the worker's backend asks, the caller's
// callback decides (allow with an edited input, refuse with a message),
// and the worker's backend gets exactly those decisions; a callback that
// outlives PermissionTimeout sees its context end and the request is
// refused by default.
func TestPermissionAcrossTheWire(t *testing.T) {
	n := startNATS(t)
	call := agentclitest.Reply("done", "s")
	call.Ask = []agentcli.PermissionRequest{
		{Tool: agentcli.ToolUse{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"rm -rf /"}`)}, Title: "rm"},
		{Tool: agentcli.ToolUse{ID: "t2", Name: "Write", Input: json.RawMessage(`{"path":"x"}`)}},
		{Tool: agentcli.ToolUse{ID: "t3", Name: "Read"}},
	}
	local := scripted(call, askCaps)
	startWorker(t, n, local, nil)
	b := newPoolBackend(t, n, nil)

	var seen []string
	slowCtxEnded := make(chan struct{})
	onPerm := func(ctx context.Context, pr *agentcli.PermissionRequest) agentcli.PermissionDecision {
		seen = append(seen, pr.Tool.ID+":"+pr.Tool.Name+":"+pr.Title)
		switch pr.Tool.ID {
		case "t1":
			return agentcli.PermissionDecision{Kind: agentcli.AllowOnce, Input: json.RawMessage(`{"command":"ls"}`)}
		case "t2":
			return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "not there"}
		}
		<-ctx.Done() // t3: never answers in time
		close(slowCtxEnded)
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "go", Permission: agentcli.PermissionAsk,
		OnPermission: onPerm, PermissionTimeout: 300 * time.Millisecond})
	if err != nil || res.Text != "done" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if want := "t1:Bash:rm t2:Write: t3:Read:"; strings.Join(seen, " ") != want {
		t.Errorf("callback saw %q, want %q", strings.Join(seen, " "), want)
	}
	// The run ends at the deadline without waiting for the late
	// callback, which returns once it sees its context end.
	select {
	case <-slowCtxEnded:
	case <-time.After(10 * time.Second):
		t.Error("the late callback's context did not end")
	}
	ds := local.Decisions()
	if len(ds) != 3 {
		t.Fatalf("worker got %d decisions, want 3", len(ds))
	}
	if d := ds[0]; d.Default || d.Decision.Kind != agentcli.AllowOnce || string(d.Decision.Input) != `{"command":"ls"}` {
		t.Errorf("decision 1 = %+v", d)
	}
	if d := ds[1]; d.Default || d.Decision.Kind != agentcli.RejectOnce || d.Decision.Message != "not there" {
		t.Errorf("decision 2 = %+v", d)
	}
	if d := ds[2]; !d.Default || d.Decision.Allowed() {
		t.Errorf("decision 3 = %+v, want the default refusal", d)
	}
}

// TestCancelAndTimeout: cancelling ctx mid-run ends it with a
// *CanceledError carrying the caller's cause, a Request.Timeout with a
// *TimeoutError, breaking out of the loop returns at once; in each case
// the worker's slot is free again (MaxRuns 1, the next run succeeds).
func TestCancelAndTimeout(t *testing.T) {
	n := startNATS(t)
	// Each event takes a minute: only a cancellation that reaches the
	// worker's backend frees its one slot for quick() in time.
	slow := agentclitest.Reply("slow answer", "s")
	slow.Delay = time.Minute
	local := scripted(slow, agentcli.Capabilities{})
	stopped := make(chan struct{})
	wo := testWorkerOptions()
	wo.MaxRuns = 1
	startWorker(t, n, &breakable{Backend: local, stopped: stopped}, wo)
	b := newPoolBackend(t, n, nil)
	quick := func() {
		t.Helper()
		local.Push(agentclitest.Reply("quick", "q"))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if res, err := b.Run(ctx, &agentcli.Request{Prompt: "quick"}); err != nil || res.Text != "quick" {
			t.Fatalf("next run = %+v, %v", res, err)
		}
	}

	cause := errors.New("user pressed stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var got []agentcli.EventKind
	var err error
	go func() {
		time.Sleep(300 * time.Millisecond)
		cancel(cause)
	}()
	for ev, e := range b.Stream(ctx, &agentcli.Request{Prompt: "cancel me"}) {
		if e != nil {
			err = e
			break
		}
		got = append(got, ev.Kind)
	}
	var ce *agentcli.CanceledError
	if !errors.As(err, &ce) || !errors.Is(err, cause) || !errors.Is(err, agentcli.ErrCanceled) {
		t.Fatalf("cancelled run: err = %v (%T), want a *CanceledError with the cause", err, err)
	}
	if len(got) != 0 {
		t.Errorf("events: %v", got)
	}
	quick()

	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "time out", Timeout: 300 * time.Millisecond})
	var te *agentcli.TimeoutError
	if !errors.As(err, &te) || te.Timeout != 300*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timed-out run: err = %v (%T)", err, err)
	}
	quick()

	for range b.Stream(context.Background(), &agentcli.Request{Prompt: "break"}) {
		break
	}
	select {
	case <-stopped:
	default:
		t.Error("breaking out returned before the worker's run stopped")
	}
	quick()
}

// breakable runs the prompt "break" as one event, then waits for its
// context, and closes stopped when it ends; other prompts go to the
// scripted backend.
type breakable struct {
	*agentclitest.Backend
	stopped chan struct{}
}

func (b *breakable) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	if req.Prompt != "break" {
		return b.Backend.Stream(ctx, req)
	}
	return func(yield func(agentcli.Event, error) bool) {
		defer close(b.stopped)
		if !yield(agentcli.Event{Kind: agentcli.EventInit, SessionID: "b"}, nil) {
			return
		}
		<-ctx.Done()
		yield(agentcli.Event{}, &agentcli.CanceledError{Backend: b.Name(), Err: context.Cause(ctx)})
	}
}

// TestLiveSessionInterrupt: a live session through the pool: turns in
// order on one worker, ID from the worker, an interrupt that ends the
// turn with ErrInterrupted and leaves the session usable, and Close.
func TestLiveSessionInterrupt(t *testing.T) {
	n := startNATS(t)
	local := agentclitest.NewBackend()
	local.Caps = askCaps
	startWorker(t, n, local, nil)
	b := newPoolBackend(t, n, nil)
	ctx := context.Background()

	s, err := agentcli.StartSession(ctx, b, &agentcli.Request{SessionID: "resume-me"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "resume-me" {
		t.Errorf("ID = %q", s.ID())
	}
	local.Push(agentclitest.Reply("one", "resume-me"))
	if res, err := s.Run(ctx, "first"); err != nil || res.Text != "one" {
		t.Fatalf("turn 1 = %+v, %v", res, err)
	}
	long := agentclitest.Reply("never", "resume-me")
	long.Delay = time.Second
	local.Push(long)
	done := make(chan error, 1)
	go func() { _, err := s.Run(ctx, "second"); done <- err }()
	waitFor(t, func() bool { return len(local.Requests()) == 2 })
	if err := s.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, agentcli.ErrInterrupted) {
			t.Fatalf("interrupted turn: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("interrupted turn did not end")
	}
	local.Push(agentclitest.Reply("three", "resume-me"))
	if res, err := s.Run(ctx, "third"); err != nil || res.Text != "three" {
		t.Fatalf("turn 3 = %+v, %v", res, err)
	}
	var prompts []string
	for _, r := range local.Requests() {
		prompts = append(prompts, r.Prompt)
	}
	if strings.Join(prompts, ",") != "first,second,third" {
		t.Errorf("worker saw prompts %v", prompts)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, "after close"); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Errorf("turn after Close: %v", err)
	}
	if !errors.Is(s.Err(), agentcli.ErrSessionClosed) {
		t.Errorf("Err = %v", s.Err())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSessionMovesToAnotherWorker: a live session's worker dies between
// turns; the next turn runs on another worker, which imported the
// session's archive from the object store (the history is there), and
// the one after stays there. A one-shot run resuming the session on a
// third worker finds it too.
func TestSessionMovesToAnotherWorker(t *testing.T) {
	rig := newPortableRig(t)
	b, log, porter := rig.b, rig.log, rig.porter
	a, s := rig.sessionOn(t, "A")
	ctx := context.Background()
	if _, err := s.Run(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	if err := a.kill(); err == nil {
		t.Fatal("killed worker returned nil")
	}
	rig.worker(t, "B")
	if _, err := s.Run(ctx, "t3"); err != nil {
		t.Fatalf("turn after the worker died: %v", err)
	}
	if _, err := s.Run(ctx, "t4"); err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	_ = s.Close()
	rig.worker(t, "C")
	// Whichever worker takes it must have the session: B from its disk,
	// C from the archive.
	if _, err := b.Run(ctx, &agentcli.Request{Prompt: "t5", SessionID: id}); err != nil {
		t.Fatalf("one-shot resume: %v", err)
	}
	turns := log.all()
	var where []string
	for i, r := range turns {
		where = append(where, r.Worker+":"+r.Prompt)
		if r.Session != id {
			t.Errorf("turn %d in session %s, want %s", i, r.Session, id)
		}
		if want := []string{"t1", "t2", "t3", "t4", "t5"}[:i]; strings.Join(r.History, ",") != strings.Join(want, ",") {
			t.Errorf("turn %s found history %v, want %v", r.Prompt, r.History, want)
		}
	}
	if got := strings.Join(where[:4], " "); got != "A:t1 A:t2 B:t3 B:t4" {
		t.Errorf("turns ran at %v", where)
	}
	if porter.crossings() < 1 {
		t.Errorf("no archive crossed workers: %v", porter.imports)
	}
}

// TestTurnMovesWhenTheSessionStartIsLost: a live session's worker is
// gone, and the worker that takes the session to start it again dies
// while starting it: the turn, which no worker was sent, moves on to a
// third worker and runs there, with the session's history (it used to
// end with a *WorkerLostError saying the work had started).
func TestTurnMovesWhenTheSessionStartIsLost(t *testing.T) {
	rig := newPortableRig(t)
	log := rig.log
	a, s := rig.sessionOn(t, "A")
	ctx := context.Background()
	if err := a.kill(); err == nil {
		t.Fatal("killed worker returned nil")
	}
	stall := &stallingStart{transcriptBackend: newTranscriptBackend("B", log, agentclitest.Reply("ok", "x")),
		entered: make(chan struct{}), release: make(chan struct{})}
	o := testWorkerOptions()
	o.ID, o.Sessions = "B", rig.porter
	bw := startWorker(t, rig.n, stall, o)
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, "t2")
		done <- err
	}()
	select {
	case <-stall.entered:
	case err := <-done:
		t.Fatalf("t2 ended before B started the session: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("B never started the session")
	}
	bw.nc.Close()
	close(stall.release)
	if err := bw.kill(); err == nil {
		t.Fatal("killed worker returned nil")
	}
	rig.worker(t, "C")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("t2: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("t2 did not end")
	}
	var where []string
	for _, r := range log.all() {
		where = append(where, r.Worker+":"+r.Prompt+"("+strings.Join(r.History, ",")+")")
	}
	if got := strings.Join(where, " "); got != "A:t1() C:t2(t1)" {
		t.Errorf("turns ran at %s, want A:t1() C:t2(t1)", got)
	}
}

// stallingStart is a transcriptBackend whose live sessions never start:
// StartSession waits for release (or its context).
type stallingStart struct {
	*transcriptBackend
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *stallingStart) StartSession(ctx context.Context, _ *agentcli.Request) (agentcli.Session, error) {
	s.once.Do(func() { close(s.entered) })
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return nil, errors.New("the session never started")
}

// TestWorkerDiesMidRun: the run ends with a *WorkerLostError (matching
// ErrWorkerLost and agentcli.ErrNoResult) and is not run again on the
// other worker.
func TestWorkerDiesMidRun(t *testing.T) {
	n := startNATS(t)
	slow := agentclitest.Reply("slow", "s")
	slow.Delay = 300 * time.Millisecond
	first := scripted(slow, agentcli.Capabilities{})
	a := startWorker(t, n, first, nil)
	b := newPoolBackend(t, n, nil)
	var err error
	events := 0
	for _, e := range b.Stream(context.Background(), &agentcli.Request{Prompt: "doomed"}) {
		if e != nil {
			err = e
			break
		}
		events++
		if events == 1 {
			_ = a.kill()
			// A second worker is there to take the job, were it redelivered.
			startWorker(t, n, scripted(slow, agentcli.Capabilities{}), nil)
		}
	}
	var lost *WorkerLostError
	if !errors.As(err, &lost) || !lost.Started || lost.Worker != a.w.ID() ||
		!errors.Is(err, ErrWorkerLost) || !errors.Is(err, agentcli.ErrNoResult) {
		t.Fatalf("err = %v (%T), want a *WorkerLostError for %s", err, err, a.w.ID())
	}
	time.Sleep(time.Second) // room for a wrongful redelivery
	if len(first.Requests()) != 1 {
		t.Errorf("first worker ran %d times", len(first.Requests()))
	}
	// The second worker's scripted backend is the last registered one.
}

// TestRedeliveryOfUnstartedWork: a worker that fetched a job and died
// before claiming it (here: a consumer that fetches and walks away) does
// not lose it: another worker runs it, once. A worker that claimed a
// job and died before its handshake never started it: the job is
// submitted again (and a *WorkerLostError with Started false ends the run
// only after maxResubmits such deaths).
func TestRedeliveryOfUnstartedWork(t *testing.T) {
	n := startNATS(t)
	b := newPoolBackend(t, n, nil)
	nc := n.connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cons, err := js.CreateOrUpdateConsumer(ctx, b.res.workName, jetstream.ConsumerConfig{
		Durable: consumerName("scripted"), FilterSubject: workSubject("agentcli", "scripted"),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Second, MaxDeliver: -1, MaxAckPending: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	steal := func() jetstream.Msg {
		t.Helper()
		for range 100 {
			batch, err := cons.Fetch(1, jetstream.FetchMaxWait(100*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			for m := range batch.Messages() {
				return m
			}
		}
		t.Fatal("no job to steal")
		return nil
	}

	// 1. Fetched, never claimed: redelivered after AckWait.
	done := make(chan error, 1)
	var res *agentcli.Result
	go func() {
		var err error
		res, err = b.Run(ctx, &agentcli.Request{Prompt: "redeliver me"})
		done <- err
	}()
	_ = steal() // and never acked
	local := scripted(agentclitest.Reply("ran", "s"), agentcli.Capabilities{})
	w := startWorker(t, n, local, nil)
	select {
	case err := <-done:
		if err != nil || res.Text != "ran" {
			t.Fatalf("redelivered run = %+v, %v", res, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("redelivered run did not finish")
	}
	if len(local.Requests()) != 1 {
		t.Fatalf("ran %d times", len(local.Requests()))
	}
	w.stop()
	<-w.done
	w.done <- nil

	// 2. Claimed by workers that died before their handshake, every
	// time: submitted again (the job never started), maxResubmits
	// times in all, then a *WorkerLostError whose Started is false.
	go func() {
		_, err := b.Run(ctx, &agentcli.Request{Prompt: "orphan"})
		done <- err
	}()
	orphan := func(ghost string) {
		t.Helper()
		m := steal()
		var j job
		if err := json.Unmarshal(m.Data(), &j); err != nil {
			t.Fatal(err)
		}
		if j.Req.Prompt != "orphan" {
			t.Fatalf("stole %q", j.Req.Prompt)
		}
		if _, err := b.res.claims.Create(ctx, j.ID, []byte(claimValue(ghost, "1"))); err != nil {
			t.Fatal(err)
		}
		_ = m.Ack()
	}
	for i := range maxResubmits {
		orphan("ghost" + strconv.Itoa(i))
	}
	select {
	case err := <-done:
		var lost *WorkerLostError
		if !errors.As(err, &lost) || lost.Started || lost.Worker != "ghost"+strconv.Itoa(maxResubmits-1) ||
			lost.tries != maxResubmits || !strings.Contains(err.Error(), fmt.Sprintf("last of %d workers", maxResubmits)) {
			t.Fatalf("orphaned run: %v (%T)", err, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("orphaned run did not end")
	}

	// 3. Once, then a live worker: it runs.
	go func() {
		var err error
		res, err = b.Run(ctx, &agentcli.Request{Prompt: "orphan"})
		done <- err
	}()
	orphan("ghost")
	local.Push(agentclitest.Reply("ran after all", "s"))
	startWorker(t, n, local, nil)
	select {
	case err := <-done:
		if err != nil || res.Text != "ran after all" {
			t.Fatalf("resubmitted run = %+v, %v", res, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("resubmitted run did not finish")
	}
}

// TestCancelWhileQueued: a run cancelled before any worker took it is
// withdrawn: a worker that starts later does not run it.
func TestCancelWhileQueued(t *testing.T) {
	n := startNATS(t)
	b := newPoolBackend(t, n, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := b.Run(ctx, &agentcli.Request{Prompt: "too late"})
	if !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	local := scripted(agentclitest.Reply("x", "s"), agentcli.Capabilities{})
	startWorker(t, n, local, nil)
	local.Push() // nothing
	if res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "next"}); err != nil || res.Text != "x" {
		t.Fatalf("next run = %+v, %v", res, err)
	}
	var prompts []string
	for _, r := range local.Requests() {
		prompts = append(prompts, r.Prompt)
	}
	if strings.Join(prompts, ",") != "next" {
		t.Errorf("worker ran %v", prompts)
	}
}

// TestLargeMessages: a 50 MB tool output crosses in pieces and arrives
// whole; a 2 MB prompt (over the 1 MB max_payload) goes through the
// blob store.
func TestLargeMessages(t *testing.T) {
	n := startNATS(t)
	big := strings.Repeat("0123456789abcdef", 50<<20/16)
	call := agentclitest.Call{
		Events: []agentcli.Event{
			{Kind: agentcli.EventToolResult, ToolResult: &agentcli.ToolResult{ID: "t", Output: big}},
		},
		Result: &agentcli.Result{Text: "read it", SessionID: "s"},
	}
	local := scripted(call, agentcli.Capabilities{})
	// 50 MB through a worker, a caller and a server in one process
	// under the race detector starve the heartbeats on 2 cores: a
	// realistic silence allowance (the default is 10 s).
	wo := testWorkerOptions()
	wo.CallerDeadAfter = 5 * time.Second
	startWorker(t, n, local, wo)
	opts := testOptions()
	opts.WorkerDeadAfter = 5 * time.Second
	b := newPoolBackend(t, n, opts)
	prompt := strings.Repeat("p", 2<<20)
	var out string
	for ev, err := range b.Stream(context.Background(), &agentcli.Request{Prompt: prompt}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == agentcli.EventToolResult {
			out = ev.ToolResult.Output
		}
	}
	if out != big {
		t.Errorf("tool output: %d bytes, want %d", len(out), len(big))
	}
	if reqs := local.Requests(); len(reqs) != 1 || reqs[0].Prompt != prompt {
		t.Errorf("worker got a prompt of %d bytes", len(local.Requests()[0].Prompt))
	}
}

// logWriter is a backend that writes a wire-log record per event, the
// way the real backends do.
type logWriter struct{ *agentclitest.Backend }

func (l logWriter) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		for ev, err := range l.Backend.Stream(ctx, req) {
			if req.WireLog != nil && err == nil {
				_, _ = req.WireLog.Write([]byte(`{"t":"out","kind":"` + string(ev.Kind) + `"}` + "\n"))
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// TestWireLogCallerSide: the records the worker's backend writes to
// Request.WireLog are written, in order and one Write each, to the
// caller's writer.
func TestWireLogCallerSide(t *testing.T) {
	n := startNATS(t)
	local := logWriter{scripted(agentclitest.Reply("logged", "s"), agentcli.Capabilities{})}
	startWorker(t, n, local, nil)
	b := newPoolBackend(t, n, nil)
	var w recordWriter
	var kinds []string
	for ev, err := range b.Stream(context.Background(), &agentcli.Request{Prompt: "x", WireLog: &w}) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, `{"t":"out","kind":"`+string(ev.Kind)+`"}`+"\n")
	}
	if strings.Join(w.records, "|") != strings.Join(kinds, "|") {
		t.Errorf("wire log records %q, want %q", w.records, kinds)
	}
}

type recordWriter struct {
	mu      sync.Mutex
	records []string
}

func (r *recordWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.records = append(r.records, string(p))
	r.mu.Unlock()
	return len(p), nil
}

// counting is a backend that yields n events as fast as it is read and
// counts them.
type counting struct {
	*agentclitest.Backend
	n        int
	produced atomic.Int64
}

func (c *counting) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		if req.Prompt != "flood" {
			for ev, err := range c.Backend.Stream(ctx, req) {
				if !yield(ev, err) {
					return
				}
			}
			return
		}
		for i := 0; i < c.n; i++ {
			c.produced.Add(1)
			if !yield(agentcli.Event{Kind: agentcli.EventTextDelta, Text: "x"}, nil) {
				return
			}
		}
		yield(agentcli.Event{Kind: agentcli.EventResult, Result: &agentcli.Result{Text: "flooded"}}, nil)
	}
}

// TestBackPressure: a consumer that reads slowly holds its own run back
// (the worker produces at most a window ahead of it) while another run on
// the same worker goes at full speed.
func TestBackPressure(t *testing.T) {
	n := startNATS(t)
	local := &counting{Backend: scripted(agentclitest.Reply("fast", "s"), agentcli.Capabilities{}), n: 2000}
	startWorker(t, n, local, nil)
	opts := testOptions()
	opts.Window = 32
	b := newPoolBackend(t, n, opts)
	ctx := context.Background()
	consumed := 0
	maxAhead := int64(0)
	for ev, err := range b.Stream(ctx, &agentcli.Request{Prompt: "flood"}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != agentcli.EventTextDelta {
			continue
		}
		consumed++
		if consumed == 50 {
			// Stalled here: the worker must not run ahead.
			time.Sleep(300 * time.Millisecond)
			maxAhead = local.produced.Load() - int64(consumed)
			// The stalled run is still stalled while this one runs: it
			// must not wait for it.
			octx, cancel := context.WithTimeout(ctx, 30*time.Second)
			res, err := b.Run(octx, &agentcli.Request{Prompt: "other"})
			cancel()
			if err != nil || res.Text != "fast" {
				t.Fatalf("other run behind a stalled consumer = %+v, %v", res, err)
			}
		}
	}
	if consumed != 2000 {
		t.Errorf("consumed %d events", consumed)
	}
	// The window (32 frames) plus what the local loop holds.
	if maxAhead > 40 || maxAhead < 1 {
		t.Errorf("worker produced %d events ahead of a stalled consumer, want at most about the window (32)", maxAhead)
	}
}

// TestLiveSessionCallbacks: a live session's OnText and OnPermission run
// in the caller for every turn; an interrupt ends a pending permission
// callback's context (and the worker refuses by default); a turn over
// Request.Timeout ends with a *TimeoutError and the session goes on.
func TestLiveSessionCallbacks(t *testing.T) {
	n := startNATS(t)
	local := agentclitest.NewBackend()
	local.Caps = askCaps
	startWorker(t, n, local, nil)
	b := newPoolBackend(t, n, nil)
	ctx := context.Background()

	var mu sync.Mutex
	var texts []string
	asked := make(chan struct{}, 1)
	ctxEnded := make(chan struct{}, 1)
	onPerm := func(ctx context.Context, pr *agentcli.PermissionRequest) agentcli.PermissionDecision {
		if pr.Tool.ID == "hang" {
			asked <- struct{}{}
			<-ctx.Done()
			ctxEnded <- struct{}{}
			return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
		}
		return agentcli.PermissionDecision{Kind: agentcli.AllowAlways}
	}
	s, err := b.StartSession(ctx, &agentcli.Request{Permission: agentcli.PermissionAsk, OnPermission: onPerm,
		Timeout: 500 * time.Millisecond, OnText: func(t string) { mu.Lock(); texts = append(texts, t); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	one := agentclitest.Reply("first answer", "sid")
	one.Ask = []agentcli.PermissionRequest{{Tool: agentcli.ToolUse{ID: "ok", Name: "Read"}}}
	local.Push(one)
	if res, err := s.Run(ctx, "one"); err != nil || res.Text != "first answer" {
		t.Fatalf("turn 1 = %+v, %v", res, err)
	}
	mu.Lock()
	got := strings.Join(texts, "")
	mu.Unlock()
	if got != "first answer" {
		t.Errorf("OnText got %q", got)
	}
	if s.ID() != "sid" {
		t.Errorf("ID = %q", s.ID())
	}

	hang := agentclitest.Reply("never", "sid")
	hang.Ask = []agentcli.PermissionRequest{{Tool: agentcli.ToolUse{ID: "hang", Name: "Bash"}}}
	local.Push(hang)
	done := make(chan error, 1)
	go func() { _, err := s.Run(ctx, "two"); done <- err }()
	<-asked
	if err := s.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctxEnded:
	case <-time.After(3 * time.Second):
		t.Fatal("the pending callback's context did not end at the interrupt")
	}
	if err := <-done; !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("interrupted turn: %v", err)
	}
	ds := local.Decisions()
	if len(ds) != 2 || ds[0].Decision.Kind != agentcli.AllowAlways || !ds[1].Default {
		t.Errorf("decisions at the worker: %+v", ds)
	}

	slow := agentclitest.Reply("too slow", "sid")
	slow.Delay = 400 * time.Millisecond
	local.Push(slow)
	_, err = s.Run(ctx, "three")
	var te *agentcli.TimeoutError
	if !errors.As(err, &te) || te.Timeout != 500*time.Millisecond {
		t.Fatalf("slow turn: %v (%T)", err, err)
	}
	local.Push(agentclitest.Reply("still here", "sid"))
	if res, err := s.Run(ctx, "four"); err != nil || res.Text != "still here" {
		t.Fatalf("turn after a timeout = %+v, %v", res, err)
	}
}

// TestForkAndNewIDThroughThePool: with portable sessions, a one-shot fork
// runs on a worker that never saw the source (restored from the store)
// and the fork, a session of its own with the source's history, is saved
// under its id; a chosen id names the new session, and an id the store
// holds is refused by a worker whose disk does not have it; a live
// session started as a fork whose worker dies before a turn ended forks
// the source again elsewhere, and once a turn has ended it moves as
// itself (its own id resumed, not forked again).
func TestForkAndNewIDThroughThePool(t *testing.T) {
	rig := newPortableRig(t)
	b, log := rig.b, rig.log
	ctx := context.Background()
	a := rig.worker(t, "A")
	res, err := b.Run(ctx, &agentcli.Request{Prompt: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	src := res.SessionID
	_ = a.kill()

	w := rig.worker(t, "B")
	res, err = b.Run(ctx, &agentcli.Request{Prompt: "f1", SessionID: src, ForkSession: true})
	if err != nil {
		t.Fatalf("fork: %v", err)
	}
	fork := res.SessionID
	if fork == "" || fork == src {
		t.Fatalf("the fork's id %q (source %q)", fork, src)
	}
	const chosen = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	if res, err := b.Run(ctx, &agentcli.Request{Prompt: "n1", NewSessionID: chosen}); err != nil || res.SessionID != chosen {
		t.Fatalf("a chosen id: %+v, %v", res, err)
	}
	_ = w.kill()

	// A worker whose disk has neither: the fork resumes from the store,
	// the chosen id is in use there.
	w = rig.worker(t, "C")
	if _, err := b.Run(ctx, &agentcli.Request{Prompt: "f2", SessionID: fork}); err != nil {
		t.Fatalf("resuming the fork: %v", err)
	}
	_, err = b.Run(ctx, &agentcli.Request{Prompt: "n2", NewSessionID: chosen})
	var re *agentcli.RequestError
	if !errors.As(err, &re) || re.Field != "NewSessionID" {
		t.Errorf("a chosen id the store holds: %v, want an *agentcli.RequestError on NewSessionID", err)
	}

	// A live fork whose worker dies before its first turn forks again;
	// after a turn, it moves as itself.
	s, err := b.StartSession(ctx, &agentcli.Request{SessionID: src, ForkSession: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = w.kill()
	w = rig.worker(t, "D")
	if _, err := s.Run(ctx, "l1"); err != nil {
		t.Fatalf("the live fork's first turn, moved: %v", err)
	}
	live := s.ID()
	_ = w.kill()
	rig.worker(t, "E")
	if _, err := s.Run(ctx, "l2"); err != nil {
		t.Fatalf("the live fork's second turn, moved: %v", err)
	}
	if s.ID() != live {
		t.Errorf("the session's id went from %q to %q when it moved", live, s.ID())
	}

	var got []string
	for _, r := range log.all() {
		got = append(got, fmt.Sprintf("%s:%s:%s[%s]", r.Worker, r.Prompt, sessionName(r.Session, src, fork, chosen, live), strings.Join(r.History, ",")))
	}
	want := []string{"A:t1:src[]", "B:f1:fork[t1]", "B:n1:chosen[]", "C:f2:fork[t1,f1]", "D:l1:live[t1]", "E:l2:live[t1,l1]"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("turns\n got %v\nwant %v", got, want)
	}
	if live == src || live == fork || live == "" {
		t.Errorf("the live fork's id %q", live)
	}
}

// portableRig is a pool whose workers run transcriptBackends (each
// keeping its sessions on a disk of its own) with a fakePorter: a session
// reaches another worker only through the pool's session store.
type portableRig struct {
	n      *natsServer
	b      *Backend
	log    *turnLog
	porter *fakePorter
}

func newPortableRig(t *testing.T) *portableRig {
	n := startNATS(t)
	return &portableRig{n: n, b: newPoolBackend(t, n, nil), log: &turnLog{}, porter: &fakePorter{}}
}

// worker starts a worker named id.
func (r *portableRig) worker(t *testing.T, id string) *testWorker {
	o := testWorkerOptions()
	o.ID, o.Sessions = id, r.porter
	return startWorker(t, r.n, newTranscriptBackend(id, r.log, agentclitest.Reply("ok", "x")), o)
}

// sessionOn starts worker id and a live session on it, whose first turn
// "t1" it runs.
func (r *portableRig) sessionOn(t *testing.T, id string) (*testWorker, agentcli.Session) {
	t.Helper()
	w := r.worker(t, id)
	s, err := r.b.StartSession(context.Background(), &agentcli.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	return w, s
}

// sessionName names id as one of the test's sessions.
func sessionName(id, src, fork, chosen, live string) string {
	for name, v := range map[string]string{"src": src, "fork": fork, "chosen": chosen, "live": live} {
		if id == v {
			return name
		}
	}
	return id
}

// TestContinueThroughThePool: Request.Continue resumes the newest session
// the pool's store holds for Dir (as the caller gave it), on a worker
// that never ran it; ListSessions lists them newest first; Continue
// with ForkSession forks it; in a directory without sessions Continue
// fails with ErrNoSession before anything is queued; a live session
// started with Continue resumes it too.
func TestContinueThroughThePool(t *testing.T) {
	rig := newPortableRig(t)
	b, log := rig.b, rig.log
	ctx := context.Background()
	dirA, dirB := t.TempDir(), t.TempDir()
	w := rig.worker(t, "A")
	run := func(req agentcli.Request) string {
		t.Helper()
		res, err := b.Run(ctx, &req)
		if err != nil {
			t.Fatalf("%s: %v", req.Prompt, err)
		}
		return res.SessionID
	}
	older := run(agentcli.Request{Prompt: "a1", Dir: dirA})
	time.Sleep(20 * time.Millisecond) // distinct store times
	newer := run(agentcli.Request{Prompt: "a2", Dir: dirA})
	time.Sleep(20 * time.Millisecond)
	other := run(agentcli.Request{Prompt: "b1", Dir: dirB})
	_ = w.kill()
	rig.worker(t, "B")

	list, err := agentcli.ListSessions(ctx, b, dirA)
	if err != nil || len(list) != 2 || list[0].ID != newer || list[1].ID != older || list[0].Updated.IsZero() {
		t.Fatalf("ListSessions(dirA) = %+v, %v; want %s then %s", list, err, newer, older)
	}
	if got := run(agentcli.Request{Prompt: "a3", Dir: dirA, Continue: true}); got != newer {
		t.Errorf("Continue in dirA resumed %s, want %s", got, newer)
	}
	forked := run(agentcli.Request{Prompt: "b2", Dir: dirB, Continue: true, ForkSession: true})
	if forked == other || forked == "" {
		t.Errorf("Continue with ForkSession in dirB gave %q, want a fork of %s", forked, other)
	}
	_, err = b.Run(ctx, &agentcli.Request{Prompt: "c1", Dir: t.TempDir(), Continue: true})
	if !errors.Is(err, agentcli.ErrNoSession) {
		t.Errorf("Continue in an empty directory: %v, want ErrNoSession", err)
	}
	s, err := b.StartSession(ctx, &agentcli.Request{Dir: dirA, Continue: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(ctx, "a4"); err != nil {
		t.Fatal(err)
	}
	if s.ID() != newer {
		t.Errorf("the live session continued %s, want %s", s.ID(), newer)
	}
	var got []string
	for _, r := range log.all() {
		got = append(got, fmt.Sprintf("%s:%s[%s]", r.Worker, r.Prompt, strings.Join(r.History, ",")))
	}
	want := "A:a1[] A:a2[] A:b1[] B:a3[a2] B:b2[b1] B:a4[a2,a3]"
	if strings.Join(got, " ") != want {
		t.Errorf("turns %v, want %s", got, want)
	}
}
