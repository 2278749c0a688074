//go:build unix

package live

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// slowStop runs a turn whose CLI ends it slow after the interrupt, on a
// session with opts (KillGrace testGrace unless set), interrupts it and
// returns the session, the CLI's pid, how long the turn took to end
// after the interrupt and Interrupt's error. The turn must end with
// ErrInterrupted.
func slowStop(t *testing.T, opts *agentcli.Options, slow time.Duration, edit func(*Config)) (*Session, int, time.Duration, error) {
	t.Helper()
	s, pid, err := startToyWith(t, "", nil, opts, edit)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := collect(s, context.Background(), "slowstop "+slow.String())
		done <- err
	}()
	waitTurn(t, s)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ierr := s.Interrupt(ctx)
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the turn never ended")
	}
	took := time.Since(began)
	t.Logf("turn ended %v after the interrupt: %v (Interrupt: %v)", took, err, ierr)
	if !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("turn error %v, want ErrInterrupted", err)
	}
	return s, pid, took, ierr
}

// TestInterruptGraceDefault: a CLI that takes several times the kill
// grace period to end an interrupted turn (as opencode did on a loaded
// machine) keeps its session by default: Interrupt returns nil, the
// session is alive and takes the next turn.
func TestInterruptGraceDefault(t *testing.T) {
	s, _, took, ierr := slowStop(t, &agentcli.Options{KillGrace: testGrace}, 2*time.Second, nil)
	if ierr != nil {
		t.Errorf("Interrupt: %v", ierr)
	}
	if took < 2*time.Second {
		t.Errorf("the turn ended %v after the interrupt, before the CLI ended it", took)
	}
	if s.Err() != nil {
		t.Fatalf("the session was killed: %v", s.Err())
	}
	_, res, err := collect(s, context.Background(), "echo again")
	if err != nil || !strings.HasPrefix(res.Text, "again") {
		t.Fatalf("next turn: %+v, %v", res, err)
	}
}

// TestInterruptGraceOption: Options.InterruptGrace bounds the wait: a
// CLI slower than it gets its session killed (a *ProtocolError naming the
// grace), the turn ending with ErrInterrupted within the grace, not when
// the CLI would have ended it; Config.InterruptGrace, set, wins over it.
func TestInterruptGraceOption(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  time.Duration
		cfg  time.Duration
		want time.Duration
	}{
		{"option", 500 * time.Millisecond, 0, 500 * time.Millisecond},
		{"config", 30 * time.Second, 700 * time.Millisecond, 700 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			var edit func(*Config)
			if c.cfg > 0 {
				edit = func(cfg *Config) { cfg.InterruptGrace = c.cfg }
			}
			s, pid, took, _ := slowStop(t, &agentcli.Options{KillGrace: testGrace, InterruptGrace: c.opt}, 5*time.Second, edit)
			if took < c.want || took > 4*time.Second {
				t.Errorf("the turn ended %v after the interrupt; want the grace, %v, and less than the CLI's 5 s", took, c.want)
			}
			if !errors.Is(s.Err(), agentcli.ErrProtocol) || !strings.Contains(s.Err().Error(), "within "+c.want.String()+" of an interrupt") {
				t.Fatalf("Err() = %v, want the unanswered interrupt within %v (a *ProtocolError)", s.Err(), c.want)
			}
			assertGone(t, pid)
		})
	}
}
