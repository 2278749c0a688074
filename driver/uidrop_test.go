package driver

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentcli/agentcli"
)

// full has every setting DropUI knows.
func full() agentcli.Request {
	return agentcli.Request{Prompt: "p", Model: "m", Effort: agentcli.EffortHigh, MaxTurns: 2, MaxBudgetUSD: 1.5,
		OutputSchema: json.RawMessage(`{"type":"object"}`), MCPServers: []agentcli.MCPServer{{Name: "s", Command: "x"}}}
}

// TestDropUI: each field is reported under its name, in the order given,
// and cleared; under Strict the first one set is the error and nothing
// is cleared; a field the request lacks is passed over.
func TestDropUI(t *testing.T) {
	all := []UIField{UIModel, UIEffort, UIMaxTurns, UIMaxBudget, UIOutputSchema, UIMCPServers}
	names := []string{"model", "reasoning effort", "max turns", "spending cap (max budget)", "structured output (output schema)", "MCP servers"}
	for i, f := range all {
		req := full()
		r := &Run{Req: &req, Options: &agentcli.Options{Strict: true}, backend: "b"}
		var ue *agentcli.UnsupportedError
		if err := r.DropUI(&req, f, UIModel); !errors.As(err, &ue) || ue.Feature != names[i] {
			t.Errorf("field %d: %v, want %q", f, err, names[i])
		}
		r.Options.Strict = false
		if err := r.DropUI(&req, f); err != nil {
			t.Fatal(err)
		}
		if err := (&Run{Options: &agentcli.Options{Strict: true}}).DropUI(&req, f); err != nil {
			t.Errorf("field %d: still set after DropUI: %v", f, err)
		}
	}
	req := full()
	r := &Run{Req: &req, Options: &agentcli.Options{}}
	if err := r.DropUI(&req, all...); err != nil {
		t.Fatal(err)
	}
	if (req.Model != "" || req.Effort != "" || req.MaxTurns != 0 || req.MaxBudgetUSD != 0 || req.OutputSchema != nil || req.MCPServers != nil) || req.Prompt != "p" {
		t.Fatalf("not cleared: %+v", req)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an unknown field did not panic")
		}
	}()
	r.DropUI(&req, UIField(0))
}
