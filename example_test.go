package agentcli_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/agentcli/agentcli"
	_ "github.com/agentcli/agentcli/claude" // registers "claude"
)

// A complete program: run a prompt on Claude Code, print the text as it
// streams, then the final Result.
func Example() {
	b, err := agentcli.Open("claude", nil)
	if err != nil {
		log.Fatal(err)
	}
	req := &agentcli.Request{Prompt: "Explain this repository in one sentence.", Timeout: 5 * time.Minute}
	for ev, err := range b.Stream(context.Background(), req) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case agentcli.EventTextDelta:
			fmt.Print(ev.Text)
		case agentcli.EventResult:
			fmt.Printf("\n%+v\n", *ev.Result)
		}
	}
}

// Configuration from the environment (AGENT_BACKEND, BACKEND_CLI_PATH,
// BACKEND_MODEL, BACKEND_MAX_TURNS, ALLOWED_TOOLS).
func ExampleConfigFromEnv() {
	cfg := agentcli.ConfigFromEnv(nil)
	b, err := cfg.Open(nil)
	if err != nil {
		log.Fatal(err) // e.g. unknown backend "gtp" (valid: claude, codex, gemini, opencode)
	}
	req := &agentcli.Request{Prompt: "List the failing tests."}
	cfg.Apply(req, b.Capabilities())
	res, err := b.Run(context.Background(), req)
	switch {
	case errors.Is(err, agentcli.ErrSessionNotFound):
		// start a fresh session
	case errors.Is(err, agentcli.ErrTimeout), errors.Is(err, agentcli.ErrRateLimited):
		// retry later
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println(res.Text)
}

// Errors are typed: match a class with errors.Is, get details with
// errors.As.
func ExampleResultError() {
	var err error = &agentcli.ResultError{Backend: "claude", APIStatus: 429, Kind: agentcli.ErrRateLimited}
	var re *agentcli.ResultError
	if errors.As(err, &re) {
		fmt.Println(re.APIStatus, errors.Is(err, agentcli.ErrRateLimited), errors.Is(err, agentcli.ErrResult))
	}
	// Output: 429 true true
}
