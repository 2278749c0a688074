//go:build unix

package live

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentcli/agentcli"
)

// streamAll runs one Stream and returns its events (results included) and
// error.
func streamAll(s *Session, prompt string) ([]agentcli.Event, error) {
	var evs []agentcli.Event
	for ev, err := range s.Stream(context.Background(), prompt) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func results(evs []agentcli.Event) []*agentcli.Result {
	var out []*agentcli.Result
	for _, ev := range evs {
		if ev.Kind == agentcli.EventResult {
			out = append(out, ev.Result)
		}
	}
	return out
}

// A protocol without a Steerer: steered input is queued, sent as
// follow-up turns of the same Stream, which ends with one result (the
// last turn's), and is refused outside a turn.
func TestSteerQueued(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	ctx := context.Background()
	if err := s.Steer(ctx, "echo early"); !errors.Is(err, agentcli.ErrNoTurn) {
		t.Fatalf("Steer before a turn = %v, want ErrNoTurn", err)
	}
	if err := s.Steer(ctx, "  "); err == nil {
		t.Fatal("an empty steer was taken")
	}
	type out struct {
		evs []agentcli.Event
		err error
	}
	done := make(chan out, 1)
	go func() {
		evs, err := streamAll(s, "sleep 300ms")
		done <- out{evs, err}
	}()
	waitTurn(t, s)
	for _, p := range []string{"echo steered words", "echo second"} {
		if err := s.Steer(ctx, p); err != nil {
			t.Fatalf("Steer(%q): %v", p, err)
		}
	}
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	rs := results(o.evs)
	if len(rs) != 1 {
		t.Fatalf("%d results, want 1: %+v", len(rs), o.evs)
	}
	if rs[0].Text != "second #3" || rs[0].Duration <= 0 {
		t.Errorf("result %+v, want the last follow-up's (turn 3) with a duration", rs[0])
	}
	var text strings.Builder
	for _, ev := range o.evs {
		if ev.Kind == agentcli.EventTextDelta {
			text.WriteString(ev.Text)
		}
	}
	if text.String() != "steered words second " {
		t.Errorf("deltas %q, want the follow-ups' text", text.String())
	}
	if o.evs[len(o.evs)-1].Kind != agentcli.EventResult {
		t.Errorf("the last event is %s, want the result", o.evs[len(o.evs)-1].Kind)
	}
	if err := s.Steer(ctx, "echo late"); !errors.Is(err, agentcli.ErrNoTurn) {
		t.Errorf("Steer between turns = %v, want ErrNoTurn", err)
	}
	_, res, err := collect(s, ctx, "echo after")
	if err != nil || res.Text != "after #4" {
		t.Errorf("next turn: %+v, %v", res, err)
	}
}

// Queued input is dropped when the turn is interrupted: the Stream ends
// with the interrupt, and nothing of the input reaches the CLI.
func TestSteerDroppedOnInterrupt(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := streamAll(s, "stall")
		done <- err
	}()
	waitTurn(t, s)
	if err := s.Steer(ctx, "echo never"); err != nil {
		t.Fatal(err)
	}
	if err := s.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("turn error %v, want ErrInterrupted", err)
	}
	_, res, err := collect(s, ctx, "echo next")
	if err != nil || res.Text != "next #2" {
		t.Errorf("next turn: %+v, %v (the dropped input ran?)", res, err)
	}
}

func TestSwitchUnsupported(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	var ue *agentcli.UnsupportedError
	if err := s.SetModel(context.Background(), "m"); !errors.As(err, &ue) {
		t.Errorf("SetModel = %v, want an UnsupportedError", err)
	}
	if err := s.SetPermission(context.Background(), agentcli.PermissionBypass); !errors.As(err, &ue) {
		t.Errorf("SetPermission = %v, want an UnsupportedError", err)
	}
	s.Close()
	if err := s.Steer(context.Background(), "echo x"); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Errorf("Steer after Close = %v, want ErrSessionClosed", err)
	}
}

// switchProto is the toy protocol with switchers and a native steer that
// records what it was asked; fail makes SetPermission fail, refuse
// refuses a mode up front, queue sends steered input back to the queue.
type switchProto struct {
	*toyProto
	mu      sync.Mutex
	calls   []string
	fail    atomic.Bool
	queue   atomic.Bool
	refuse  agentcli.PermissionMode
	during  func() // called inside SetPermission
	steered []string
}

func (p *switchProto) record(s string) {
	p.mu.Lock()
	p.calls = append(p.calls, s)
	p.mu.Unlock()
}

func (p *switchProto) SetModel(_ context.Context, model string) error {
	p.record("model " + model)
	return nil
}

func (p *switchProto) CheckPermission(m agentcli.PermissionMode) error {
	if m == p.refuse {
		return &agentcli.UnsupportedError{Backend: "toy", Feature: "SetPermission " + string(m)}
	}
	return nil
}

func (p *switchProto) SetPermission(_ context.Context, m agentcli.PermissionMode) error {
	p.record("permission " + string(m))
	if p.during != nil {
		p.during()
	}
	if p.fail.Load() {
		return errors.New("refused by the CLI")
	}
	return nil
}

func (p *switchProto) Steer(_ context.Context, prompt string) error {
	if p.queue.Load() {
		return ErrSteerQueue
	}
	p.mu.Lock()
	p.steered = append(p.steered, prompt)
	p.mu.Unlock()
	return nil
}

