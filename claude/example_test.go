package claude_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/claude"
)

// Example runs claude against agentclitest's scripted model server: the real
// CLI and the real parsing, with no credentials and no network. Drop the
// server, Wire and Apply to run against your own account.
func Example() {
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "Hello from a scripted model!"})
	defer srv.Close()
	home, err := os.MkdirTemp("", "claude-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(home)
	w, err := srv.Wire("claude", home)
	if err != nil {
		log.Fatal(err)
	}

	b := claude.New(nil) // "claude" on PATH; see agentcli.Options.Path
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

// New with nil Options runs "claude" from PATH with your own credentials.
// A second run resumes the first one's session.
func ExampleNew() {
	b := claude.New(&agentcli.Options{Env: []string{"IS_SANDBOX=1"}}) // IS_SANDBOX: only when running as root in a sandbox
	ctx := context.Background()
	first, err := b.Run(ctx, &agentcli.Request{Prompt: "Remember the number 7.", Timeout: 5 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	second, err := b.Run(ctx, &agentcli.Request{Prompt: "Which number?", SessionID: first.SessionID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(second.Text)
	if first.CostUSD != nil {
		fmt.Printf("first run cost $%.4f\n", *first.CostUSD)
	}
}
