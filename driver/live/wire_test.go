//go:build unix

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// transcript renders a session's yields, turn by turn, durations zeroed.
type transcript struct{ b strings.Builder }

func (tr *transcript) add(ev agentcli.Event, err error) {
	if err != nil {
		fmt.Fprintf(&tr.b, "error %T: %v\n", err, err)
		return
	}
	if ev.Result != nil {
		r := *ev.Result
		r.Duration = 0
		ev.Result = &r
	}
	j, _ := json.Marshal(ev)
	tr.b.Write(j)
	tr.b.WriteByte('\n')
}

// purposeRedactor redacts "on purpose" from text.
type purposeRedactor struct{}

func (purposeRedactor) Redact(s string) string {
	return strings.ReplaceAll(s, "on purpose", "[REDACTED]")
}
func (purposeRedactor) Error(err error) error { return err }

// toyWire starts a toy session recording its wire log in log.
func toyWire(t *testing.T, start string, req *agentcli.Request, opts *agentcli.Options, log *bytes.Buffer) (*Session, error) {
	t.Helper()
	w := wirelog.NewWriter(log, wirelog.Start{Backend: "toy", Deltas: true, Live: true, Time: time.Now()})
	s, _, err := startToyWith(t, start, req, opts, func(c *Config) {
		c.Wire = w
		c.Redactor = purposeRedactor{}
	})
	return s, err
}

// replayToy replays a toy session's log.
func replayToy(t *testing.T, log []byte, req *agentcli.Request, opts agentcli.Options) *transcript {
	t.Helper()
	return replayToyWith(t, log, req, opts, func(h *Host) Proto { return &toyProto{h: h, ready: make(chan int, 1)} })
}

// replayToyWith replays a log with the protocol proto makes.
func replayToyWith(t *testing.T, log []byte, req *agentcli.Request, opts agentcli.Options, proto func(h *Host) Proto) *transcript {
	t.Helper()
	rd := wirelog.NewReader(bytes.NewReader(log))
	if rec, err := rd.Next(); err != nil || rec.T != "start" || !rec.Start.Live {
		t.Fatalf("start record %+v %v", rec, err)
	}
	var tr transcript
	for ev, err := range Replay(Config{Backend: "toy", Request: req, Options: opts, Proto: proto}, rd) {
		tr.add(ev, err)
	}
	return &tr
}

// A live session's wire log replays into the events and errors its turns
// yielded: text, malformed and over-long lines, permission requests (the
// answers are in the log), an interrupted turn, a cancelled one, one that
// timed out, a turn the consumer broke off, and the CLI's death.
func TestWireLogReplay(t *testing.T) {
	var log bytes.Buffer
	req := &agentcli.Request{Permission: agentcli.PermissionDeny}
	opts := agentcli.Options{MaxLineBytes: 4096}
	s, err := toyWire(t, "", req, &opts, &log)
	if err != nil {
		t.Fatal(err)
	}
	var live transcript
	turn := func(ctx context.Context, prompt string) {
		for ev, err := range s.Stream(ctx, prompt) {
			live.add(ev, err)
		}
	}
	turn(context.Background(), "echo hello wire log")
	turn(context.Background(), "garbage")
	turn(context.Background(), "long 10000")
	turn(context.Background(), "ask 3")
	// Interrupted.
	done := make(chan struct{})
	go func() {
		defer close(done)
		turn(context.Background(), "stall")
	}()
	waitTurn(t, s)
	s.Interrupt(context.Background())
	<-done
	// Cancelled by a deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	turn(ctx, "stall")
	cancel()
	// Broken off by the consumer after its first event.
	for ev, err := range s.Stream(context.Background(), "stall") {
		live.add(ev, err)
		break
	}
	live.add(agentcli.Event{}, &interruptedError{backend: "toy"}) // how a replay ends it (documented)
	turn(context.Background(), "echo still here")
	turn(context.Background(), "die")
	s.Close()

	got := replayToy(t, log.Bytes(), req, opts)
	// The log's stderr is redacted (a backend's session redacts what it
	// yields the same way).
	want := strings.ReplaceAll(live.b.String(), "on purpose", "[REDACTED]")
	if got.b.String() != want {
		t.Errorf("replay differs from the live session\nlive:\n%s\nreplay:\n%s\nlog:\n%s", want, got.b.String(), log.String())
	}
	for _, rec := range []string{`{"t":"turn"}`, `{"t":"abort","why":"interrupt"}`, `{"t":"interrupt"}`,
		`{"t":"abort","why":"canceled","deadline":true}`, `{"t":"abort","why":"break"}`, `{"t":"ready"}`, `"too_long":`} {
		if !strings.Contains(log.String(), rec) {
			t.Errorf("the log lacks %s", rec)
		}
	}
	if strings.Contains(log.String(), "on purpose") || !strings.Contains(log.String(), "[REDACTED]") {
		t.Errorf("the exit record's stderr was not redacted:\n%s", log.String())
	}
}

