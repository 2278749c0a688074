package claude_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/claude"
)

// A complete program: run a prompt on Claude Code, print text as it
// streams, then the final result.
func Example() {
	b := claude.New(nil) // "claude" on PATH; see agentcli.Options
	ctx := context.Background()
	req := &agentcli.Request{Prompt: "Say hello in five words."}
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			log.Fatal(err) // a typed error: errors.Is(err, agentcli.ErrTimeout), ...
		}
		switch ev.Kind {
		case agentcli.EventTextDelta:
			fmt.Print(ev.Text)
		case agentcli.EventResult:
			r := ev.Result
			fmt.Printf("\nsession %s, %d in / %d out tokens\n", r.SessionID, r.Usage.InputTokens, r.Usage.OutputTokens)
		}
	}
}

// Resuming a session: pass the previous result's SessionID.
func ExampleBackend_Run() {
	b := claude.New(&agentcli.Options{Env: []string{"IS_SANDBOX=1"}})
	ctx := context.Background()
	first, err := b.Run(ctx, &agentcli.Request{Prompt: "Remember the number 7."})
	if err != nil {
		log.Fatal(err)
	}
	second, err := b.Run(ctx, &agentcli.Request{Prompt: "Which number?", SessionID: first.SessionID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(second.Text)
}
