package opencode

import (
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// A huge line (under Request.DropRaw, or longer than Request.MaxRawBytes)
// costs the line, not a copy as well: its text or tool output stays in the
// line's memory.
func TestHugeLineOwned(t *testing.T) {
	backendtest.CheckOwnedShapes(t, func() driver.Parser { return newParser() }, map[string]string{
		"text":        `{"type":"text","timestamp":2,"sessionID":"ses_1","part":{"id":"p1","sessionID":"ses_1","messageID":"msg_1","type":"text","text":BIG,"time":{"start":1,"end":2}}}`,
		"tool output": `{"type":"tool_use","timestamp":2,"sessionID":"ses_1","part":{"id":"p1","sessionID":"ses_1","messageID":"msg_1","type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{"command":"cat big"},"output":BIG,"metadata":{"exit":0}}}}`,
		"tool input":  `{"type":"tool_use","timestamp":2,"sessionID":"ses_1","part":{"id":"p1","sessionID":"ses_1","messageID":"msg_1","type":"tool","callID":"c","tool":"write","state":{"status":"completed","input":{"filePath":"/x","content":BIG},"output":"ok"}}}`,
	})
}
