package backendtest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// diffEvents finds a difference with and without its fast path, and
// ignores only Result.Duration.
func TestDiffEvents(t *testing.T) {
	run := func(text string, d time.Duration) []agentcli.Event {
		return []agentcli.Event{
			{Kind: agentcli.EventText, Text: text, Raw: []byte(`{"t":"` + text + `"}`)},
			{Kind: agentcli.EventResult, Result: &agentcli.Result{Text: text, Duration: d}},
		}
	}
	boom := errors.New("boom")
	for _, c := range []struct {
		name       string
		want, got  []agentcli.Event
		werr, gerr error
		diff       string // "" or what the difference mentions
	}{
		{name: "same", want: run("a", time.Second), got: run("a", time.Second)},
		{name: "durations differ", want: run("a", time.Second), got: run("a", time.Hour)},
		{name: "text differs", want: run("a", 0), got: run("b", 0), diff: "at event 0"},
		{name: "one event less", want: run("a", 0), got: run("a", 0)[:1], diff: "at event 1 of 3 (got 2)"},
		{name: "raw differs", want: run("a", 0), got: append(run("a", 0)[:0:0], agentcli.Event{Kind: agentcli.EventText, Text: "a", Raw: []byte(`{"t":"A"}`)}, run("a", 0)[1]), diff: "at event 0"},
		{name: "error differs", want: run("a", 0), got: run("a", 0), werr: boom, diff: "error *errors.errorString: boom"},
		{name: "same error text", want: run("a", 0), got: run("a", 0), werr: boom, gerr: errors.New("boom")},
	} {
		d := diffEvents(c.want, c.werr, c.got, c.gerr)
		if (d == "") != (c.diff == "") || !strings.Contains(d, c.diff) {
			t.Errorf("%s: diffEvents = %q, want one mentioning %q", c.name, d, c.diff)
		}
	}
}
