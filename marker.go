package agentcli

import (
	"iter"
	"strings"
)

// DefaultMarker is the completion marker WatchMarker looks for when none is
// given: the word an orchestrator asks its agents to print when a task is
// done.
const DefaultMarker = "ORCHESTRA_COMPLETE"

// WatchMarker returns a sequence that yields seq's elements unchanged and
// calls found once, from the consuming goroutine, when marker
// (DefaultMarker if empty) first appears in the main thread's assistant
// text: across any split of text deltas, in a whole text block, or in the
// final Result.Text. found receives the event in which the marker was
// completed. Events keep flowing after it; to stop the run at the marker,
// break out of the loop.
func WatchMarker(seq iter.Seq2[Event, error], marker string, found func(Event)) iter.Seq2[Event, error] {
	if marker == "" {
		marker = DefaultMarker
	}
	return func(yield func(Event, error) bool) {
		done := false
		var tail string // the end of the delta text so far, shorter than marker
		check := func(ev Event, text string) {
			if !done && strings.Contains(text, marker) {
				done = true
				if found != nil {
					found(ev)
				}
			}
		}
		for ev, err := range seq {
			if err == nil && ev.Subagent == "" {
				switch ev.Kind {
				case EventTextDelta:
					s := tail + ev.Text
					check(ev, s)
					if keep := len(marker) - 1; len(s) > keep {
						s = s[len(s)-keep:]
					}
					tail = s
				case EventText:
					check(ev, ev.Text)
					tail = ""
				case EventResult:
					if ev.Result != nil {
						check(ev, ev.Result.Text)
					}
				}
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}
