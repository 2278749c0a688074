package claude

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// TestRealTranscripts parses output captured from the real claude 2.1.330
// (testdata/real, see its README) in all three output shapes. The expected
// texts are what the scripted model server was told to answer.
func TestRealTranscripts(t *testing.T) {
	want := map[string]string{
		"text":       "Hello from agentclitest.",
		"dashprompt": "Hello from agentclitest.",
		"thinking":   "Hello from agentclitest.",
		"tool":       "The command printed conformance.",
		"resume-1":   "I will remember apple.",
		"resume-2":   "The word was apple.",
	}
	for _, shape := range []string{"stream", "json", "jsonverbose"} {
		sessions := map[string]string{}
		for _, scen := range []string{"text", "dashprompt", "thinking", "tool", "resume-1", "resume-2", "error400"} {
			name := scen + "-" + shape
			t.Run(name, func(t *testing.T) {
				tr := backendtest.ReadTranscript(t, name)
				out, stderr, code := tr.Stdout, tr.Stderr, tr.Exit
				p, evs := parseAll(t, out)
				res, err := spec.End(p, driver.Exit{Code: code, Stderr: string(stderr)})
				for _, ev := range evs {
					if ev.Kind == agentcli.EventNotice && ev.Err != nil {
						t.Errorf("notice on real output: %v", ev.Err)
					}
				}
				if scen == "error400" {
					var re *agentcli.ResultError
					if !errors.As(err, &re) || re.APIStatus != 400 || re.ExitCode != 1 || re.TerminalReason != "api_error" ||
						!strings.Contains(re.Message, "agentclitest says no") || res == nil || !res.IsError {
						t.Fatalf("err = %v, res = %+v", err, res)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if res.Text != want[scen] || res.SessionID == "" || res.Usage.InputTokens == 0 || res.CostUSD == nil || res.Turns == 0 {
					t.Fatalf("result %+v", res)
				}
				sessions[scen] = res.SessionID
				if scen == "resume-2" && sessions["resume-1"] != res.SessionID {
					t.Fatalf("resumed session %s, first run %s", res.SessionID, sessions["resume-1"])
				}
				count := func(k agentcli.EventKind) int {
					n := 0
					for _, ev := range evs {
						if ev.Kind == k {
							n++
						}
					}
					return n
				}
				if shape == "json" {
					return // one result object: no events but usage
				}
				if count(agentcli.EventInit) != 1 {
					t.Errorf("%d init events", count(agentcli.EventInit))
				}
				for _, ev := range evs {
					if ev.Kind == agentcli.EventInit && ev.Version != "2.1.330" {
						t.Errorf("init event reports CLI version %q, want 2.1.330", ev.Version)
					}
				}
				switch scen {
				case "tool":
					var use *agentcli.ToolUse
					var tr *agentcli.ToolResult
					for _, ev := range evs {
						if ev.Tool != nil {
							use = ev.Tool
						}
						if ev.ToolResult != nil {
							tr = ev.ToolResult
						}
					}
					if use == nil || use.Name != "Bash" || use.Kind != agentcli.ToolExecute || !strings.Contains(string(use.Input), "echo conformance") {
						t.Fatalf("tool use %+v", use)
					}
					if tr == nil || tr.ID != use.ID || tr.Output != "conformance" || tr.IsError {
						t.Fatalf("tool result %+v", tr)
					}
				case "thinking":
					if count(agentcli.EventThinking) == 0 {
						t.Fatalf("no thinking events")
					}
				}
				if shape == "stream" {
					var b strings.Builder
					for _, ev := range evs {
						if ev.Kind == agentcli.EventTextDelta {
							b.WriteString(ev.Text)
						}
					}
					if !strings.HasSuffix(b.String(), want[scen]) {
						t.Fatalf("deltas %q do not end with the answer", b.String())
					}
				}
			})
		}
	}
}
