package conformance_test

import (
	"cmp"
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// TestReadmeCapabilityTable keeps README's capability table equal to what
// the backends declare.
func TestReadmeCapabilityTable(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	var header []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] == "capability" {
			header = cells
			continue
		}
		if header != nil && len(cells) == len(header) {
			rows[cells[0]] = cells[1:]
		}
	}
	if len(header) < 5 {
		t.Fatalf("capability table not found in README (header %q)", header)
	}
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	modes := func(m agentcli.SessionModes) string {
		switch {
		case m.OneShot && m.Live:
			return "yes"
		case m.OneShot:
			return "one-shot"
		case m.Live:
			return "live"
		}
		return "no"
	}
	for i, name := range header[1:] {
		be, err := agentcli.Open(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := be.Capabilities()
		want := map[string]string{
			"text deltas":       yes(c.TextDeltas),
			"thinking":          yes(c.Thinking),
			"resume":            yes(c.Resume),
			"system prompt":     string(c.SystemPrompt),
			"max turns":         yes(c.MaxTurns),
			"tool filtering":    yes(c.ToolFilter),
			"cost":              yes(c.Cost),
			"cumulative usage":  yes(c.CumulativeUsage),
			"mcp servers":       yes(c.MCP),
			"structured output": yes(c.StructuredOutput),
			"fallback model":    yes(c.FallbackModel),
			"spending cap":      yes(c.MaxBudget),

			"host tools":              yes(c.HostTools),
			"questions":               yes(c.Questions),
			"hook pre tool use":       cmp.Or(string(c.Hooks.PreToolUse), "no"),
			"hook deny reason":        yes(c.Hooks.DenyReason),
			"hook rewrite":            yes(c.Hooks.Rewrite),
			"hook post tool use":      yes(c.Hooks.PostToolUse),
			"hook post output":        yes(c.Hooks.PostOutput),
			"hook post context":       yes(c.Hooks.PostContext),
			"hook user prompt submit": yes(c.Hooks.UserPromptSubmit),
			"hook stop":               yes(c.Hooks.Stop),
			"hook stop continue":      yes(c.Hooks.StopContinue),

			"fork session":     modes(c.ForkSession),
			"continue session": modes(c.ContinueSession),
			"new session id":   modes(c.NewSessionID),
			"list sessions":    yes(c.ListSessions),
			"context usage":    yes(c.ContextUsage),
			"compaction":       yes(c.Compaction),
			"rate limits":      yes(c.RateLimits),
			"rate limit reset": yes(c.RateLimitReset),
		}
		var efforts []string
		for _, e := range c.Efforts {
			efforts = append(efforts, string(e))
		}
		want["efforts"] = strings.Join(efforts, " ")
		var kinds []string
		for _, k := range c.Attachments {
			kinds = append(kinds, string(k))
		}
		want["attachments"] = cmp.Or(strings.Join(kinds, " "), "no")
		if c.Sessions {
			// The live-session table, once the backend declares
			// live sessions.
			var modes []string
			for _, m := range c.PermissionModes {
				modes = append(modes, string(m))
			}
			want["sessions"] = yes(c.Sessions)
			want["interrupt"] = yes(c.Interrupt)
			want["permission modes"] = strings.Join(modes, " ")
			want["edit input"] = yes(c.EditInput)
			want["interactive"] = yes(c.Interactive)
			want["portable sessions"] = yes(c.PortableSessions)
			want["set model"] = yes(c.SetModel)
			want["set permission"] = "no"
			if len(c.SetPermission) > 0 {
				var sw []string
				for _, m := range c.SetPermission {
					sw = append(sw, string(m))
				}
				want["set permission"] = strings.Join(sw, " ")
			}
			want["steer"] = cmp.Or(string(c.Steer), "no")
		}
		for row, w := range want {
			cells, ok := rows[row]
			if !ok {
				t.Errorf("README table has no %q row", row)
				continue
			}
			if cells[i] != w {
				t.Errorf("README says %s %s = %q; the code says %q", name, row, cells[i], w)
			}
		}
	}
}
