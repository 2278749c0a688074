package agentclitest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

func TestScriptedBackend(t *testing.T) {
	b := agentclitest.NewBackend(
		agentclitest.Reply("hello there", "s1"),
		agentclitest.Call{Err: &agentcli.ResultError{Backend: "scripted", APIStatus: 429, Kind: agentcli.ErrRateLimited, Result: &agentcli.Result{IsError: true}}},
		agentclitest.Call{Delay: time.Hour},
	)
	var streamed strings.Builder
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p1", OnText: func(s string) { streamed.WriteString(s) }})
	if err != nil || res.Text != "hello there" || res.SessionID != "s1" || streamed.String() != "hello there" {
		t.Fatalf("first call: %+v %v, streamed %q", res, err, streamed.String())
	}
	res, err = b.Run(context.Background(), &agentcli.Request{Prompt: "p2", SessionID: "s1"})
	if !errors.Is(err, agentcli.ErrRateLimited) || res == nil || !res.IsError {
		t.Fatalf("second call: %+v %v", res, err)
	}
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "p3", Timeout: 20 * time.Millisecond})
	if !errors.Is(err, agentcli.ErrTimeout) {
		t.Fatalf("third call: %v", err)
	}
	if _, err = b.Run(context.Background(), &agentcli.Request{Prompt: "p4"}); !errors.Is(err, agentclitest.ErrScriptExhausted) {
		t.Fatalf("exhausted: %v", err)
	}
	var prompts []string
	for _, r := range b.Requests() {
		prompts = append(prompts, r.Prompt)
	}
	if strings.Join(prompts, ",") != "p1,p2,p3,p4" || b.Requests()[1].SessionID != "s1" {
		t.Fatalf("recorded %v", prompts)
	}
}

func TestScriptedBackendConcurrent(t *testing.T) {
	def := agentclitest.Reply("ok", "s")
	b := &agentclitest.Backend{Default: &def}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for range b.Stream(ctx, &agentcli.Request{Prompt: fmt.Sprint(i)}) {
			}
		}()
	}
	wg.Wait()
	if n := len(b.Requests()); n != 20 {
		t.Fatalf("%d requests recorded", n)
	}
}

func TestScriptedBackendCancel(t *testing.T) {
	b := agentclitest.NewBackend(agentclitest.Call{Delay: time.Hour, Events: []agentcli.Event{{Kind: agentcli.EventText}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Run(ctx, &agentcli.Request{})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, agentcli.ErrCanceled) {
		t.Fatalf("err = %v", err)
	}
}

// Testing code that uses agentcli without a CLI or model: script the
// backend, run the code under test, then check what it asked.
func ExampleBackend() {
	b := agentclitest.NewBackend(agentclitest.Reply("4", "session-1"))

	// The code under test would normally get b as an agentcli.Backend.
	var backend agentcli.Backend = b
	res, err := backend.Run(context.Background(), &agentcli.Request{Prompt: "2+2?"})
	fmt.Println(res.Text, res.SessionID, err)
	fmt.Println(b.Requests()[0].Prompt)
	// Output:
	// 4 session-1 <nil>
	// 2+2?
}
