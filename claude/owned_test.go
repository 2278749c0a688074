package claude

import (
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// A huge line (under Request.DropRaw, or longer than Request.MaxRawBytes)
// costs the line, not a copy as well: its text, tool output or tool input
// stays in the line's memory.
func TestHugeLineOwned(t *testing.T) {
	backendtest.CheckOwnedShapes(t, func() driver.Parser { return newParser() }, map[string]string{
		"text":          `{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":BIG}]},"session_id":"s"}`,
		"thinking":      `{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"thinking","thinking":BIG}]},"session_id":"s"}`,
		"tool input":    `{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Write","input":{"file_path":"/x","content":BIG}}]},"session_id":"s"}`,
		"tool result":   `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":BIG}]},"session_id":"s"}`,
		"result blocks": `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":BIG}]}]},"session_id":"s"}`,
		"result":        `{"type":"result","subtype":"success","is_error":false,"result":BIG,"session_id":"s"}`,
	})
}
