package agentcli_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// ExampleListSessions lists the sessions of a directory, newest first,
// and continues the newest; with none, Continue fails with ErrNoSession
// instead of quietly starting a new session. (A scripted backend stands
// in for a CLI here.)
func ExampleListSessions() {
	ctx := context.Background()
	b := agentclitest.NewBackend(agentclitest.Reply("Where were we? The parser.", "s2"))

	_, err := b.Run(ctx, &agentcli.Request{Prompt: "go on", Continue: true})
	fmt.Println(errors.Is(err, agentcli.ErrNoSession))

	now := time.Now()
	b.ListedSessions = []agentcli.SessionInfo{
		{ID: "s1", Title: "fix the tests", Updated: now.Add(-time.Hour)},
		{ID: "s2", Title: "write a parser", Updated: now},
	}
	list, err := agentcli.ListSessions(ctx, b, "")
	if err != nil {
		panic(err)
	}
	for _, s := range list {
		fmt.Println(s.ID, s.Title)
	}
	res, err := b.Run(ctx, &agentcli.Request{Prompt: "go on", Continue: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.SessionID, res.Text)
	// Output:
	// true
	// s2 write a parser
	// s1 fix the tests
	// s2 Where were we? The parser.
}
