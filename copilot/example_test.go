package copilot_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/copilot"
)

// Example runs GitHub Copilot CLI against agentclitest's scripted model
// server (copilot's bring-your-own-key provider, offline): the real CLI and
// the real parsing, with no credentials and no network. Drop the server,
// Wire and Apply to run with your own login.
func Example() {
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "Hello from a scripted model!"})
	defer srv.Close()
	home, err := os.MkdirTemp("", "copilot-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(home)
	w, err := srv.Wire("copilot", home)
	if err != nil {
		log.Fatal(err)
	}

	b := copilot.New(nil) // "copilot" on PATH; see agentcli.Options.Path
	req := &agentcli.Request{Prompt: "Say hello."}
	w.Apply(req) // the CLI's whole environment now points at srv
	var session string
	for ev, err := range b.Stream(context.Background(), req) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case agentcli.EventInit:
			session = ev.SessionID // before the model's first word
		case agentcli.EventTextDelta:
			fmt.Print(ev.Text)
		case agentcli.EventResult:
			fmt.Println("\nsame session:", ev.Result.SessionID == session)
		}
	}
	// Output:
	// Hello from a scripted model!
	// same session: true
}
