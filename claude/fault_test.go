package claude

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/fakecli"
)

func TestMain(m *testing.M) {
	fakecli.MaybeRun()
	backendtest.UsePinnedCLIs()
	os.Exit(m.Run())
}

// kit scripts Claude Code's stream-json output for the fault matrix. The
// line shapes follow real 2.1.330 output (testdata/real).
var kit = backendtest.Kit{
	Name:       Name,
	New:        func(o *agentcli.Options) agentcli.Backend { return New(o) },
	TempPrefix: "agentcli-run-",
	Success: func(text, sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","cwd":"/tmp","session_id":%q,"tools":["Bash"],"model":"claude-test","uuid":"u1"}`, sess),
			fmt.Sprintf(`out {"type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":%q}],"stop_reason":null},"parent_tool_use_id":null,"session_id":%q,"uuid":"u2"}`, text, sess),
			fmt.Sprintf(`out {"duration_ms":10,"is_error":false,"num_turns":1,"result":%q,"session_id":%q,"total_cost_usd":0.001,"usage":{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"subtype":"success","type":"result","terminal_reason":"completed","stop_reason":"end_turn"}`, text, sess),
		}
	},
	Partial: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","session_id":%q,"model":"claude-test"}`, sess),
			fmt.Sprintf(`out {"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}},"session_id":%q,"parent_tool_use_id":null}`, sess),
		}
	},
	Truncated: func(sess string) []string {
		return []string{
			fmt.Sprintf(`out {"type":"system","subtype":"init","session_id":%q,"model":"claude-test"}`, sess),
			`outraw {"type":"result","subtype":"success","is_error":false,"result":"hel`,
		}
	},
}

func TestFaultMatrix(t *testing.T) { backendtest.FaultMatrix(t, kit) }

// The system prompt reaches the CLI through a private file (0600) that
// exists only while the run does.
func TestSystemPromptFile(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	b, dir := kit.Setup(t, nil, kit.Success("ok", "s")...)
	sys := "Answer in French.\n\"quoted\" and -dashes --help"
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "--help", SystemPrompt: sys}); err != nil {
		t.Fatal(err)
	}
	rec, err := fakecli.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Files["--append-system-prompt-file"] != sys || rec.FileModes["--append-system-prompt-file"] != 0o600 {
		t.Fatalf("system prompt file %q mode %o", rec.Files["--append-system-prompt-file"], rec.FileModes["--append-system-prompt-file"])
	}
	if rec.StdinPrompt != "--help" || rec.Prompt != "" || !strings.Contains(rec.Stdin, `"text_not_typed":true`) {
		t.Fatalf("prompt: stdin %q, positional %q", rec.Stdin, rec.Prompt)
	}
	for _, e := range rec.Env {
		if strings.HasPrefix(e, "CLAUDECODE=") {
			t.Fatalf("CLAUDECODE leaked into the CLI's environment")
		}
	}
	backendtest.AssertNoLeaks(t, kit.TempPrefix)
}
