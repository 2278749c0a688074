package driver

import (
	"context"
	"encoding/json"
)

// HookInput is what a CLI's command or http hook gives about a tool call
// (gemini, droid, copilot; qwen's input holds more): Claude Code's hook
// input, which these CLIs follow.
type HookInput struct {
	SessionID    string          `json:"session_id"`
	Event        string          `json:"hook_event_name"`
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
}

// RelayHooks serves run r's hooks at a HookEndpoint (ServeHooks, with
// answer), writes the endpoint's relay script (HookEndpoint.WriteRelay)
// and returns the CLI's hook registrations: for each event of events
// that is on, entry(relay), where relay is the script's path (one value,
// shared by every event). When no event is on it starts nothing and
// returns nil. It does not block.
func RelayHooks[In any](r *Run, events map[string]bool, answer func(ctx context.Context, in *In) any, entry func(relay string) any) (map[string]any, error) {
	on := false
	for _, v := range events {
		on = on || v
	}
	if !on {
		return nil, nil
	}
	ep, err := ServeHooks(r, answer)
	if err != nil {
		return nil, err
	}
	relay, err := ep.WriteRelay(r)
	if err != nil {
		return nil, err
	}
	hook := entry(relay)
	hooks := map[string]any{}
	for ev, v := range events {
		if v {
			hooks[ev] = hook
		}
	}
	return hooks, nil
}

// ToolResponseText returns the text of a tool_response that gemini or
// qwen gives a PostToolUse hook ({"llmContent":...,"returnDisplay":...}):
// the first of llmContent and returnDisplay (returnDisplay first when
// displayFirst is set) that is a non-empty string, else the JSON as it
// is. It is pure.
func ToolResponseText(raw json.RawMessage, displayFirst bool) string {
	var r struct {
		LLMContent    json.RawMessage `json:"llmContent"`
		ReturnDisplay json.RawMessage `json:"returnDisplay"`
	}
	if json.Unmarshal(raw, &r) == nil {
		order := []json.RawMessage{r.LLMContent, r.ReturnDisplay}
		if displayFirst {
			order[0], order[1] = order[1], order[0]
		}
		for _, f := range order {
			var s string
			if json.Unmarshal(f, &s) == nil && s != "" {
				return s
			}
		}
	}
	return string(raw)
}