func startSwitchToy(t *testing.T, req *agentcli.Request) (*Session, *switchProto) {
	t.Helper()
	var sp *switchProto
	s, _, err := startToyWith(t, "", req, nil, func(c *Config) {
		mk := c.Proto
		c.Proto = func(h *Host) Proto {
			sp = &switchProto{toyProto: mk(h).(*toyProto), refuse: agentcli.PermissionPlan}
			return sp
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, sp
}

// SetPermission switches the session's own decisions with the CLI's; while
// the CLI switches, and after it failed to, the stricter mode decides.
func TestSetPermissionDecisions(t *testing.T) {
	var calls atomic.Int32
	cb := func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
		calls.Add(1)
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	}
	s, sp := startSwitchToy(t, &agentcli.Request{Permission: agentcli.PermissionBypass, OnPermission: cb})
	ctx := context.Background()
	answer := func() string {
		t.Helper()
		res, err := s.Run(ctx, "ask 1")
		if err != nil {
			t.Fatal(err)
		}
		return res.Text
	}
	denied := "reject_once (" + DeniedMessage + ")"
	if got := answer(); got != "allow_once" {
		t.Fatalf("bypass: %q", got)
	}
	// During a switch from bypass to deny, deny decides already.
	sp.during = func() {
		if m := s.permMode(); m != agentcli.PermissionDeny {
			t.Errorf("mode %q while switching to deny, want deny", m)
		}
	}
	if err := s.SetPermission(ctx, ""); err != nil { // the zero value: deny
		t.Fatal(err)
	}
	if got := answer(); got != denied || calls.Load() != 0 {
		t.Errorf("deny: %q after %d calls", got, calls.Load())
	}
	// During a switch from deny to ask, deny still decides.
	if err := s.SetPermission(ctx, agentcli.PermissionAsk); err != nil {
		t.Fatal(err)
	}
	if got := answer(); got != "allow_once" || calls.Load() != 1 {
		t.Errorf("ask: %q after %d calls", got, calls.Load())
	}
	sp.during = nil
	// A failed switch to bypass leaves ask; a failed one to deny leaves
	// deny.
	sp.fail.Store(true)
	if err := s.SetPermission(ctx, agentcli.PermissionBypass); err == nil {
		t.Fatal("a failed switch reported success")
	}
	if m := s.permMode(); m != agentcli.PermissionAsk {
		t.Errorf("after a failed switch to bypass: %q, want ask", m)
	}
	if err := s.SetPermission(ctx, agentcli.PermissionDeny); err == nil {
		t.Fatal("a failed switch reported success")
	}
	if m := s.permMode(); m != agentcli.PermissionDeny {
		t.Errorf("after a failed switch to deny: %q, want deny", m)
	}
	sp.fail.Store(false)
	// A mode the protocol refuses up front changes nothing.
	var ue *agentcli.UnsupportedError
	if err := s.SetPermission(ctx, agentcli.PermissionPlan); !errors.As(err, &ue) {
		t.Errorf("refused mode: %v", err)
	}
	if err := s.SetPermission(ctx, "yolo"); !errors.As(err, &ue) {
		t.Errorf("unknown mode: %v", err)
	}
	if m := s.permMode(); m != agentcli.PermissionDeny {
		t.Errorf("after refused switches: %q, want deny", m)
	}
	if err := s.SetModel(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetModel(ctx, ""); err == nil {
		t.Error("an empty model was taken")
	}
	sp.mu.Lock()
	got := strings.Join(sp.calls, ", ")
	sp.mu.Unlock()
	if want := "permission deny, permission ask, permission bypass, permission deny, model other"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
}

// PermissionAsk needs the session's callback.
func TestSetPermissionAskNeedsCallback(t *testing.T) {
	s, _ := startSwitchToy(t, &agentcli.Request{Permission: agentcli.PermissionBypass})
	var re *agentcli.RequestError
	if err := s.SetPermission(context.Background(), agentcli.PermissionAsk); !errors.As(err, &re) {
		t.Errorf("SetPermission(ask) without OnPermission = %v, want a RequestError", err)
	}
	if m := s.permMode(); m != agentcli.PermissionBypass {
		t.Errorf("mode %q after a refused switch", m)
	}
}

// A native steer goes to the protocol and queues nothing; ErrSteerQueue
// from it queues the input.
func TestSteerNativeAndFallback(t *testing.T) {
	s, sp := startSwitchToy(t, nil)
	ctx := context.Background()
	done := make(chan []agentcli.Event, 1)
	go func() {
		evs, _ := streamAll(s, "sleep 300ms")
		done <- evs
	}()
	waitTurn(t, s)
	if err := s.Steer(ctx, "echo native"); err != nil {
		t.Fatal(err)
	}
	sp.queue.Store(true)
	if err := s.Steer(ctx, "echo queued"); err != nil {
		t.Fatal(err)
	}
	rs := results(<-done)
	if len(rs) != 1 || rs[0].Text != "queued #2" {
		t.Fatalf("results %+v, want one, the queued follow-up's", rs)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if len(sp.steered) != 1 || sp.steered[0] != "echo native" {
		t.Errorf("the protocol steered %q", sp.steered)
	}
}
