//go:build unix

package live

// Hostile peers: a CLI that stops reading its stdin, floods permission
// requests before reading any answer, or answers a permission callback's
// request after its deadline. Each case fails (hangs, deadlocks, runs two
// callbacks at once) without the fix it guards.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// within runs f and fails t when it has not returned after d (the failure
// mode of these cases is "forever").
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// deafSession returns a session whose CLI has stopped reading its stdin.
func deafSession(t *testing.T) *Session {
	t.Helper()
	s, _ := mustToy(t, "", nil)
	if res, err := s.Run(context.Background(), "deafen"); err != nil || res.Text != "deaf now" {
		t.Fatalf("deafen: %v %v", res, err)
	}
	return s
}

// A prompt larger than the pipe, to a CLI that reads nothing: the turn's
// deadline still ends it (and the session, which can no longer be
// trusted, is killed with a protocol error).
//
// The deadline leaves the writer time to take the prompt up: a prompt
// given up while still queued, nothing of it written, rightly leaves the
// session alive (errUnsent), which is not this case. With 500 ms a
// loaded CI machine (a rehearsal beside the conformance suite) once
// did not start writing in time.
func TestDeafCLIPromptHonoursDeadline(t *testing.T) {
	s := deafSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), deafDeadline)
	defer cancel()
	var err error
	start := time.Now()
	within(t, 10*time.Second, "Run", func() {
		_, err = s.Run(ctx, "echo "+strings.Repeat("x", 1<<20))
	})
	t.Logf("Run returned after %v: %v", time.Since(start), err)
	var ce *agentcli.CanceledError
	if !errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run: %v; want a *CanceledError for the deadline", err)
	}
	within(t, 5*time.Second, "the session's death", func() { <-s.dead })
	if !errors.Is(s.Err(), agentcli.ErrProtocol) {
		t.Errorf("Err() = %v; want ErrProtocol (the prompt could not be sent)", s.Err())
	}
}

// deafDeadline is the deadline of a turn whose prompt a deaf CLI does not
// read (see TestDeafCLIPromptHonoursDeadline).
const deafDeadline = 2 * time.Second

// The same, timed out by Request.Timeout: a *TimeoutError.
func TestDeafCLIPromptHonoursTimeout(t *testing.T) {
	s, _ := mustToy(t, "", &agentcli.Request{Timeout: deafDeadline})
	if _, err := s.Run(context.Background(), "deafen"); err != nil {
		t.Fatal(err)
	}
	var err error
	within(t, 10*time.Second, "Run", func() {
		_, err = s.Run(context.Background(), "echo "+strings.Repeat("x", 1<<20))
	})
	if !errors.Is(err, agentcli.ErrTimeout) {
		t.Fatalf("Run: %v; want ErrTimeout", err)
	}
}

// Interrupt while the prompt cannot be written returns, and so does the
// turn.
func TestDeafCLIInterrupt(t *testing.T) {
	s := deafSession(t)
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background(), "echo "+strings.Repeat("y", 1<<20))
		done <- err
	}()
	waitWriting(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	within(t, 10*time.Second, "Interrupt", func() {
		if err := s.Interrupt(ctx); err != nil {
			t.Errorf("Interrupt: %v", err)
		}
	})
	var err error
	within(t, 10*time.Second, "the interrupted Run", func() { err = <-done })
	if !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("Run: %v; want ErrInterrupted", err)
	}
}

// waitWriting waits until the running turn's prompt is being written.
func waitWriting(t *testing.T, s *Session) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		running := s.turn != nil
		s.mu.Unlock()
		if running {
			time.Sleep(100 * time.Millisecond) // the writer is blocked by now
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no turn started")
}

// A CLI that floods permission requests and then stops reading: its
// answers wait in the session, the interrupt cannot be written, and the
// watchdog kills the session after the interrupt grace; Interrupt and the
// turn return.
func TestDeafCLIAfterFlood(t *testing.T) {
	s, _ := mustToy(t, "", &agentcli.Request{Permission: agentcli.PermissionDeny})
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background(), "askdeaf 5000")
		done <- err
	}()
	waitWriting(t, s)
	time.Sleep(300 * time.Millisecond) // the answers fill the pipe
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	within(t, 10*time.Second, "Interrupt", func() {
		if err := s.Interrupt(ctx); err != nil {
			t.Errorf("Interrupt: %v", err)
		}
	})
	var err error
	within(t, 10*time.Second, "the interrupted Run", func() { err = <-done })
	if !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("Run: %v; want ErrInterrupted", err)
	}
	if !errors.Is(s.Err(), agentcli.ErrProtocol) {
		t.Errorf("Err() = %v; want ErrProtocol", s.Err())
	}
}

