package drivertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// LiveKit scripts one CLI's live protocol for the fake CLI, as lines of a
// live script (see the package comment): the CLI's side of a session that
// LiveFaults drives.
type LiveKit struct {
	// Handshake returns script lines that answer the handshake of a new
	// session whose id is sess.
	Handshake func(sess string) []string
	// HandshakeError returns script lines that refuse the handshake's
	// first request with msg.
	HandshakeError func(msg string) []string
	// Prompt returns script lines that take the next prompt (and answer
	// its request, where the protocol does, naming the turn turn).
	Prompt func(turn string) []string
	// PromptMark is a piece of every prompt message the session sends.
	PromptMark string
	// Reply returns script lines that say text and end turn turn of
	// session sess successfully.
	Reply func(sess, turn, text string) []string
	// Ask is the script text of permission request number $N (for the
	// live script's repeatn) during turn turn of session sess.
	Ask func(sess, turn string) string
	// Answer is a piece of every answer to an Ask request, Refusal a
	// piece of every refusal among them.
	Answer, Refusal string
	// Interrupt returns script lines that take the session's interrupt of
	// turn turn and end that turn as interrupted.
	Interrupt func(sess, turn string) []string
}

// within runs f and fails t when it has not returned after d (the failure
// mode of a hostile peer is "forever").
func within(t testing.TB, d time.Duration, what string, f func()) {
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

// liveScript is a live fake script.
func liveScript(parts ...[]string) []string {
	return append([]string{"live"}, concat(parts...)...)
}

// waitStdin waits until the fake has read n messages containing mark.
func waitStdin(t testing.TB, dir, mark string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if rec, err := ReadRecord(dir); err == nil && strings.Count(rec.Stdin, mark) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the fake CLI never read %d messages with %q", n, mark)
}

// LiveFaults runs the live-session fault cases against the backend's
// fake CLI (k.Live scripts it): requests that must be refused before
// anything is sent, a CLI that stops reading its stdin, a permission
// flood, a refused handshake (a *agentcli.ProtocolError, matching
// agentcli.ErrAuth when the message says so), a one-shot run under
// PermissionAsk that goes through a session, and a wire log's round trip
// through agentcli.Replay. The backend must implement driver.SessionStarter
// and driver.Replayer. Cases run one after another.
func LiveFaults(t *testing.T, k Kit) {
	t.Helper()
	lk := k.Live
	if lk == nil {
		t.Fatalf("LiveFaults: kit %s has no Live", k.Name)
	}
	const sess = "sess-live-1"
	start := func(t *testing.T, b agentcli.Backend, req *agentcli.Request) agentcli.Session {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s, err := agentcli.StartSession(ctx, b, req)
		if err != nil {
			t.Fatalf("StartSession: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	reaped := func(t *testing.T, s agentcli.Session, dir string) {
		t.Helper()
		within(t, 10*time.Second, "Close", func() { s.Close() })
		AssertReaped(t, dir)
	}

	t.Run("prompts refused before anything is sent", func(t *testing.T) {
		b, dir := k.Setup(t, nil, liveScript(lk.Handshake(sess))...)
		_, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{Prompt: "first turn?"})
		var re *agentcli.RequestError
		if !errors.As(err, &re) || re.Field != "Prompt" {
			t.Fatalf("StartSession with a Prompt: %v; want a *RequestError naming Prompt", err)
		}
		if pids := Pids(dir); len(pids) != 0 {
			t.Fatalf("the CLI was started (%v) for a refused request", pids)
		}
		s := start(t, b, &agentcli.Request{})
		for _, p := range []string{"", " \n\t "} {
			_, err := s.Run(context.Background(), p)
			if !errors.As(err, &re) || re.Field != "Prompt" || !errors.Is(err, agentcli.ErrBadRequest) {
				t.Errorf("Run(%q): %v; want a *RequestError naming Prompt", p, err)
			}
		}
		reaped(t, s, dir)
		rec, err := ReadRecord(dir)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(rec.Stdin, lk.PromptMark) {
			t.Errorf("an empty prompt reached the CLI:\n%s", rec.Stdin)
		}
	})

	t.Run("CLI stops reading: a huge prompt honours the deadline", func(t *testing.T) {
		b, dir := k.Setup(t, nil, liveScript(lk.Handshake(sess), []string{"deaf", "hang"})...)
		s := start(t, b, &agentcli.Request{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var err error
		began := time.Now()
		within(t, 15*time.Second, "Run", func() { _, err = s.Run(ctx, "say "+strings.Repeat("x", 1<<20)) })
		t.Logf("Run returned after %v: %v", time.Since(began), err)
		if !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run: %v; want ErrCanceled for the deadline", err)
		}
		reaped(t, s, dir)
	})

	t.Run("CLI floods requests then stops reading: Interrupt returns", func(t *testing.T) {
		b, dir := k.Setup(t, nil, liveScript(lk.Handshake(sess), lk.Prompt("t1"),
			[]string{"deaf", "repeatn 5000 " + lk.Ask(sess, "t1"), "hang"})...)
		s := start(t, b, &agentcli.Request{Permission: agentcli.PermissionDeny})
		done := make(chan error, 1)
		go func() {
			_, err := s.Run(context.Background(), "flood me")
			done <- err
		}()
		waitStdin(t, dir, lk.PromptMark, 1)
		time.Sleep(500 * time.Millisecond) // the answers fill the pipe
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		within(t, 15*time.Second, "Interrupt", func() {
			if err := s.Interrupt(ctx); err != nil {
				t.Errorf("Interrupt: %v", err)
			}
		})
		var err error
		within(t, 15*time.Second, "the interrupted Run", func() { err = <-done })
		if !errors.Is(err, agentcli.ErrInterrupted) {
			t.Fatalf("Run: %v; want ErrInterrupted", err)
		}
		if !errors.Is(s.Err(), agentcli.ErrProtocol) {
			t.Errorf("Err() = %v; want ErrProtocol (the CLI did not end the turn)", s.Err())
		}
		reaped(t, s, dir)
	})

	t.Run("permission flood in deny mode", func(t *testing.T) {
		const n = 20000
		b, dir := k.Setup(t, nil, liveScript(lk.Handshake(sess), lk.Prompt("t1"),
			[]string{"repeatn " + strconv.Itoa(n) + " " + lk.Ask(sess, "t1"), "expectn " + strconv.Itoa(n) + " " + lk.Answer},
			lk.Reply(sess, "t1", "flood survived"))...)
		s := start(t, b, &agentcli.Request{Permission: agentcli.PermissionDeny})
		var res *agentcli.Result
		var err error
		within(t, 120*time.Second, "the flooded turn", func() { res, err = s.Run(context.Background(), "flood me") })
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "flood survived" {
			t.Errorf("Result.Text = %q", res.Text)
		}
		reaped(t, s, dir)
		rec, err := ReadRecord(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(rec.Stdin, lk.Refusal); got != n {
			t.Errorf("%d refusals, want %d", got, n)
		}
	})

	t.Run("refused handshake is a protocol error", func(t *testing.T) {
		for _, c := range []struct {
			msg  string
			kind error
		}{
			{"the protocol went wrong somewhere", nil},
			{"401 Unauthorized: invalid api key", agentcli.ErrAuth},
		} {
			b, dir := k.Setup(t, nil, liveScript(lk.HandshakeError(c.msg), []string{"drain"})...)
			_, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{})
			var pe *agentcli.ProtocolError
			if !errors.As(err, &pe) || !errors.Is(err, agentcli.ErrProtocol) || !strings.Contains(pe.Message, c.msg) {
				t.Errorf("StartSession: %#v; want a *ProtocolError with %q", err, c.msg)
			}
			if c.kind != nil && !errors.Is(err, c.kind) {
				t.Errorf("StartSession: %v; want it to match %v too", err, c.kind)
			}
			AssertReaped(t, dir)
		}
	})

	t.Run("one-shot run through a session writes its wire log", func(t *testing.T) {
		b, dir := k.Setup(t, nil, liveScript(lk.Handshake(sess), lk.Prompt("t1"), lk.Reply(sess, "t1", "one shot"), []string{"drain"})...)
		var log bytes.Buffer
		// PermissionAsk: the one mode whose one-shot runs are live turns.
		evs, err := Collect(context.Background(), b, &agentcli.Request{Prompt: "go", Permission: agentcli.PermissionAsk,
			OnPermission: func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
				return agentcli.PermissionDecision{}
			}, WireLog: &log})
		if err != nil {
			t.Fatal(err)
		}
		AssertReaped(t, dir)
		var replayed []agentcli.Event
		var rerr error
		for ev, err := range agentcli.Replay(b, bytes.NewReader(log.Bytes())) {
			if err != nil {
				rerr = err
				break
			}
			replayed = append(replayed, ev)
		}
		if got, want := DescribeRun(replayed, rerr), DescribeRun(evs, err); got != want {
			t.Errorf("replay differs from the run\nrun:\n%s\nreplay:\n%s\nlog:\n%s", want, got, log.String())
		}
		if !strings.Contains(log.String(), `"live":true`) || !strings.Contains(DescribeRun(evs, err), "one shot") {
			t.Errorf("the run or its log is not the session's:\n%s", log.String())
		}
	})

	t.Run("wire log round trip", func(t *testing.T) {
		b, dir := k.Setup(t, nil, liveScript(lk.Handshake(sess),
			lk.Prompt("t1"), lk.Reply(sess, "t1", "first answer"),
			lk.Prompt("t2"), []string{"repeatn 2 " + lk.Ask(sess, "t2"), "expectn 2 " + lk.Answer}, lk.Reply(sess, "t2", "second answer"),
			lk.Prompt("t3"), lk.Interrupt(sess, "t3"),
			[]string{"drain"})...)
		var log bytes.Buffer
		s := start(t, b, &agentcli.Request{Permission: agentcli.PermissionDeny, WireLog: &log})
		var live strings.Builder
		turn := func(prompt string) {
			for ev, err := range s.Stream(context.Background(), prompt) {
				live.WriteString(DescribeRun(evsOf(ev, err)))
			}
		}
		turn("one")
		turn("two")
		done := make(chan struct{})
		go func() {
			defer close(done)
			turn("three")
		}()
		waitStdin(t, dir, lk.PromptMark, 3)
		s.Interrupt(context.Background())
		<-done
		reaped(t, s, dir)
		var replay strings.Builder
		for ev, err := range agentcli.Replay(b, bytes.NewReader(log.Bytes())) {
			replay.WriteString(DescribeRun(evsOf(ev, err)))
		}
		if replay.String() != live.String() {
			t.Errorf("replay differs from the live session\nlive:\n%s\nreplay:\n%s\nlog:\n%s", live.String(), replay.String(), log.String())
		}
		for _, want := range []string{"first answer", "second answer", "turn interrupted"} {
			if !strings.Contains(live.String(), want) {
				t.Errorf("the session lacks %q:\n%s", want, live.String())
			}
		}
		esc, _ := json.Marshal(lk.Refusal) // as the log's in records hold it
		if n := strings.Count(log.String(), strings.Trim(string(esc), `"`)); n != 2 {
			t.Errorf("the log holds %d refusals, want 2:\n%s", n, log.String())
		}
	})
}

// evsOf makes one yield a list for DescribeRun.
func evsOf(ev agentcli.Event, err error) ([]agentcli.Event, error) {
	if err != nil {
		return nil, err
	}
	return []agentcli.Event{ev}, nil
}

// ACPLive is the LiveKit of an Agent Client Protocol agent, for a backend
// whose live sessions use package driver/acp (gemini --acp, opencode acp).
// setMode says that the session selects a mode (session/set_mode) after
// session/new.
func ACPLive(setMode bool) *LiveKit {
	return &LiveKit{
		Handshake: func(sess string) []string {
			lines := []string{
				`expect "method":"initialize"`,
				`reply {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1,"agentCapabilities":{}}}`,
				`expect "method":"session/new"`,
				`reply {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"` + sess + `"}}`,
			}
			if setMode {
				lines = append(lines, `expect "method":"session/set_mode"`, `reply {"jsonrpc":"2.0","id":$ID,"result":{}}`)
			}
			return lines
		},
		HandshakeError: func(msg string) []string {
			return []string{`expect "method":"initialize"`, `reply {"jsonrpc":"2.0","id":$ID,"error":{"code":-32603,"message":` + strconv.Quote(msg) + `}}`}
		},
		Prompt:     func(string) []string { return []string{`expect "method":"session/prompt"`, "save prompt"} },
		PromptMark: `"method":"session/prompt"`,
		Reply: func(sess, _, text string) []string {
			return []string{
				`out {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sess + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":` + strconv.Quote(text) + `}}}}`,
				`reply {"jsonrpc":"2.0","id":$ID:prompt,"result":{"stopReason":"end_turn"}}`,
			}
		},
		Ask: func(sess, _ string) string {
			return `{"jsonrpc":"2.0","id":"ask-$N","method":"session/request_permission","params":{"sessionId":"` + sess +
				`","toolCall":{"toolCallId":"c$N","title":"touch X","kind":"execute"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}`
		},
		Answer:  `"id":"ask-`,
		Refusal: `"optionId":"reject"`,
		Interrupt: func(string, string) []string {
			return []string{`expect "method":"session/cancel"`, `reply {"jsonrpc":"2.0","id":$ID:prompt,"result":{"stopReason":"cancelled"}}`}
		},
	}
}
