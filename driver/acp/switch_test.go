package acp

import (
	"encoding/json"
	"testing"
)

// The turn ends with the last of its session/prompt answers: a steered
// prompt's answer, or the first prompt's, whichever comes last.
func TestHeldBack(t *testing.T) {
	c := &client{}
	c.sw.pending = 2 // the turn's prompt and one steered prompt
	if !c.heldBack(json.RawMessage(`{"stopReason":"end_turn"}`), nil) {
		t.Fatal("the first of two answers ended the turn")
	}
	if c.sw.pending != 1 || c.sw.held == nil {
		t.Fatalf("pending %d, held %v", c.sw.pending, c.sw.held)
	}
	if c.heldBack(json.RawMessage(`{"stopReason":"end_turn"}`), nil) {
		t.Fatal("the last answer did not end the turn")
	}
	if c.sw.pending != 0 {
		t.Fatalf("pending %d after the turn", c.sw.pending)
	}
	// An answer between turns (none due) ends nothing twice.
	if c.heldBack(nil, nil) {
		t.Fatal("an answer with none due was held")
	}
}
