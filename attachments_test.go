package agentcli_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// A screenshot and a log file sent with a prompt: agentcli reads the files
// and checks them before the CLI starts. (The scripted backend stands in
// for a real CLI; it checks and records attachments as a real backend
// does.)
func ExampleRequest_attachments() {
	b := agentclitest.NewBackend(agentclitest.Reply("The test expects 3.", "s1"))
	png := []byte("\x89PNG\r\n\x1a\n...") // or Path: "screenshot.png"
	res, err := b.Run(context.Background(), &agentcli.Request{
		Prompt: "Why does this test fail?",
		Attachments: []agentcli.Attachment{
			{Name: "screenshot.png", Data: png},
			{Name: "test.log", Data: []byte("FAIL: TestThing: want 3, got 4\n")},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	for _, a := range b.Requests()[0].Attachments {
		fmt.Println(a.Name, a.MediaType, len(a.Data))
	}
	// Output:
	// The test expects 3.
	// screenshot.png image/png 11
	// test.log text/plain 31
}

// A live session's turn with an attachment.
func ExampleStreamTurn() {
	b := agentclitest.NewBackend(agentclitest.Reply("A red square.", "s1"))
	s, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{Permission: agentcli.PermissionBypass})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	turn := &agentcli.Turn{Prompt: "What is in the picture?", Attachments: []agentcli.Attachment{{Data: []byte("GIF89a...")}}}
	for ev, err := range agentcli.StreamTurn(context.Background(), s, turn) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Kind == agentcli.EventResult {
			fmt.Println(ev.Result.Text)
		}
	}
	fmt.Println(b.Requests()[0].Attachments[0].MediaType)
	// Output:
	// A red square.
	// image/gif
}

// plainSession is a Session of another package: no TurnStreamer.
type plainSession struct {
	agentcli.Session
	prompts []string
}

func (p *plainSession) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	p.prompts = append(p.prompts, prompt)
	return p.Session.Stream(ctx, prompt)
}

// TestStreamTurnFallback: a session that does not take Turns gets a Turn
// without attachments as a prompt, and refuses one with attachments
// before anything is sent.
func TestStreamTurnFallback(t *testing.T) {
	b := agentclitest.NewBackend(agentclitest.Reply("ok", "s1"))
	s, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{Permission: agentcli.PermissionBypass})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := &plainSession{Session: s}
	_, err = agentcli.RunTurn(context.Background(), p, &agentcli.Turn{Prompt: "x", Attachments: []agentcli.Attachment{{Data: []byte("t")}}})
	if !errors.Is(err, agentcli.ErrUnsupported) || len(p.prompts) != 0 {
		t.Fatalf("with attachments: %v (prompts %q), want ErrUnsupported and nothing sent", err, p.prompts)
	}
	if msg := err.Error(); strings.HasPrefix(msg, ":") || strings.HasPrefix(msg, " ") {
		t.Errorf("the error names no backend and begins with %q: %q", msg[:1], msg)
	}
	res, err := agentcli.RunTurn(context.Background(), p, &agentcli.Turn{Prompt: "hello"})
	if err != nil || res.Text != "ok" || len(p.prompts) != 1 {
		t.Fatalf("without: %v, %v (prompts %q)", res, err, p.prompts)
	}
	if _, err := agentcli.RunTurn(context.Background(), p, nil); !errors.Is(err, agentcli.ErrBadRequest) {
		t.Errorf("nil Turn: %v, want ErrBadRequest (empty prompt)", err)
	}
}

// TestMiddlewareForwardsTurns: WithLimit's and WithRetry's sessions pass
// a Turn's attachments on, checked as the backend checks them.
func TestMiddlewareForwardsTurns(t *testing.T) {
	sb := agentclitest.NewBackend(agentclitest.Reply("one", "s1"), agentclitest.Reply("two", "s1"))
	b := agentcli.WithRetry(agentcli.WithLimit(sb, 1), nil)
	s, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{Permission: agentcli.PermissionBypass})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(agentcli.TurnStreamer); !ok {
		t.Fatalf("%T is not a TurnStreamer", s)
	}
	res, err := agentcli.RunTurn(context.Background(), s, &agentcli.Turn{Prompt: "p", Attachments: []agentcli.Attachment{{Name: "n", Data: []byte("text\n")}}})
	if err != nil || res.Text != "one" {
		t.Fatalf("RunTurn: %v, %v", res, err)
	}
	reqs := sb.Requests()
	if len(reqs) != 1 || len(reqs[0].Attachments) != 1 || string(reqs[0].Attachments[0].Data) != "text\n" || reqs[0].Attachments[0].MediaType != "text/plain" {
		t.Fatalf("recorded %+v", reqs)
	}
	_, err = agentcli.RunTurn(context.Background(), s, &agentcli.Turn{Prompt: "p", Attachments: []agentcli.Attachment{{Data: []byte("BM\xff")}}})
	if !errors.Is(err, agentcli.ErrUnsupported) || len(sb.Requests()) != 1 {
		t.Fatalf("a binary attachment: %v, want ErrUnsupported and no turn", err)
	}
	// StartSession takes none: they go with a turn.
	if _, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{Permission: agentcli.PermissionBypass,
		Attachments: []agentcli.Attachment{{Data: []byte("t")}}}); !errors.Is(err, agentcli.ErrBadRequest) {
		t.Errorf("StartSession with attachments: %v, want ErrBadRequest", err)
	}
}
