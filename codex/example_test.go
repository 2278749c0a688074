package codex_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/codex"
)

// Run a prompt with codex exec, then resume the thread. It needs the codex
// CLI on PATH and credentials for its model provider.
func Example() {
	b := codex.New(nil)
	ctx := context.Background()
	res, err := b.Run(ctx, &agentcli.Request{
		Prompt:       "List the Go packages in this repository.",
		SystemPrompt: "Answer in one short paragraph.", // a developer message
		Dir:          ".",
		Timeout:      5 * time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text, res.Usage.InputTokens)

	// Stream the next turn of the same thread.
	for ev, err := range b.Stream(ctx, &agentcli.Request{Prompt: "Which one is largest?", SessionID: res.SessionID}) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case agentcli.EventToolUse:
			fmt.Println("tool:", ev.Tool.Name, string(ev.Tool.Input))
		case agentcli.EventResult:
			// Usage of a resumed thread covers the whole thread.
			fmt.Println(ev.Result.Text, ev.Result.Usage.Cumulative)
		}
	}
}
