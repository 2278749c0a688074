package runner

import (
	"bytes"
	"encoding/json"

	"github.com/agentcli/agentcli"
)

// Notice returns the EventNotice for an output line the backend's parser
// could not understand: a *agentcli.ParseError holding (the first 4 KiB of)
// the line. The run goes on.
func Notice(backend string, line []byte, err error) agentcli.Event {
	l := line
	if len(l) > 4096 {
		l = l[:4096]
	}
	pe := &agentcli.ParseError{Backend: backend, Line: bytes.Clone(l), Err: err}
	return agentcli.Event{Kind: agentcli.EventNotice, Err: pe, Text: pe.Error(), Raw: json.RawMessage(bytes.Clone(line))}
}

// TextRelay delivers assistant text to a Request.OnText callback: every
// text delta, and a complete text block only when no delta of it was
// delivered (CLIs that stream deltas repeat the whole block afterwards).
type TextRelay struct {
	OnText func(string)
	deltas bool
}

// Observe passes ev's text on, if any is due.
func (r *TextRelay) Observe(ev agentcli.Event) {
	if r.OnText == nil {
		return
	}
	switch ev.Kind {
	case agentcli.EventTextDelta:
		r.deltas = true
		r.OnText(ev.Text)
	case agentcli.EventText:
		if !r.deltas {
			r.OnText(ev.Text)
		}
		r.deltas = false
	}
}
