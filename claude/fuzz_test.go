package claude

import (
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/driver"
)

// FuzzParse feeds arbitrary output to the parser: it must never panic,
// whatever the bytes, and End must always decide.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/lines/stream-2.1.330.jsonl"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			f.Add(l, 0)
		}
	}
	f.Add(`[{"type":"result","is_error":true},{"type":"x"}]`, 1)
	f.Add(`{"type":"user","message":{"content":[{"type":"tool_result","content":[1,2]}]}}`, 0)
	f.Add(`{"type":"result","result":5,"usage":"x","errors":[{}]}`, 2)
	f.Add("\xff\xfe{\"type\":\"assistant\"}", 0)
	f.Fuzz(func(t *testing.T, line string, code int) {
		p := newParser()
		for _, l := range strings.Split(line, "\n") {
			p.Line([]byte(l))
		}
		res, err := spec.End(p, driver.Exit{Code: code % 256, Stderr: line})
		if res == nil && err == nil {
			t.Fatal("End returned neither a result nor an error")
		}
	})
}