// A turn timed out by Request.Timeout, a killed session and Close mid-turn
// replay too.
func TestWireLogReplayTimeoutAndKill(t *testing.T) {
	var log bytes.Buffer
	req := &agentcli.Request{Timeout: 300 * time.Millisecond}
	s, err := toyWire(t, "", req, nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	var live transcript
	for _, p := range []string{"echo one", "stall", "echo two", "deaf"} {
		for ev, err := range s.Stream(context.Background(), p) {
			live.add(ev, err)
		}
	}
	s.Close()
	got := replayToy(t, log.Bytes(), req, agentcli.Options{})
	if got.b.String() != live.b.String() {
		t.Errorf("replay differs from the live session\nlive:\n%s\nreplay:\n%s\nlog:\n%s", live.b.String(), got.b.String(), log.String())
	}
	if !strings.Contains(live.b.String(), "TimeoutError") || !strings.Contains(log.String(), `"t":"kill"`) {
		t.Errorf("the session did not time out and get killed:\n%s", live.b.String())
	}
}

// A session that failed to start replays into the start's error.
func TestWireLogReplayStartFailure(t *testing.T) {
	for _, start := range []string{"exit", "silent"} {
		t.Run(start, func(t *testing.T) {
			var log bytes.Buffer
			w := wirelog.NewWriter(&log, wirelog.Start{Backend: "toy", Live: true})
			self, _ := os.Executable()
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			_, err := Start(ctx, Config{
				Backend: "toy", Path: self, Options: agentcli.Options{KillGrace: testGrace},
				Env:   append(os.Environ(), "LIVE_FAKE_PEER=1", "LIVE_PEER_START="+start),
				Proto: func(h *Host) Proto { return &toyProto{h: h, ready: make(chan int, 1)} },
				Wire:  w,
			})
			if err == nil {
				t.Fatal("the start succeeded")
			}
			var live transcript
			live.add(agentcli.Event{}, err)
			got := replayToy(t, log.Bytes(), nil, agentcli.Options{})
			if got.b.String() != live.b.String() {
				t.Errorf("replay %s\nlive %s\nlog:\n%s", got.b.String(), live.b.String(), log.String())
			}
		})
	}
}

// A log cut short ends its replay with an error after what it holds; a
// log that does not match the protocol fails instead of hanging.
func TestWireLogReplayDamaged(t *testing.T) {
	var log bytes.Buffer
	s, err := toyWire(t, "", nil, nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "echo a"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	full := log.String()
	cut := full[:strings.Index(full, `{"t":"close"}`)]
	got := replayToy(t, []byte(cut), nil, agentcli.Options{})
	if !strings.Contains(got.b.String(), `"kind":"result"`) || !strings.Contains(got.b.String(), "ParseError") {
		t.Errorf("a cut log replays as\n%s", got.b.String())
	}
	// Cut right after the close record (a log read as soon as Close
	// returned, before the CLI's exit record): every event is there, and
	// the replay ends without an error.
	closed := full[:strings.Index(full, `{"t":"close"}`)+len(`{"t":"close"}`)+1]
	got = replayToy(t, []byte(closed), nil, agentcli.Options{})
	if !strings.Contains(got.b.String(), `"kind":"result"`) || strings.Contains(got.b.String(), "Error") {
		t.Errorf("a log that ends after its close record replays as\n%s", got.b.String())
	}
	// An extra in record: the replay would wait for a message the
	// protocol never sends.
	i := strings.Index(full, `{"t":"turn"}`)
	extra := full[:i] + `{"t":"in","text":"?\n"}` + "\n" + full[i:]
	defer func(d time.Duration) { replayWait = d }(replayWait)
	replayWait = time.Second
	got = replayToy(t, []byte(extra), nil, agentcli.Options{})
	if !strings.Contains(got.b.String(), "ParseError") || !strings.Contains(got.b.String(), "another version") {
		t.Errorf("a mismatched log replays as\n%s", got.b.String())
	}
}

// wireSwitchProto is the toy protocol with switches that send a message
// (which the peer ignores), as a CLI's do; its first steer goes into the
// running turn, later ones are queued.
type wireSwitchProto struct {
	*toyProto
	steers atomic.Int32
}

func (p *wireSwitchProto) SetModel(ctx context.Context, model string) error {
	return p.send(ctx, peerMsg{Op: "model", Text: model})
}

func (p *wireSwitchProto) CheckPermission(agentcli.PermissionMode) error { return nil }

func (p *wireSwitchProto) SetPermission(ctx context.Context, m agentcli.PermissionMode) error {
	return p.send(ctx, peerMsg{Op: "mode", Text: string(m)})
}

func (p *wireSwitchProto) Steer(ctx context.Context, prompt string) error {
	if p.steers.Add(1) > 1 {
		return ErrSteerQueue
	}
	return p.send(ctx, peerMsg{Op: "steer", Text: prompt})
}

// A session that switched model and permission mode and steered a turn
// (into the turn, and queued as a follow-up) replays into the events it
// yielded: the switches' messages do not split or end a turn, and a
// steered Stream yields one result.
func TestWireLogReplaySwitches(t *testing.T) {
	var log bytes.Buffer
	req := &agentcli.Request{OnPermission: func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}}
	w := wirelog.NewWriter(&log, wirelog.Start{Backend: "toy", Deltas: true, Live: true, Time: time.Now()})
	s, _, err := startToyWith(t, "", req, nil, func(c *Config) {
		c.Wire = w
		mk := c.Proto
		c.Proto = func(h *Host) Proto { return &wireSwitchProto{toyProto: mk(h).(*toyProto)} }
	})
	if err != nil {
		t.Fatal(err)
	}
	var live transcript
	var mu sync.Mutex
	turn := func(prompt string) {
		for ev, err := range s.Stream(context.Background(), prompt) {
			mu.Lock()
			live.add(ev, err)
			mu.Unlock()
		}
	}
	ctx := context.Background()
	turn("echo one")
	if err := s.SetModel(ctx, "m2"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPermission(ctx, agentcli.PermissionAsk); err != nil {
		t.Fatal(err)
	}
	turn("echo two")
	done := make(chan struct{})
	go func() {
		defer close(done)
		turn("sleep 300ms")
	}()
	waitTurn(t, s)
	for _, p := range []string{"into the turn", "echo follow up"} {
		if err := s.Steer(ctx, p); err != nil {
			t.Fatalf("Steer(%q): %v", p, err)
		}
	}
	<-done
	turn("echo after")
	s.Close()

	if n := strings.Count(live.b.String(), `"kind":"result"`); n != 4 {
		t.Fatalf("%d results live, want 4 (the steered Stream's one):\n%s", n, live.b.String())
	}
	got := replayToyWith(t, log.Bytes(), req, agentcli.Options{}, func(h *Host) Proto {
		return &wireSwitchProto{toyProto: &toyProto{h: h, ready: make(chan int, 1)}}
	})
	if got.b.String() != live.b.String() {
		t.Errorf("replay differs from the live session\nlive:\n%s\nreplay:\n%s\nlog:\n%s", live.b.String(), got.b.String(), log.String())
	}
	for _, rec := range []string{`{"t":"model","model":"m2"}`, `{"t":"permission","mode":"ask"}`, `{"t":"steer"}`, `{"t":"turn","steered":true}`} {
		if !strings.Contains(log.String(), rec) {
			t.Errorf("the log lacks %s", rec)
		}
	}
}

// localSwitchProto is the toy protocol with a model switch that sends
// nothing: the model is kept and reported with each result, as codex's
// app-server protocol does (the model goes with the next turn/start). It
// takes a while to take effect, so that a replay that does not wait for
// the switch to return starts the next turn with the old model.
type localSwitchProto struct {
	*toyProto
	mu    sync.Mutex
	model string
}

func (p *localSwitchProto) SetModel(ctx context.Context, model string) error {
	time.Sleep(50 * time.Millisecond)
	p.mu.Lock()
	p.model = model
	p.mu.Unlock()
	return nil
}

func (p *localSwitchProto) Line(line []byte) {
	var m peerMsg
	if json.Unmarshal(line, &m) == nil && m.Ev == "end" {
		p.mu.Lock()
		model := p.model
		p.mu.Unlock()
		p.h.SetSessionID(m.Session)
		p.h.EndTurn(TurnEnd{Result: &agentcli.Result{Text: m.Text, SessionID: m.Session, Model: model}})
		return
	}
	p.toyProto.Line(line)
}

// A switch that sends nothing and only changes what the protocol does
// next replays before the next turn begins, as it was made live: the
// replayed result reports the switched model.
func TestWireLogReplayLocalSwitch(t *testing.T) {
	var log bytes.Buffer
	w := wirelog.NewWriter(&log, wirelog.Start{Backend: "toy", Deltas: true, Live: true, Time: time.Now()})
	s, _, err := startToyWith(t, "", nil, nil, func(c *Config) {
		c.Wire = w
		mk := c.Proto
		c.Proto = func(h *Host) Proto { return &localSwitchProto{toyProto: mk(h).(*toyProto), model: "m1"} }
	})
	if err != nil {
		t.Fatal(err)
	}
	var live transcript
	turn := func(prompt string) {
		for ev, err := range s.Stream(context.Background(), prompt) {
			live.add(ev, err)
		}
	}
	turn("echo one")
	if err := s.SetModel(context.Background(), "m2"); err != nil {
		t.Fatal(err)
	}
	turn("echo two")
	s.Close()
	if !strings.Contains(live.b.String(), `"model":"m2"`) {
		t.Fatalf("the live session did not report the switched model:\n%s", live.b.String())
	}
	got := replayToyWith(t, log.Bytes(), nil, agentcli.Options{}, func(h *Host) Proto {
		return &localSwitchProto{toyProto: &toyProto{h: h, ready: make(chan int, 1)}, model: "m1"}
	})
	if got.b.String() != live.b.String() {
		t.Errorf("replay differs from the live session\nlive:\n%s\nreplay:\n%s\nlog:\n%s", live.b.String(), got.b.String(), log.String())
	}
}
