package agentcli_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// interactor is a scripted backend that also has an interactive mode.
type interactor struct {
	*agentclitest.Backend
	got *agentcli.Request
}

func (i *interactor) Interactive(_ context.Context, req *agentcli.Request, _ *agentcli.Terminal) (int, error) {
	i.got = req
	return 7, nil
}

func TestInteractiveFindsInteractor(t *testing.T) {
	in := &interactor{Backend: agentclitest.NewBackend()}
	req := &agentcli.Request{Prompt: "hi"}
	// Found through middleware (Unwrapper).
	code, err := agentcli.Interactive(context.Background(), agentcli.WithRetry(in, nil), req, nil)
	if code != 7 || err != nil || in.got != req {
		t.Errorf("Interactive = %d, %v (request passed: %v); want 7, nil", code, err, in.got == req)
	}
	for _, b := range []agentcli.Backend{agentclitest.NewBackend(), agentcli.WithRetry(agentclitest.NewBackend(), nil), nil} {
		code, err := agentcli.Interactive(context.Background(), b, req, nil)
		var ue *agentcli.UnsupportedError
		if code != -1 || !errors.As(err, &ue) || ue.Feature != "interactive mode" {
			t.Errorf("%T: Interactive = %d, %v; want -1 and an *UnsupportedError", b, code, err)
		}
	}
}

// Hand this program's terminal to Claude Code's own interactive UI, with
// a first message, and exit with its status. The model, system prompt,
// session, directory and environment work as in a run; Permission decides
// whether the UI asks before tool calls.
func ExampleInteractive() {
	b, err := agentcli.Open("claude", nil)
	if err != nil {
		log.Fatal(err)
	}
	req := &agentcli.Request{
		Prompt:       "Explain this repository's layout.", // optional first message
		SystemPrompt: "Answer briefly.",
		Permission:   agentcli.PermissionAsk, // the UI asks before tool calls
	}
	code, err := agentcli.Interactive(context.Background(), b, req, nil) // nil: os.Stdin, os.Stdout, os.Stderr
	if err != nil {
		log.Fatal(err) // ErrBadRequest: for example, stdin is not a terminal
	}
	os.Exit(code)
}

// A Terminal names the files the UI runs on, for example the slave side of
// a pseudo-terminal that a web terminal or a test reads.
func ExampleTerminal() {
	b, err := agentcli.Open("claude", nil)
	if err != nil {
		log.Fatal(err)
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0) // the controlling terminal, even when stdio is redirected
	if err != nil {
		log.Fatal(err)
	}
	defer tty.Close()
	code, err := agentcli.Interactive(context.Background(), b, nil, &agentcli.Terminal{Stdin: tty, Stdout: tty, Stderr: tty})
	fmt.Println("exit status", code, err)
}
