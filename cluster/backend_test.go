package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/google/go-cmp/cmp"
)

// collectEvents runs req through b's Stream and returns its events and
// final error.
func collectEvents(ctx context.Context, b agentcli.Backend, req *agentcli.Request) ([]agentcli.Event, error) {
	var evs []agentcli.Event
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// TestRunMatchesLocal: a run through the pool yields the events, result
// and OnText calls the same scripted backend yields locally.
func TestRunMatchesLocal(t *testing.T) {
	n := startNATS(t)
	call := agentclitest.Reply("hello from the pool", "sess-1")
	call.Events = append(call.Events, agentcli.Event{Kind: agentcli.EventNotice, Text: "careful",
		Err: &agentcli.LineTooLongError{Limit: 10, Len: 20}})
	local := scripted(call, agentcli.Capabilities{Sessions: true, TextDeltas: true})
	startWorker(t, n, local, nil)
	b := newPoolBackend(t, n, nil)

	var remoteText, localText []string
	ctx := context.Background()
	got, err := collectEvents(ctx, b, &agentcli.Request{Prompt: "hi", OnText: func(s string) { remoteText = append(remoteText, s) }})
	if err != nil {
		t.Fatal(err)
	}
	want, err := collectEvents(ctx, scripted(call, agentcli.Capabilities{}), &agentcli.Request{Prompt: "hi",
		OnText: func(s string) { localText = append(localText, s) }})
	if err != nil {
		t.Fatal(err)
	}
	opt := cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error()) })
	if d := cmp.Diff(want, got, opt); d != "" {
		t.Errorf("events (-local +pool):\n%s", d)
	}
	if d := cmp.Diff(localText, remoteText); d != "" || len(remoteText) == 0 {
		t.Errorf("OnText (-local +pool):\n%s", d)
	}
	res, err := b.Run(ctx, &agentcli.Request{Prompt: "again"})
	if err != nil || res.Text != "hello from the pool" || res.SessionID != "sess-1" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if reqs := local.Requests(); len(reqs) != 2 || reqs[0].Prompt != "hi" || reqs[1].Prompt != "again" {
		t.Errorf("worker saw %d requests: %+v", len(reqs), reqs)
	}
	if caps := b.Capabilities(); !caps.Sessions || !caps.TextDeltas {
		t.Errorf("Capabilities = %+v, want the worker's", caps)
	}
	if err := b.Check(ctx); err != nil {
		t.Errorf("Check = %v", err)
	}
	_ = time.Second
}
