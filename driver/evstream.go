// Package evstream holds the event-stream rules every agentcli.Backend
// follows, real or scripted: text deltas that add up to the whole answer,
// OnText delivery, and Run as a collected Stream. It is pure (no processes),
// so the test kit can use it on every platform.
package driver

import (
	"errors"
	"iter"

	"github.com/agentcli/agentcli"
)

// Deltas makes sure a caller who prints only text deltas (EventTextDelta)
// gets the whole answer exactly once, and likewise for thinking deltas
// (EventThinking with Delta set): a complete block that no delta preceded
// is preceded by one synthesized delta holding the whole block. CLIs that
// stream deltas repeat each block whole afterwards; those blocks pass
// through unchanged. Each sub-agent thread (Event.Subagent) is tracked on
// its own. The zero value is ready to use.
type Deltas struct {
	text, thinking threads
}

// threads records, for each thread, whether a delta arrived since the
// last block. The main thread, which has nearly every event, is a field.
type threads struct {
	main bool
	sub  map[string]bool
}

func (t *threads) get(thread string) bool {
	if thread == "" {
		return t.main
	}
	return t.sub[thread]
}

func (t *threads) set(thread string, v bool) {
	if thread == "" {
		t.main = v
		return
	}
	t.sub = mark(t.sub, thread, v)
}

// Apply appends to dst the events that ev stands for: ev itself, preceded by
// a synthesized delta when one is due.
func (d *Deltas) Apply(dst []agentcli.Event, ev agentcli.Event) []agentcli.Event {
	switch {
	case ev.Kind == agentcli.EventTextDelta:
		d.text.set(ev.Subagent, true)
	case ev.Kind == agentcli.EventText:
		if !d.text.get(ev.Subagent) && ev.Text != "" {
			dst = append(dst, agentcli.Event{Kind: agentcli.EventTextDelta, SessionID: ev.SessionID, Text: ev.Text, Subagent: ev.Subagent})
		}
		d.text.set(ev.Subagent, false)
	case ev.Kind == agentcli.EventThinking && ev.Delta:
		d.thinking.set(ev.Subagent, true)
	case ev.Kind == agentcli.EventThinking:
		if !d.thinking.get(ev.Subagent) && ev.Text != "" {
			dst = append(dst, agentcli.Event{Kind: agentcli.EventThinking, Delta: true, SessionID: ev.SessionID, Text: ev.Text, Subagent: ev.Subagent})
		}
		d.thinking.set(ev.Subagent, false)
	}
	return append(dst, ev)
}

func mark(m map[string]bool, k string, v bool) map[string]bool {
	if m == nil {
		if !v {
			return nil
		}
		m = map[string]bool{}
	}
	if v {
		m[k] = true
	} else {
		delete(m, k)
	}
	return m
}

// RelayText passes a run's main-thread text deltas to a Request.OnText
// callback.
func RelayText(onText func(string), ev agentcli.Event) {
	if onText != nil && ev.Kind == agentcli.EventTextDelta && ev.Subagent == "" {
		onText(ev.Text)
	}
}

// Collect consumes a run's event stream and returns its final result, with
// Backend.Run's contract: the Result of an *agentcli.ResultError comes back
// with the error, and a stream that ends without a result is an
// *agentcli.NoResultError.
func Collect(backend string, seq iter.Seq2[agentcli.Event, error]) (*agentcli.Result, error) {
	var res *agentcli.Result
	for ev, err := range seq {
		if err != nil {
			var re *agentcli.ResultError
			if errors.As(err, &re) && re.Result != nil {
				return re.Result, err
			}
			return res, err
		}
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
	}
	if res == nil {
		return nil, &agentcli.NoResultError{Backend: backend}
	}
	return res, nil
}
