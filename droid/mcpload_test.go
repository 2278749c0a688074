package droid

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// TestRuntimeSettingsBlockOnMCPLoad: a run with MCP servers asks droid
// to wait for them before each model turn (blockOnMcpLoad at the root of
// the runtime settings file, where droid 0.225.2 takes general settings:
// it refuses a "general" wrapper); a run without any writes no such key.
func TestRuntimeSettingsBlockOnMCPLoad(t *testing.T) {
	r := &driver.Run{Req: &agentcli.Request{MCPServers: []agentcli.MCPServer{{Name: "docs", Command: "docs"}}}}
	defer r.Cleanup()
	f, _, err := runtimeSettings(r)
	if err != nil || f == "" {
		t.Fatalf("runtimeSettings: %q, %v", f, err)
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["blockOnMcpLoad"] != true {
		t.Errorf("runtime settings %s: blockOnMcpLoad is not true", b)
	}
	if _, ok := got["general"]; ok {
		t.Errorf("runtime settings %s: droid refuses a general key", b)
	}
	if _, ok := got["mcp"]; !ok {
		t.Errorf("runtime settings %s: no mcp", b)
	}
}
