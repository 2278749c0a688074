package gemini

import (
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// A huge line (under Request.DropRaw, or longer than Request.MaxRawBytes)
// costs the line, not a copy as well: its text, tool parameters or tool
// output stays in the line's memory.
func TestHugeLineOwned(t *testing.T) {
	backendtest.CheckOwnedShapes(t, func() driver.Parser { return newParser(formatStream) }, map[string]string{
		"message":     `{"type":"message","timestamp":"2026-11-22T00:00:01.000Z","role":"assistant","content":BIG,"delta":true}`,
		"tool params": `{"type":"tool_use","timestamp":"2026-11-22T00:00:01.000Z","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"/x","content":BIG}}`,
		"tool output": `{"type":"tool_result","timestamp":"2026-11-22T00:00:01.000Z","tool_id":"w1","status":"success","output":BIG}`,
	})
}
