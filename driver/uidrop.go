package driver

import "github.com/agentcli/agentcli"

// UIField names a Request setting that a CLI's interactive UI may not
// take on its command line, for Run.DropUI.
type UIField int

// The settings Run.DropUI knows, each reported under the name that
// follows it.
const (
	UIModel        UIField = iota + 1 // Request.Model: "model"
	UIEffort                          // Request.Effort: "reasoning effort"
	UIMaxTurns                        // Request.MaxTurns: "max turns"
	UIMaxBudget                       // Request.MaxBudgetUSD: "spending cap (max budget)"
	UIOutputSchema                    // Request.OutputSchema: "structured output (output schema)"
	UIMCPServers                      // Request.MCPServers: "MCP servers"
)

// setting returns the UISetting of f in req. It panics on a UIField
// that is none of the constants.
func (f UIField) setting(req *agentcli.Request) UISetting {
	switch f {
	case UIModel:
		return UISetting{Set: req.Model != "", Feature: "model", Clear: func() { req.Model = "" }}
	case UIEffort:
		return UISetting{Set: req.Effort != "", Feature: "reasoning effort", Clear: func() { req.Effort = "" }}
	case UIMaxTurns:
		return UISetting{Set: req.MaxTurns > 0, Feature: "max turns", Clear: func() { req.MaxTurns = 0 }}
	case UIMaxBudget:
		return UISetting{Set: req.MaxBudgetUSD > 0, Feature: "spending cap (max budget)", Clear: func() { req.MaxBudgetUSD = 0 }}
	case UIOutputSchema:
		return UISetting{Set: len(req.OutputSchema) > 0, Feature: "structured output (output schema)", Clear: func() { req.OutputSchema = nil }}
	case UIMCPServers:
		return UISetting{Set: len(req.MCPServers) > 0, Feature: "MCP servers", Clear: func() { req.MCPServers = nil }}
	}
	panic("driver: unknown UIField")
}

// DropUI is DropUISettings for the settings fields of req, the copy of
// Run.Req that a Spec.Interactive builds the UI's command line from: in
// the order given, each that req has is reported (a warning, or under
// Options.Strict an error, returned at once) and cleared. It does not
// block.
func (r *Run) DropUI(req *agentcli.Request, fields ...UIField) error {
	list := make([]UISetting, len(fields))
	for i, f := range fields {
		list[i] = f.setting(req)
	}
	return r.DropUISettings(list...)
}
