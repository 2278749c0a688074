package gemini

import (
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/driver"
)

// FuzzParse feeds arbitrary output, in both formats, to the parser and then
// ends the run with arbitrary stderr: it must never panic, and End must
// always decide (a result or an error).
func FuzzParse(f *testing.F) {
	for _, name := range []string{"tool-stream", "error400-stream", "text-json", "error400-json"} {
		if b, err := os.ReadFile("testdata/real/" + name + ".stdout"); err == nil {
			f.Add(string(b), "", 0)
		}
	}
	for _, c := range captured {
		f.Add(c.stdout, c.stderr, c.exit)
	}
	f.Add(`{"type":"result","status":"error","error":{"type":5,"message":["x"],"code":"429"}}`, "", 173)
	f.Add("{\n\"response\": 1,\n}\n}", "[ERROR] {\"error\":{}}", 0)
	f.Add(`{"type":"tool_result","output":{},"error":"x"}`, "{\n{\n", 42)
	f.Add("\xff\xfe{\"type\":\"message\",\"role\":\"assistant\"}", "", 1)
	f.Fuzz(func(t *testing.T, out, stderr string, code int) {
		for _, fm := range []format{formatJSON, formatStream} {
			p := newParser(fm)
			for _, l := range strings.Split(out, "\n") {
				p.Line([]byte(l))
			}
			res, err := spec.End(p, driver.Exit{Code: code % 256, Stderr: stderr})
			if res == nil && err == nil {
				t.Fatal("End returned neither a result nor an error")
			}
			if code%256 != 0 && err == nil {
				t.Fatal("non-zero exit without an error")
			}
		}
	})
}
