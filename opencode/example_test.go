package opencode_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/opencode"
)

// Run a prompt with OpenCode, then resume the session from the same
// directory. Errors are typed: an API error is an *agentcli.ResultError, a
// session that no longer exists matches agentcli.ErrSessionNotFound.
func Example() {
	b := opencode.New(nil) // "opencode" on PATH
	ctx := context.Background()
	req := &agentcli.Request{
		Prompt:       "List the Go files in this directory.",
		SystemPrompt: "Answer in one sentence.",
		Model:        "anthropic/claude-sonnet-4-5",
		Dir:          "/path/to/project",
		Timeout:      5 * time.Minute,
	}
	res, err := b.Run(ctx, req)
	var re *agentcli.ResultError
	switch {
	case errors.As(err, &re):
		log.Fatalf("API error (status %d): %s", re.APIStatus, re.Message)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println(res.Text, res.Usage.InputTokens, *res.CostUSD)

	// Stream the next turn of the same session.
	next := &agentcli.Request{Prompt: "Now count them.", SessionID: res.SessionID, Dir: req.Dir}
	for ev, err := range b.Stream(ctx, next) {
		if errors.Is(err, agentcli.ErrSessionNotFound) {
			log.Fatal("session is gone; start a new one")
		}
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case agentcli.EventText:
			fmt.Println(ev.Text)
		case agentcli.EventToolUse:
			fmt.Println("tool:", ev.Tool.Name, string(ev.Tool.Input))
		case agentcli.EventResult:
			fmt.Println("done:", ev.Result.Text)
		}
	}
}
