package streamjson

import (
	"sync"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/live"
)

// TurnParser is the parser of one turn of a live session (a
// driver.Parser, usually driver.Lines over the CLI's parser state) that
// also tells the session id the CLI has named so far.
type TurnParser interface {
	Line(line []byte) []agentcli.Event
	// SessionID returns the session id read so far, or "".
	SessionID() string
}

// Feed hands a stdout line that is not a control message to the running
// turn's parser, *cur, read under mu (nil between turns: the line is then
// dropped), and what the parser reads to h: the session id it has seen
// by then, then its events, in order. It returns the parser, or nil
// between turns, for the caller to look at what the line ended. It blocks
// while h.Emit does.
func Feed[P interface {
	comparable
	TurnParser
}](h *live.Host, mu *sync.Mutex, cur *P, line []byte) P {
	mu.Lock()
	ps := *cur
	mu.Unlock()
	var none P
	if ps == none {
		return none
	}
	evs := ps.Line(line)
	h.SetSessionID(ps.SessionID())
	for _, ev := range evs {
		h.Emit(ev)
	}
	return ps
}
