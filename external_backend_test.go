package agentcli_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// upperBackend is a backend written with the public API only, as a program
// outside this module would: it "answers" with the prompt in upper case.
type upperBackend struct{ opts agentcli.Options }

func (b *upperBackend) Name() string { return "upper" }

func (b *upperBackend) Capabilities() agentcli.Capabilities {
	return agentcli.Capabilities{TextDeltas: true}
}

func (b *upperBackend) Check(ctx context.Context) error { return ctx.Err() }

func (b *upperBackend) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		if req == nil || strings.TrimSpace(req.Prompt) == "" {
			yield(agentcli.Event{}, &agentcli.RequestError{Backend: b.Name(), Field: "Prompt", Reason: "empty"})
			return
		}
		text := strings.ToUpper(req.Prompt)
		if !yield(agentcli.Event{Kind: agentcli.EventTextDelta, Text: text}, nil) {
			return
		}
		if err := ctx.Err(); err != nil {
			yield(agentcli.Event{}, &agentcli.CanceledError{Backend: b.Name(), Err: err})
			return
		}
		yield(agentcli.Event{Kind: agentcli.EventResult, Result: &agentcli.Result{Text: text, SessionID: "s"}}, nil)
	}
}

func (b *upperBackend) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	var res *agentcli.Result
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
	}
	return res, nil
}

// A backend written outside this module registers, opens and runs like the
// built-in ones, and the package-level helpers treat it the same way: the
// registry is open to third-party backends.
func TestExternalBackend(t *testing.T) {
	driver.Register("upper", func(o *agentcli.Options) agentcli.Backend {
		b := &upperBackend{}
		if o != nil {
			b.opts = *o
		}
		return b
	})
	b, err := agentcli.Open(" Upper ", &agentcli.Options{Path: "unused"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "hi"})
	if err != nil || res.Text != "HI" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if _, err := b.Run(context.Background(), &agentcli.Request{}); !errors.Is(err, agentcli.ErrBadRequest) {
		t.Fatalf("empty prompt: %v", err)
	}
	// It has no live sessions, and says so in the usual typed way.
	if _, err := agentcli.StartSession(context.Background(), b, &agentcli.Request{}); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Fatalf("StartSession: %v", err)
	}
}
