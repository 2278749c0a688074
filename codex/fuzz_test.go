package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// FuzzParse feeds arbitrary output to the parser, then ends the run with
// an arbitrary exit status. It must never panic, and End must return a
// result or an error.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "real", "*.stdout"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, 0, "", false)
		}
	}
	f.Add([]byte(`{"type":"item.completed","item":{"id":"item_6","type":"web_search","id":"ws_1","query":"q","action":{"type":"search"}}}`), 0, "", false)
	f.Add([]byte(`{"type":"error","message":"Reconnecting... 2/5 (unexpected status 502)"}`+"\n"+`{"type":"turn.failed","error":{"message":"x"}}`), 1, "boom", true)
	f.Add([]byte(`{"type":"item.updated","item":{"id":"item_7","type":"todo_list","items":[{"text":"a","completed":true}]}}`), 0, "", true)
	f.Add([]byte("\x00\xff{\"type\":\"item.started\",\"item\":{\"type\":\"mcp_tool_call\",\"arguments\":[1,"), 101, "no rollout found", true)
	f.Fuzz(func(t *testing.T, out []byte, code int, stderr string, resume bool) {
		req := &agentcli.Request{}
		if resume {
			req.SessionID = "01a20097-ba30-7780-86c4-391ca595925e"
		}
		p := newParser(req)
		for _, l := range bytes.Split(out, []byte("\n")) {
			p.Line(l)
		}
		res, err := spec.End(p, driver.Exit{Code: code, Stderr: stderr})
		if res == nil && err == nil {
			t.Fatal("End returned neither a result nor an error")
		}
	})
}
