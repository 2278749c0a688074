package streamjson

import (
	"encoding/json"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Blocks says how the content blocks of a CLI's assistant messages become
// events (see Events): a backend declares it once.
type Blocks struct {
	// Tools names the tools of tool_use blocks.
	Tools driver.Tools
	// ServerTools: server_tool_use blocks (tools the API runs, such as
	// web search) are tool uses too.
	ServerTools bool
	// EmptyInput is the input of a tool use whose block has none (nil
	// keeps none).
	EmptyInput json.RawMessage
}

// Events appends to dst the events of an assistant message's blocks,
// each from base: a text block an EventText, thinking an EventThinking, a
// tool use an EventToolUse, and any other block (redacted_thinking, a
// block of the future) an EventUnknown with line's UnknownRaw. It returns
// the text of the last text block, and whether there was one.
func (c *Blocks) Events(dst []agentcli.Event, blocks []Block, base agentcli.Event, line *driver.Line) (_ []agentcli.Event, last string, hasText bool) {
	for i := range blocks {
		b := &blocks[i]
		typ := b.Type
		if typ == "server_tool_use" && c.ServerTools {
			typ = "tool_use"
		}
		ev := base
		switch typ {
		case "text":
			ev.Kind, ev.Text = agentcli.EventText, b.Text
			last, hasText = b.Text, true
		case "thinking":
			ev.Kind, ev.Text = agentcli.EventThinking, b.Thinking
		case "tool_use":
			input := b.Input
			if len(input) == 0 {
				input = c.EmptyInput
			}
			ev.Kind, ev.Tool = agentcli.EventToolUse, c.Tools.Use(b.ID, b.Name, input)
		default:
			ev.Kind, ev.Raw = agentcli.EventUnknown, line.UnknownRaw()
		}
		dst = append(dst, ev)
	}
	return dst, last, hasText
}

// ToolResults appends to dst an EventToolResult, from base, for each
// tool_result block of a user message's blocks; it skips the others.
func ToolResults(dst []agentcli.Event, blocks []Block, base agentcli.Event) []agentcli.Event {
	for i := range blocks {
		b := &blocks[i]
		if b.Type != "tool_result" {
			continue
		}
		ev := base
		ev.Kind = agentcli.EventToolResult
		ev.ToolResult = &agentcli.ToolResult{ID: b.ToolUseID, Output: b.Content, IsError: b.IsError}
		dst = append(dst, ev)
	}
	return dst
}
