package gemini_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/gemini"
)

// A complete program: run a prompt on Gemini CLI, print text as it streams,
// then the final result.
func Example() {
	b := gemini.New(nil) // "gemini" on PATH; see agentcli.Options
	ctx := context.Background()
	req := &agentcli.Request{Prompt: "Say hello in five words.", Model: "gemini-2.5-flash"}
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			log.Fatal(err) // a typed error: errors.Is(err, agentcli.ErrRateLimited), ...
		}
		switch ev.Kind {
		case agentcli.EventTextDelta:
			fmt.Print(ev.Text)
		case agentcli.EventToolUse:
			fmt.Printf("\n[%s %s]\n", ev.Tool.Name, ev.Tool.Input)
		case agentcli.EventResult:
			r := ev.Result
			fmt.Printf("\nsession %s, %d in / %d out tokens\n", r.SessionID, r.Usage.InputTokens, r.Usage.OutputTokens)
		}
	}
}

// Resuming a session: pass the previous result's SessionID, from the same
// working directory (gemini keeps sessions per project directory).
func ExampleBackend_Run() {
	b := gemini.New(nil)
	ctx := context.Background()
	dir := "/path/to/project"
	first, err := b.Run(ctx, &agentcli.Request{Prompt: "Remember the number 7.", Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	second, err := b.Run(ctx, &agentcli.Request{Prompt: "Which number?", SessionID: first.SessionID, Dir: dir})
	if errors.Is(err, agentcli.ErrSessionNotFound) {
		log.Fatal("the session is gone, or Dir differs from the first run's")
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(second.Text)
}
