package agentcli_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"pgregory.net/rapid"
)

// Property: however the text is split into deltas, the marker is found
// exactly once when the text holds it and never otherwise, and every event
// still flows, in order.
func TestWatchMarkerProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		marker := rapid.StringMatching(`[A-Z_]{1,12}`).Draw(t, "marker")
		text := rapid.String().Draw(t, "text")
		if rapid.Bool().Draw(t, "with") {
			i := rapid.IntRange(0, len(text)).Draw(t, "at")
			text = text[:i] + marker + text[i:]
		}
		var evs []agentcli.Event
		for rest := text; rest != ""; {
			n := rapid.IntRange(1, len(rest)).Draw(t, "n")
			evs = append(evs, agentcli.Event{Kind: agentcli.EventTextDelta, Text: rest[:n]})
			rest = rest[n:]
		}
		seq := func(yield func(agentcli.Event, error) bool) {
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
		}
		calls := 0
		i := 0
		for ev, err := range agentcli.WatchMarker(seq, marker, func(agentcli.Event) { calls++ }) {
			if err != nil || ev.Text != evs[i].Text {
				t.Fatalf("event %d changed: %+v %v", i, ev, err)
			}
			i++
		}
		want := 0
		if strings.Contains(text, marker) {
			want = 1
		}
		if calls != want || i != len(evs) {
			t.Fatalf("found %d times (want %d), %d of %d events", calls, want, i, len(evs))
		}
	})
}

func TestWatchMarkerFinalText(t *testing.T) {
	// A backend with no deltas at all: the marker is in the final text.
	b := agentclitest.NewBackend(agentclitest.Call{Result: &agentcli.Result{Text: "all done ORCHESTRA_COMPLETE"}})
	var got agentcli.EventKind
	for range agentcli.WatchMarker(b.Stream(context.Background(), &agentcli.Request{Prompt: "x"}), "", func(ev agentcli.Event) { got = ev.Kind }) {
	}
	if got != agentcli.EventResult {
		t.Fatalf("found in %q, want the result", got)
	}
}

// Run until the agent prints the marker, across deltas.
func ExampleWatchMarker() {
	b := agentclitest.NewBackend(agentclitest.Call{Events: []agentcli.Event{
		{Kind: agentcli.EventTextDelta, Text: "Task finished. ORCHESTRA_"},
		{Kind: agentcli.EventTextDelta, Text: "COMPLETE\n"},
	}, Result: &agentcli.Result{Text: "Task finished. ORCHESTRA_COMPLETE\n"}})
	seq := b.Stream(context.Background(), &agentcli.Request{Prompt: "Do the task."})
	done := false
	for _, err := range agentcli.WatchMarker(seq, agentcli.DefaultMarker, func(agentcli.Event) { done = true }) {
		if err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println("complete:", done)
	// Output: complete: true
}
