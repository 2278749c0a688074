package codex

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

// codex's live protocol for the live fault cases: app-server JSON-RPC
// without "jsonrpc" (see live.go).
func init() {
	kit.Live = &backendtest.LiveKit{
		Handshake: func(sess string) []string {
			return []string{
				`expect "method":"initialize"`, `reply {"id":$ID,"result":{"userAgent":"fake"}}`,
				`expect "method":"thread/start"`, `reply {"id":$ID,"result":{"thread":{"id":"` + sess + `"},"model":"gpt-test"}}`,
			}
		},
		HandshakeError: func(msg string) []string {
			return []string{`expect "method":"initialize"`, `reply {"id":$ID,"error":{"code":-32603,"message":` + strconv.Quote(msg) + `}}`}
		},
		Prompt:     codexPrompt,
		PromptMark: `"method":"turn/start"`,
		Reply:      codexReply,
		Ask: func(sess, turn string) string {
			return `{"id":"ask-$N","method":"item/commandExecution/requestApproval","params":{"threadId":"` + sess + `","turnId":"` + turn + `","itemId":"i$N","command":"touch X"}}`
		},
		Answer:  `"id":"ask-`,
		Refusal: `"decline"`,
		Interrupt: func(sess, turn string) []string {
			return []string{`expect "method":"turn/interrupt"`, `reply {"id":$ID,"result":{}}`, codexCompleted(sess, turn, "interrupted")}
		},
	}
}

func codexPrompt(turn string) []string {
	return []string{`expect "method":"turn/start"`, `reply {"id":$ID,"result":{"turn":{"id":"` + turn + `","status":"inProgress"}}}`}
}

func codexReply(sess, turn, text string) []string {
	return []string{
		`out {"method":"item/completed","params":{"threadId":"` + sess + `","turnId":"` + turn + `","item":{"type":"agentMessage","id":"m-` + turn + `","text":` + strconv.Quote(text) + `}}}`,
		codexCompleted(sess, turn, "completed"),
	}
}

func codexCompleted(sess, turn, status string) string {
	return `out {"method":"turn/completed","params":{"threadId":"` + sess + `","turn":{"id":"` + turn + `","status":"` + status + `"}}}`
}

func TestLiveFaults(t *testing.T) { backendtest.LiveFaults(t, kit) }

// A stale turn/completed (an earlier turn's, repeated) and one of an
// unknown turn, both before turn/start is answered, and an earlier turn's
// late delta: the new turn ends on its own completion only, with its own
// text.
func TestLiveStaleTurnCompleted(t *testing.T) {
	const sess = "sess-stale"
	script := append([]string{"live"}, kit.Live.Handshake(sess)...)
	script = append(script, codexPrompt("t1")...)
	script = append(script, codexReply(sess, "t1", "first")...)
	script = append(script,
		`expect "method":"turn/start"`,
		codexCompleted(sess, "t1", "completed"),
		codexCompleted(sess, "t9", "completed"),
		`out {"method":"item/agentMessage/delta","params":{"threadId":"`+sess+`","turnId":"t1","itemId":"m-t1","delta":"stale "}}`,
		`reply {"id":$ID,"result":{"turn":{"id":"t2","status":"inProgress"}}}`,
		`out {"method":"item/agentMessage/delta","params":{"threadId":"`+sess+`","turnId":"t2","itemId":"m-t2","delta":"second"}}`,
	)
	script = append(script, codexReply(sess, "t2", "second")...)
	script = append(script, "drain")
	b, dir := kit.Setup(t, nil, script...)
	s, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res, err := s.Run(context.Background(), "one"); err != nil || res.Text != "first" {
		t.Fatalf("turn 1: %v %v", res, err)
	}
	var text strings.Builder
	var res *agentcli.Result
	for ev, err := range s.Stream(context.Background(), "two") {
		if err != nil {
			t.Fatalf("turn 2: %v", err)
		}
		if ev.Kind == agentcli.EventTextDelta {
			text.WriteString(ev.Text)
		}
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
	}
	if res == nil || res.Text != "second" || text.String() != "second" {
		t.Fatalf("turn 2: result %+v, deltas %q; want its own text only", res, text.String())
	}
	s.Close()
	backendtest.AssertReaped(t, dir)
}

// turn/start never answered: Run still honours its context (the session,
// which can no longer follow the CLI, is killed).
func TestLiveTurnStartUnanswered(t *testing.T) {
	script := append([]string{"live"}, kit.Live.Handshake("sess-mute")...)
	script = append(script, `expect "method":"turn/start"`, "drain")
	b, dir := kit.Setup(t, nil, script...)
	s, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, "hello?")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, agentcli.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run: %v; want ErrCanceled for the deadline", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run ignored its context")
	}
	s.Close()
	backendtest.AssertReaped(t, dir)
}

// The debug record of a failed interrupt carries the CLI's error text
// through the same redaction as errors.
func TestLiveInterruptFailureRedacted(t *testing.T) {
	// No well-known token format: only the run's own redactor, which
	// knows the variable's value, can find it.
	const secret = "Zq8vT3xW9yL2mN5bC7dF1gH4jK6pR0sU"
	script := append([]string{"live"}, kit.Live.Handshake("sess-int")...)
	script = append(script, codexPrompt("t1")...)
	script = append(script,
		`expect "method":"turn/interrupt"`,
		`reply {"id":$ID,"error":{"code":-32600,"message":"cannot interrupt with key `+secret+`"}}`,
		"drain")
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, dir := kit.Setup(t, &agentcli.Options{Logger: logger, Env: []string{"CODEX_TEST_SECRET_TOKEN=" + secret}}, script...)
	s, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background(), "long task")
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if rec, err := fakecli.ReadRecord(dir); err == nil && strings.Contains(rec.Stdin, "turn/start") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the prompt never reached the CLI")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Interrupt(context.Background())
	if err := <-done; !errors.Is(err, agentcli.ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	s.Close()
	out := logs.String()
	if !strings.Contains(out, "interrupt failed") {
		t.Fatalf("no interrupt failure was logged:\n%s", out)
	}
	if strings.Contains(out, secret) || strings.Contains(out, secret[4:20]) {
		t.Errorf("a secret reached the logger:\n%s", out)
	}
}
