package opencode_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/opencode"
)

// Example runs opencode against agentclitest's scripted model server: the real
// CLI and the real parsing, with no credentials and no network. Drop the
// server, Wire and Apply to run against your own account.
func Example() {
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "Hello from a scripted model!"})
	defer srv.Close()
	home, err := os.MkdirTemp("", "opencode-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(home)
	w, err := srv.Wire("opencode", home)
	if err != nil {
		log.Fatal(err)
	}

	b := opencode.New(nil) // "opencode" on PATH; see agentcli.Options.Path
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

// New with nil Options runs "opencode" from PATH with your own
// configuration. Errors are typed: an API error is an
// *agentcli.ResultError, a session that no longer exists matches
// agentcli.ErrSessionNotFound.
func ExampleNew() {
	b := opencode.New(nil)
	ctx := context.Background()
	req := &agentcli.Request{
		Prompt:       "List the Go files in this directory.",
		SystemPrompt: "Answer in one sentence.",
		Model:        "anthropic/claude-sonnet-4-5", // provider/model, or a name the configuration declares once
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
	fmt.Println(res.Text, res.Usage.InputTokens)
	if res.CostUSD != nil {
		fmt.Printf("cost $%.4f\n", *res.CostUSD)
	}
	next := &agentcli.Request{Prompt: "Now count them.", SessionID: res.SessionID, Dir: req.Dir}
	_, err = b.Run(ctx, next)
	if errors.Is(err, agentcli.ErrSessionNotFound) {
		log.Fatal("session is gone; start a new one")
	}
}
