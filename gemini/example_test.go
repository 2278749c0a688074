package gemini_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/gemini"
)

// Example runs gemini against agentclitest's scripted model server: the real
// CLI and the real parsing, with no credentials and no network. Drop the
// server, Wire and Apply to run against your own account.
func Example() {
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "Hello from a scripted model!"})
	defer srv.Close()
	home, err := os.MkdirTemp("", "gemini-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(home)
	w, err := srv.Wire("gemini", home)
	if err != nil {
		log.Fatal(err)
	}

	b := gemini.New(nil) // "gemini" on PATH; see agentcli.Options.Path
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

// New with nil Options runs "gemini" from PATH with your own credentials.
// Resume from the same working directory: gemini keeps sessions per
// project directory.
func ExampleNew() {
	b := gemini.New(nil)
	ctx := context.Background()
	dir := "/path/to/project"
	first, err := b.Run(ctx, &agentcli.Request{Prompt: "Remember the number 7.", Dir: dir, Model: "gemini-2.5-flash"})
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
