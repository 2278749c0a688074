package opencode

import (
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/driver"
)

// FuzzParse feeds arbitrary output to the parser: it must never panic,
// whatever the bytes, and End must always decide. The seeds are whole
// transcripts, so minimizing a new input can take the default minute; run
// with e.g. -fuzzminimizetime 2s to keep the engine busy fuzzing.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"text", "tool", "thinking", "error400"} {
		if b, err := os.ReadFile("testdata/real/" + name + ".stdout"); err == nil {
			f.Add(string(b), 0)
		}
	}
	for _, l := range live {
		f.Add(l.stdout, l.exit)
	}
	f.Add(`{"type":"step_finish","part":{"tokens":{"input":1e400,"cache":{"read":-1}},"cost":"NaN"}}`, 0)
	f.Add(`{"type":"tool_use","part":{"state":{"status":"completed","output":{"x":1},"metadata":{"exit":1e30}}}}`, 0)
	f.Add(`{"type":"error","error":{"name":5,"data":{"statusCode":"400"}}}`, 1)
	f.Add(`{"type":"error","error":null}`+"\n"+`{"type":"done","rejected":"all"}`, 1)
	f.Add("\xff\xfe{\"type\":\"text\",\"part\":{\"text\":\"\xed\xa0\x80\"}}", 0)
	f.Fuzz(func(t *testing.T, out string, code int) {
		p := newParser()
		for _, l := range strings.Split(out, "\n") {
			p.Line([]byte(l))
		}
		res, err := spec.End(p, driver.Exit{Code: code % 256, Stderr: out})
		if res == nil && err == nil {
			t.Fatal("End returned neither a result nor an error")
		}
	})
}
