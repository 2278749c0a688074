//go:build unix

package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// longToolDelay is how long the handler of TestHostToolLong's tool runs:
// beyond the smallest default time limit for one MCP tool call among the
// CLIs (codex's tool_timeout_sec, 60 s; gemini's fetch waits 60 s for a
// response's headers), so that a CLI still at its default gives up first.
const longToolDelay = 65 * time.Second

// longMarker is the text the long tool returns.
const longMarker = "LONG-MARKER-4b19"

// TestHostToolLong: a host tool whose handler runs longer than a minute,
// one-shot (bypass), on every CLI: the call is not cut off by the CLI's
// own time limit for an MCP tool call (agentcli raises it for its
// host-tool server where the CLI has a setting, and its server keeps a
// long call's response alive), the handler's ctx is not cancelled, and
// its text reaches the model, which then finishes the run.
//
// Each subtest starts its run before it calls t.Parallel, so that every
// CLI's run goes on at once, whatever go test's -parallel: the runs spend
// their time waiting for the tool, and the test adds about one run's time
// to the suite, not seven.
func TestHostToolLong(t *testing.T) {
	t.Parallel()
	for _, cli := range []string{"claude", "codex", "gemini", "opencode", "copilot", "qwen", "droid"} {
		t.Run(cli, func(t *testing.T) {
			e := newEnv(t, cli,
				agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: hostToolName(cli, "build"), Args: map[string]any{}}},
				agentclitest.Turn{Text: "done"})
			b := openBackend(t, cli, nil)
			cut := make(chan time.Duration, 1)
			build := agentcli.NewTool("build", "Builds the project; takes a while.", func(ctx context.Context, in struct{}) (string, error) {
				start := time.Now()
				select {
				case <-time.After(longToolDelay):
					return longMarker, nil
				case <-ctx.Done():
					cut <- time.Since(start)
					return "", ctx.Err()
				}
			})
			req, tag := e.request("build the project")
			req.Tools = []agentcli.Tool{build}
			req.Permission = agentcli.PermissionBypass
			req.Timeout = longToolDelay + runTimeout
			type outcome struct {
				res  *agentcli.Result
				err  error
				left []string
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := b.Run(context.Background(), req)
				done <- outcome{res, err, procsWithTag(tag)}
			}()
			t.Parallel()
			o := <-done
			if len(o.left) > 0 {
				t.Errorf("processes of the run still alive after it returned:\n%s", strings.Join(o.left, "\n"))
			}
			select {
			case d := <-cut:
				t.Errorf("the handler's ctx ended after %v, before the tool was done", d.Round(time.Second))
			default:
			}
			if o.err != nil {
				t.Fatalf("Run: %s; requests: %s", errSummary(o.err), describe(e.srv.Requests()))
			}
			main := e.main()
			if len(main) != 2 {
				t.Fatalf("%d main model calls, want 2: %s", len(main), describe(e.srv.Requests()))
			}
			if out := toolOutputs(main[1]); !strings.Contains(out, longMarker) {
				t.Errorf("the tool's text did not reach the model; tool results %q", out)
			}
			if o.res.Text != "done" {
				t.Errorf("Text = %q", o.res.Text)
			}
		})
	}
}
