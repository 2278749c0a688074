package streamjson_test

import (
	"encoding/json"
	"fmt"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/streamjson"
)

// Events makes the events of an assistant message's blocks, ToolResults
// those of a user message's tool results.
func ExampleBlocks_Events() {
	blocks := streamjson.Blocks{Tools: driver.Tools{"bash": "Bash"}, EmptyInput: json.RawMessage("{}")}
	assistant := []streamjson.Block{
		{Type: "thinking", Thinking: "list the files"},
		{Type: "text", Text: "Listing."},
		{Type: "tool_use", ID: "t1", Name: "bash"},
		{Type: "server_tool_use", ID: "t2", Name: "web_search"},
	}
	line := driver.KeptLine(json.RawMessage(`{"type":"assistant"}`))
	evs, last, hasText := blocks.Events(nil, assistant, agentcli.Event{SessionID: "s1"}, line)
	for _, ev := range evs {
		switch ev.Kind {
		case agentcli.EventToolUse:
			fmt.Println(ev.Kind, ev.Tool.ID, ev.Tool.Name, string(ev.Tool.Input))
		case agentcli.EventUnknown:
			fmt.Println(ev.Kind, string(ev.Raw))
		default:
			fmt.Println(ev.Kind, ev.Text)
		}
	}
	fmt.Printf("last text %q %v\n", last, hasText)

	user := []streamjson.Block{{Type: "text", Text: "ignored"}, {Type: "tool_result", ToolUseID: "t1", Content: "a.go", IsError: false}}
	for _, ev := range streamjson.ToolResults(nil, user, agentcli.Event{}) {
		fmt.Println(ev.Kind, ev.ToolResult.ID, ev.ToolResult.Output)
	}
	// Output:
	// thinking list the files
	// text Listing.
	// tool_use t1 Bash {}
	// unknown {"type":"assistant"}
	// last text "Listing." true
	// tool_result t1 a.go
}
