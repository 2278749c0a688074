package copilot

import (
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/driver"
)

// FuzzParse feeds arbitrary output to the parser and then ends the run
// with an arbitrary exit: it must never panic, and End must always decide
// (a result or an error), never a success after a non-zero exit.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"tool", "error400", "thinking"} {
		if b, err := os.ReadFile("testdata/real/" + name + ".stdout"); err == nil {
			f.Add(string(b), "", 0)
		}
	}
	f.Add(`{"type":"agentcli.session","sessionId":"s"}`+"\n"+`{"type":"result","sessionId":5,"exitCode":"x"}`, "", 0)
	f.Add(`{"type":"session.error","data":{"statusCode":"429","message":[1]}}`, "boom", 1)
	f.Add(`{"type":"agentcli.usage_file","data":{"modelMetrics":{"m":{"usage":{"inputTokens":1e400}}}}}`, "", 0)
	f.Add("\xff\xfe{\"type\":\"assistant.message\",\"data\":{\"toolRequests\":[{}]}}", "", 1)
	f.Fuzz(func(t *testing.T, out, stderr string, code int) {
		p := newParser("", code%2 == 0)
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
	})
}
