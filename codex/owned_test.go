package codex

import (
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// A huge line (under Request.DropRaw, or longer than Request.MaxRawBytes)
// costs the line, not a copy as well: its text, command output or MCP result
// stays in the line's memory.
func TestHugeLineOwned(t *testing.T) {
	backendtest.CheckOwnedShapes(t, func() driver.Parser { return newParser(&agentcli.Request{}) }, map[string]string{
		"message":   `{"type":"item.completed","item":{"id":"i","type":"agent_message","text":BIG}}`,
		"reasoning": `{"type":"item.completed","item":{"id":"i","type":"reasoning","text":BIG}}`,
		"command":   `{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"cat big","aggregated_output":BIG,"exit_code":0,"status":"completed"}}`,
		"mcp text":  `{"type":"item.completed","item":{"id":"i","type":"mcp_tool_call","server":"s","tool":"t","arguments":{},"result":{"content":[{"type":"text","text":BIG}],"structured_content":null},"status":"completed"}}`,
		"mcp args":  `{"type":"item.started","item":{"id":"i","type":"mcp_tool_call","server":"s","tool":"t","arguments":{"content":BIG},"status":"in_progress"}}`,
	})
}
