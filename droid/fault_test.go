package droid

import (
	"fmt"
	"os"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

func TestMain(m *testing.M) {
	fakecli.MaybeRun()
	backendtest.UsePinnedCLIs(Name)
	os.Exit(m.Run())
}

// kit scripts droid's stream-json output for the fault matrix, in the
// shapes of real 0.225.2 output (testdata/text1.jsonl, err400.jsonl).
var kit = backendtest.Kit{
	Name:       Name,
	New:        func(o *agentcli.Options) agentcli.Backend { return New(o) },
	TempPrefix: "agentcli-run-",
	Success: func(text, sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","cwd":"/tmp","session_id":%q,"tools":["Read","LS","Grep","Glob","TodoWrite"],"model":"custom:droid-test","reasoning_effort":"none"}`, sess),
			fmt.Sprintf(`out {"type":"message","role":"user","id":"u1","text":"hi","timestamp":1795660733419,"session_id":%q}`, sess),
			fmt.Sprintf(`out {"type":"message","role":"assistant","id":"u2","text":%q,"timestamp":1795660733945,"session_id":%q}`, text, sess),
			fmt.Sprintf(`out {"type":"completion","finalText":%q,"numTurns":1,"durationMs":998,"session_id":%q,"timestamp":1795660734068,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"factory_credits":0,"ttft_ms":102}}`, text, sess),
		}
	},
	Partial: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","cwd":"/tmp","session_id":%q,"tools":["Read"],"model":"custom:droid-test","reasoning_effort":"none"}`, sess),
			fmt.Sprintf(`out {"type":"message","role":"assistant","id":"u2","text":"par","timestamp":1795660733945,"session_id":%q}`, sess),
		}
	},
	Truncated: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","cwd":"/tmp","session_id":%q,"tools":["Read"],"model":"custom:droid-test","reasoning_effort":"none"}`, sess),
			fmt.Sprintf(`outraw {"type":"completion","finalText":"hel","numTurns":1,"session_id":%q,"us`, sess),
		}
	},
}

func TestFaultMatrix(t *testing.T) { backendtest.FaultMatrix(t, kit) }

// Without any credential a run fails at once with a *CredentialsError
// naming FACTORY_API_KEY; each way droid finds one lets the run start.
func TestCredentials(t *testing.T) {
	backendtest.CheckCredentials(t, kit, []string{"FACTORY_API_KEY"}, []backendtest.CredentialWay{
		{Name: "API key", Env: []string{"FACTORY_API_KEY=fk-x"}},
		{Name: "login", Files: map[string]string{"~/.factory/auth.json": `{}`}},
		{Name: "BYOK models", Files: map[string]string{"~/.factory/settings.json": `{"customModels":[{"apiKey":"k"}]}`}},
		// FACTORY_HOME_OVERRIDE replaces the home directory: droid
		// reads $FACTORY_HOME_OVERRIDE/.factory.
		{Name: "home override", Env: []string{"FACTORY_HOME_OVERRIDE=~/fh"}, Files: map[string]string{"~/fh/.factory/auth.json": `{}`}},
		{Name: "extra args", ExtraArgs: []string{"--auto=low"}},
	})
}
