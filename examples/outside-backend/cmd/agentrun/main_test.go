package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/examples/agentrun/command"
	"github.com/agentcli/agentcli/examples/outside-backend/toyagent"
)

// envToyagent makes the test binary toyagent (see TestMain).
const envToyagent = "TOY_TEST_RUN_TOYAGENT"

func TestMain(m *testing.M) {
	if os.Getenv(envToyagent) != "" {
		os.Exit(toyagent.Main(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// agentrun runs this command with args, the test binary as toyagent and a
// fresh toyagent home, and returns its exit status and output.
func agentrun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envToyagent, "1")
	t.Setenv("TOYAGENT_API_KEY", "k")
	t.Setenv("TOYAGENT_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	code := command.Main(append([]string{"-backend", "toy", "-cli", self}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// -backend toy runs toyagent through the outside backend: plain text,
// then a JSON result whose session a second run resumes.
func TestToyBackend(t *testing.T) {
	if code, out, errOut := agentrun(t, "", "hello there"); code != 0 || out != "You said: hello there\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut := agentrun(t, "", "-json", "one")
	var res agentcli.Result
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Text != "You said: one" {
		t.Fatalf("exit %d, stdout %q (%v), stderr %q", code, out, err, errOut)
	}
	home := os.Getenv("TOYAGENT_HOME")
	self, _ := os.Executable()
	var buf, errBuf bytes.Buffer
	t.Setenv("TOYAGENT_HOME", home) // the same home: the session is there
	code = command.Main([]string{"-backend", "toy", "-cli", self, "-json", "-session", res.SessionID, "two"}, strings.NewReader(""), &buf, &errBuf)
	var second agentcli.Result
	if err := json.Unmarshal(buf.Bytes(), &second); code != 0 || err != nil || second.Text != "You said: two (turn 2)" {
		t.Fatalf("resume: exit %d, stdout %q (%v), stderr %q", code, buf.String(), err, errBuf.String())
	}
}

// -permission bypass lets toyagent run its shell tool; -stream shows the
// call and its result as agentcli's events.
func TestToyToolCall(t *testing.T) {
	code, out, errOut := agentrun(t, "", "-permission", "bypass", "-stream", "run: echo from-the-tool")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var kinds []string
	var output string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Kind       string `json:"kind"`
			ToolResult struct {
				Output string `json:"output"`
			} `json:"tool_result"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		kinds = append(kinds, ev.Kind)
		if ev.Kind == "tool_result" {
			output = ev.ToolResult.Output
		}
	}
	if strings.Join(kinds, " ") != "init tool_use tool_result text_delta text usage result" || output != "from-the-tool\n" {
		t.Fatalf("events %q, tool output %q:\n%s", kinds, output, out)
	}
}

// A failure is agentcli's typed error, on stderr, with exit status 1; the
// usage lists the outside backend with the built-in ones.
func TestToyErrorsAndUsage(t *testing.T) {
	code, _, errOut := agentrun(t, "", "you are overloaded")
	if code != 1 || !strings.Contains(errOut, "toy: error result (rate_limit): API status 429") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = agentrun(t, "")
	// The list is sorted: toy among the built-in ones.
	if code != 2 || !strings.Contains(errOut, "backends: [") || !strings.Contains(errOut, " gemini ") || !strings.Contains(errOut, " toy]") {
		t.Fatalf("usage: exit %d, stderr %q", code, errOut)
	}
}