// Thousands of permission requests before any answer is read, in deny
// mode: every one is refused and the turn ends (the refusals do not wait
// on the reader, which goes on reading the flood).
func TestPermissionFloodDeny(t *testing.T) {
	for _, mode := range []agentcli.PermissionMode{agentcli.PermissionDeny, agentcli.PermissionBypass} {
		t.Run(string(mode), func(t *testing.T) {
			s, _ := mustToy(t, "", &agentcli.Request{Permission: mode})
			const n = 50000
			var res *agentcli.Result
			var err error
			within(t, 60*time.Second, "the flooded turn", func() {
				res, err = s.Run(context.Background(), "askflood "+strconv.Itoa(n))
			})
			if err != nil {
				t.Fatal(err)
			}
			want := "map[reject_once:" + strconv.Itoa(n) + "]"
			if mode == agentcli.PermissionBypass {
				want = "map[allow_once:" + strconv.Itoa(n) + "]"
			}
			if res.Text != want {
				t.Fatalf("answers %s, want %s", res.Text, want)
			}
		})
	}
}

// A callback still running after its request's deadline: the next
// request's callback does not start until it returns, and the late
// answer is dropped.
func TestPermissionCallbackNeverOverlaps(t *testing.T) {
	var inFlight, maxInFlight, calls atomic.Int32
	req := &agentcli.Request{
		Permission:        agentcli.PermissionAsk,
		PermissionTimeout: time.Second,
		OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
			c := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				m := maxInFlight.Load()
				if c <= m || maxInFlight.CompareAndSwap(m, c) {
					break
				}
			}
			if calls.Add(1) == 1 {
				// Answers half a second after its deadline.
				<-ctx.Done()
				time.Sleep(500 * time.Millisecond)
			}
			return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
		},
	}
	got, err := ask(t, req, 3)
	if err != nil {
		t.Fatal(err)
	}
	if maxInFlight.Load() != 1 {
		t.Errorf("%d callbacks ran at once", maxInFlight.Load())
	}
	want := "reject_once (" + DeniedMessage + "); allow_once; allow_once"
	if got != want {
		t.Errorf("answers\n%s\nwant\n%s", got, want)
	}
}

// An allow whose edited input cannot be applied (not a JSON object) is a
// refusal, where the protocol can edit input.
func TestEditThatCannotApply(t *testing.T) {
	for _, input := range []string{`"touch Y"`, `[1,2]`, `null`, `{"a":`} {
		req := &agentcli.Request{
			Permission: agentcli.PermissionAsk,
			OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
				return agentcli.PermissionDecision{Kind: agentcli.AllowOnce, Input: []byte(input)}
			},
		}
		s, _ := startEditToy(t, req)
		// An answer the toy peer cannot read leaves its turn running.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := s.Run(ctx, "ask 1")
		cancel()
		if err != nil {
			t.Errorf("edited input %s: %v", input, err)
			continue
		}
		if !strings.HasPrefix(res.Text, "reject_once (") {
			t.Errorf("edited input %s: answered %s, want a refusal", input, res.Text)
		}
	}
	req := &agentcli.Request{
		Permission: agentcli.PermissionAsk,
		OnPermission: func(ctx context.Context, r *agentcli.PermissionRequest) agentcli.PermissionDecision {
			return agentcli.PermissionDecision{Kind: agentcli.AllowOnce, Input: []byte(`{"command":"touch Y"}`)}
		},
	}
	s, _ := startEditToy(t, req)
	if res, err := s.Run(context.Background(), "ask 1"); err != nil || res.Text != `allow_once {"command":"touch Y"}` {
		t.Errorf("a valid edit: %v %v", res, err)
	}
}

// An empty prompt is a *RequestError; nothing reaches the CLI.
func TestEmptyPrompt(t *testing.T) {
	s, _ := mustToy(t, "", nil)
	for _, p := range []string{"", "  \n\t"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := s.Run(ctx, p) // the toy peer never ends a turn it cannot read
		cancel()
		var re *agentcli.RequestError
		if !errors.As(err, &re) || re.Field != "Prompt" || !errors.Is(err, agentcli.ErrBadRequest) {
			t.Errorf("Run(%q): %v; want a *RequestError naming Prompt", p, err)
		}
	}
	if res, err := s.Run(context.Background(), "echo a"); err != nil || res.Text != "a #1" {
		t.Fatalf("the next turn: %v %v (was an empty prompt sent?)", res, err)
	}
}

// startEditToy starts a toy session whose protocol can edit input.
func startEditToy(t *testing.T, req *agentcli.Request) (*Session, int) {
	t.Helper()
	s, pid, err := startToyWith(t, "", req, nil, func(c *Config) { c.EditInput = true })
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s, pid
}
