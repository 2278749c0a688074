package agentcli_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// A program that watches what the CLI tells about its limits, with a
// scripted backend standing in for one.
func ExampleContextUsage() {
	reset := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	b := agentclitest.NewBackend(agentclitest.Call{
		Events: []agentcli.Event{
			{Kind: agentcli.EventRateLimit, RateLimit: &agentcli.RateLimit{Status: agentcli.RateLimitWarning,
				ResetsAt: reset, Type: "five_hour", Utilization: 0.91}},
			{Kind: agentcli.EventText, Text: "done"},
			{Kind: agentcli.EventContextUsage, ContextUsage: &agentcli.ContextUsage{UsedTokens: 850000, WindowTokens: 1000000}},
		},
		Result: &agentcli.Result{Text: "done"},
	})
	for ev, err := range b.Stream(context.Background(), &agentcli.Request{Prompt: "hi"}) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Kind {
		case agentcli.EventContextUsage:
			fmt.Printf("context %.0f%% full\n", 100*ev.ContextUsage.Fraction())
		case agentcli.EventRateLimit:
			fmt.Printf("%s limit %.0f%% used, resets %s\n", ev.RateLimit.Type, 100*ev.RateLimit.Utilization,
				ev.RateLimit.ResetsAt.Format(time.Kitchen))
		}
	}
	// Output:
	// five_hour limit 91% used, resets 2:00PM
	// context 85% full
}

// WithRetry waits for the reset a rate-limited run reports, rather than
// guess with its back-off.
func ExampleRateLimitError() {
	reset := time.Now().Add(20 * time.Millisecond)
	b := agentclitest.NewBackend(agentclitest.RateLimited("scripted", reset), agentclitest.Reply("done", "s1"))
	r := agentcli.WithRetry(b, &agentcli.RetryOptions{
		BaseDelay: time.Hour, // never waited: the reset is known
		MaxWait:   time.Minute,
		OnRetry: func(attempt int, err error, wait time.Duration) {
			at, ok := agentcli.ResetTime(err)
			fmt.Println("attempt", attempt, "rate limited; reset known:", ok, "waiting until it:", wait <= time.Until(at)+time.Millisecond)
		},
	})
	res, err := r.Run(context.Background(), &agentcli.Request{Prompt: "hi"})
	fmt.Println(res.Text, err)
	// Output:
	// attempt 1 rate limited; reset known: true waiting until it: true
	// done <nil>
}
