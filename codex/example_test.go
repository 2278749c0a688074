package codex_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/codex"
)

// Example runs codex against agentclitest's scripted model server: the real
// CLI and the real parsing, with no credentials and no network. Drop the
// server, Wire and Apply to run against your own account.
func Example() {
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "Hello from a scripted model!"})
	defer srv.Close()
	home, err := os.MkdirTemp("", "codex-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(home)
	w, err := srv.Wire("codex", home)
	if err != nil {
		log.Fatal(err)
	}

	b := codex.New(nil) // "codex" on PATH; see agentcli.Options.Path
	req := &agentcli.Request{Prompt: "Say hello."}
	w.Apply(req) // the CLI's whole environment now points at srv
	for ev, err := range b.Stream(context.Background(), req) {
		if err != nil {
			log.Fatal(err) // typed: errors.Is(err, agentcli.ErrTimeout), errors.As(err, &resultErr), ...
		}
		switch ev.Kind {
		case agentcli.EventTextDelta:
			fmt.Print(ev.Text) // the whole answer, exactly once, on every backend
		case agentcli.EventResult:
			fmt.Println("\nsession id reported:", ev.Result.SessionID != "")
		}
	}
	// Output:
	// Hello from a scripted model!
	// session id reported: true
}

// New with nil Options runs "codex" from PATH with your own credentials.
// A second run resumes the thread; its usage covers the whole thread.
func ExampleNew() {
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
	for ev, err := range b.Stream(ctx, &agentcli.Request{Prompt: "Which one is largest?", SessionID: res.SessionID, Dir: "."}) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case agentcli.EventToolUse:
			fmt.Println("tool:", ev.Tool.Name, string(ev.Tool.Input))
		case agentcli.EventResult:
			fmt.Println(ev.Result.Text, ev.Result.Usage.Cumulative)
		}
	}
}
