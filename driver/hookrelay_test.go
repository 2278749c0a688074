package driver

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// TestRelayHooks: with no event on nothing is started; otherwise each
// event that is on gets entry's value for the relay script written in
// the run's temporary directory, and an event that is off none.
func TestRelayHooks(t *testing.T) {
	r := &Run{Req: &agentcli.Request{}}
	defer r.Cleanup()
	answer := func(context.Context, *HookInput) any { return nil }
	calls := 0
	entry := func(relay string) any { calls++; return "run " + relay }
	hooks, err := RelayHooks(r, map[string]bool{"Pre": false, "Post": false}, answer, entry)
	if err != nil || hooks != nil || calls != 0 || r.tmp != "" {
		t.Fatalf("no event on: %v, %v, %d entries, temp dir %q", hooks, err, calls, r.tmp)
	}
	hooks, err = RelayHooks(r, map[string]bool{"Pre": true, "Post": false, "Stop": true}, answer, entry)
	if err != nil {
		t.Fatal(err)
	}
	relay, _ := hooks["Pre"].(string)
	if len(hooks) != 2 || hooks["Stop"] != relay || calls != 1 || !strings.HasPrefix(relay, "run "+r.tmp) {
		t.Fatalf("hooks %v (%d entries), temp dir %q", hooks, calls, r.tmp)
	}
	if b, err := os.ReadFile(strings.TrimPrefix(relay, "run ")); err != nil || !strings.Contains(string(b), "Bearer ") {
		t.Errorf("relay script: %v", err)
	}
}

func TestToolResponseText(t *testing.T) {
	for _, c := range []struct {
		in           string
		displayFirst bool
		want         string
	}{
		{`{"llmContent":"model","returnDisplay":"user"}`, false, "model"},
		{`{"llmContent":"model","returnDisplay":"user"}`, true, "user"},
		{`{"llmContent":"","returnDisplay":"user"}`, false, "user"},
		{`{"llmContent":[{"text":"x"}],"returnDisplay":{"diff":1}}`, true, `{"llmContent":[{"text":"x"}],"returnDisplay":{"diff":1}}`},
		{`"plain"`, false, `"plain"`},
	} {
		if got := ToolResponseText(json.RawMessage(c.in), c.displayFirst); got != c.want {
			t.Errorf("ToolResponseText(%s, %v) = %q, want %q", c.in, c.displayFirst, got, c.want)
		}
	}
}
