package driver

import (
	"testing"

	"github.com/agentcli/agentcli"
)

func TestMergeSteered(t *testing.T) {
	c1, c2 := 0.1, 0.3
	prev := &agentcli.Result{Text: "one", Usage: agentcli.Usage{InputTokens: 1, OutputTokens: 2}, CostUSD: &c1, Turns: 2}
	next := &agentcli.Result{Text: "two", Usage: agentcli.Usage{InputTokens: 10, OutputTokens: 20}, CostUSD: &c2, Turns: 1}
	got := MergeSteered(prev, next)
	if got.Text != "two" || got.Usage.InputTokens != 11 || got.Usage.OutputTokens != 22 || *got.CostUSD != c2 || got.Turns != 3 {
		t.Errorf("merged %+v", got)
	}
	if next.Usage.InputTokens != 10 {
		t.Error("next was modified")
	}
	// Cumulative usage: the last report covers both.
	next.Usage.Cumulative = true
	if got := MergeSteered(prev, next); got.Usage != next.Usage {
		t.Errorf("cumulative: %+v", got.Usage)
	}
	// No cost in the last: the earlier one's.
	next.CostUSD = nil
	if got := MergeSteered(prev, next); got.CostUSD != &c1 {
		t.Errorf("cost %v", got.CostUSD)
	}
	if MergeSteered(nil, next) != next || MergeSteered(prev, nil) != prev {
		t.Error("a nil side")
	}
}
