package opencode

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

func TestMain(m *testing.M) {
	fakecli.MaybeRun()
	backendtest.UsePinnedCLIs(Name, "Example")
	os.Exit(m.Run())
}

// q quotes s as a JSON string.
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Script lines in the shape of real opencode 1.18.33 output (testdata/real).

func stepStart(sess, msg string) string {
	return fmt.Sprintf(`{"type":"step_start","timestamp":1795306306946,"sessionID":%s,"part":{"id":"prt_s","messageID":%s,"sessionID":%s,"type":"step-start"}}`, q(sess), q(msg), q(sess))
}

func textLine(sess, msg, text string) string {
	return fmt.Sprintf(`{"type":"text","timestamp":1795306306946,"sessionID":%s,"part":{"id":"prt_t","messageID":%s,"sessionID":%s,"type":"text","text":%s,"time":{"start":1795306306485,"end":1795306306512}}}`, q(sess), q(msg), q(sess), q(text))
}

func stepFinish(sess, msg, reason string) string {
	return fmt.Sprintf(`{"type":"step_finish","timestamp":1795306306946,"sessionID":%s,"part":{"id":"prt_f","reason":%s,"messageID":%s,"sessionID":%s,"type":"step-finish","tokens":{"total":15,"input":10,"output":5,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.001}}`, q(sess), q(reason), q(msg), q(sess))
}

// kit scripts opencode's `run --format json` output for the fault matrix.
var kit = backendtest.Kit{
	Name:       Name,
	New:        func(o *agentcli.Options) agentcli.Backend { return New(o) },
	TempPrefix: "agentcli-run-",
	Success: func(text, sess string) []string {
		return []string{
			"out " + stepStart(sess, "msg_1"),
			"out " + textLine(sess, "msg_1", text),
			"out " + stepFinish(sess, "msg_1", "stop"),
		}
	},
	Partial: func(sess string) []string {
		return []string{
			"out " + stepStart(sess, "msg_1"),
			"out " + textLine(sess, "msg_1", "par"),
		}
	},
	Truncated: func(sess string) []string {
		return []string{
			"out " + stepStart(sess, "msg_1"),
			"outraw " + stepFinish(sess, "msg_1", "stop")[:80],
		}
	},
}

func TestFaultMatrix(t *testing.T) { backendtest.FaultMatrix(t, kit) }

// Every real transcript survives a wire-log round trip: replaying the log
// of a live run yields the same events.
func TestReplayTranscripts(t *testing.T) {
	backendtest.ReplayTranscripts(t, kit, func(string) bool { return true })
}

// Without any credential a run fails at once with a *CredentialsError
// naming the variables; each way opencode finds one lets the run start.
func TestCredentials(t *testing.T) {
	backendtest.CheckCredentials(t, kit, credentialVars, credentialWays)
}

var credentialWays = []backendtest.CredentialWay{
	{Name: "provider key", Env: []string{"ANTHROPIC_API_KEY=k"}},
	{Name: "any provider's key", Env: []string{"DEEPSEEK_API_KEY=k"}},
	{Name: "login", Files: map[string]string{"~/.local/share/opencode/auth.json": `{"anthropic":{"type":"api","key":"k"}}`}},
	{Name: "config content", Env: []string{`OPENCODE_CONFIG_CONTENT={"provider":{}}`}},
	{Name: "user config", Files: map[string]string{"~/.config/opencode/opencode.json": `{"model":"ollama/x"}`}},
	{Name: "project config", Files: map[string]string{"./opencode.json": `{"provider":{"local":{}}}`}},
	{Name: "project .env", Files: map[string]string{"./.env": "OPENAI_API_KEY=k\n"}},
	{Name: "a Zen model", Model: "opencode/big-pickle"},
	{Name: "extra args", ExtraArgs: []string{"--print-logs"}},
}

// No CLI home is created or written into: the config with the system
// prompt and the MCP servers is a private file in the run's temporary
// directory.
func TestNoHomeWrites(t *testing.T) {
	backendtest.CheckNoHomeWrites(t, kit, &agentcli.Request{Prompt: "hi", SystemPrompt: "be brief",
		Effort: agentcli.EffortLow, MCPServers: []agentcli.MCPServer{{Name: "s", Command: "srv", Env: []string{"TOKEN=t"}}}},
		[]string{"XDG_CONFIG_HOME=~/.config", "XDG_DATA_HOME=~/.local/share"})
}
