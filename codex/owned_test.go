package codex

import (
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/runner"
)

// A huge line under Request.DropRaw costs the line, not a copy as well:
// its text, command output or MCP result stays in the line's memory.
func TestHugeLineOwned(t *testing.T) {
	big := backendtest.JSONString(backendtest.BigText(4 << 20))
	for name, line := range map[string]string{
		"message":   `{"type":"item.completed","item":{"id":"i","type":"agent_message","text":` + big + `}}`,
		"reasoning": `{"type":"item.completed","item":{"id":"i","type":"reasoning","text":` + big + `}}`,
		"command":   `{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"cat big","aggregated_output":` + big + `,"exit_code":0,"status":"completed"}}`,
		"mcp text":  `{"type":"item.completed","item":{"id":"i","type":"mcp_tool_call","server":"s","tool":"t","arguments":{},"result":{"content":[{"type":"text","text":` + big + `}],"structured_content":null},"status":"completed"}}`,
		"mcp args":  `{"type":"item.started","item":{"id":"i","type":"mcp_tool_call","server":"s","tool":"t","arguments":{"content":` + big + `},"status":"in_progress"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			backendtest.CheckOwnedLine(t, func() runner.Parser { return newParser(&agentcli.Request{}) }, []byte(line))
		})
	}
}
