package claude

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

func TestWithUUID(t *testing.T) {
	id := newUUID()
	if len(id) != 36 || id[14] != '4' || strings.Count(id, "-") != 4 {
		t.Fatalf("newUUID = %q", id)
	}
	if newUUID() == id {
		t.Fatal("two equal uuids")
	}
	line := withUUID(userMessage("hi \"there\"\n"), id)
	if !strings.HasSuffix(string(line), "}\n") || strings.Count(string(line), "\n") != 1 {
		t.Fatalf("line %q", line)
	}
	var m struct {
		Type    string `json:"type"`
		UUID    string `json:"uuid"`
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		NotTyped bool `json:"text_not_typed"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	if m.Type != "user" || m.UUID != id || m.Message.Content != "hi \"there\"\n" || !m.NotTyped {
		t.Errorf("decoded %+v", m)
	}
}

// A turn ends at the result line that leaves none of its messages
// unanswered (claude 2.1.330 lists them in user_message_uuids).
func TestConsumed(t *testing.T) {
	var s switchState
	a := s.begin()
	b := "b-uuid"
	s.pending = append(s.pending, b)
	if !s.consumed([]byte(`{"type":"result","user_message_uuids":["` + a + `"]}`)) {
		t.Fatal("the steered message is still due, but the turn would end")
	}
	if s.consumed([]byte(`{"type":"result","user_message_uuids":["` + b + `"]}`)) {
		t.Fatal("every message answered, but the turn would go on")
	}
	// Both answered at once.
	a = s.begin()
	s.pending = append(s.pending, b)
	if s.consumed([]byte(`{"type":"result","user_message_uuids":["` + a + `","` + b + `"]}`)) {
		t.Fatal("both answered, but the turn would go on")
	}
	// A claude that lists none answers all.
	s.begin()
	s.pending = append(s.pending, b)
	if s.consumed([]byte(`{"type":"result"}`)) {
		t.Fatal("a result line without uuids did not end the turn")
	}
	// A replay, whose uuids are not the log's, counts: a result line
	// answers as many messages as it lists.
	s = switchState{replay: true}
	s.begin()
	if s.consumed([]byte(`{"type":"result","user_message_uuids":["other"]}`)) {
		t.Fatal("a replayed result line did not end the turn")
	}
	s.begin()
	s.pending = append(s.pending, b)
	if !s.consumed([]byte(`{"type":"result","user_message_uuids":["x"]}`)) {
		t.Fatal("a replayed result line answering one of two messages ended the turn")
	}
	if s.consumed([]byte(`{"type":"result","user_message_uuids":["y"]}`)) {
		t.Fatal("a replayed result line answering the last message did not end the turn")
	}
	// Results merge: the last text, the usage added up.
	s = switchState{}
	s.held = &agentcli.Result{Text: "one", Usage: agentcli.Usage{InputTokens: 1, OutputTokens: 2}}
	res := s.end(&agentcli.Result{Text: "two", Usage: agentcli.Usage{InputTokens: 10, OutputTokens: 20}})
	if res.Text != "two" || res.Usage.InputTokens != 11 || res.Usage.OutputTokens != 22 || s.held != nil {
		t.Errorf("merged %+v", res)
	}
}

func TestBookkeeping(t *testing.T) {
	if !bookkeeping([]byte(`{"type":"command_lifecycle","command_uuid":"x","state":"queued"}`)) {
		t.Error("command_lifecycle not dropped")
	}
	if bookkeeping([]byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"\"command_lifecycle\""}]}}`)) {
		t.Error("an assistant line mentioning command_lifecycle dropped")
	}
}

// Every mode maps to the claude mode a session started in it has; the
// zero value is dontAsk (deny), never bypass.
func TestClaudeMode(t *testing.T) {
	for m, want := range map[agentcli.PermissionMode]string{
		"": "dontAsk", agentcli.PermissionDeny: "dontAsk", agentcli.PermissionAsk: "default",
		agentcli.PermissionPlan: "plan", agentcli.PermissionBypass: "bypassPermissions",
	} {
		if got := claudeMode(&agentcli.Request{}, m); got != want {
			t.Errorf("claudeMode(%q) = %q, want %q", m, got, want)
		}
	}
	// Bypass with an allow list is dontAsk, as at start.
	if got := claudeMode(&agentcli.Request{AllowedTools: []string{"Read"}}, agentcli.PermissionBypass); got != "dontAsk" {
		t.Errorf("bypass with an allow list: %q", got)
	}
}

func TestLiveSwitchArgs(t *testing.T) {
	root := os.Geteuid() == 0
	deny := []string{"-p", "--input-format", "stream-json", "--permission-mode=dontAsk", "--", "x"}
	got, noBypass := liveSwitchArgs(deny, "1")
	want := []string{"-p", "--permission-prompt-tool=stdio", "--allow-dangerously-skip-permissions", "--input-format", "stream-json", "--permission-mode=dontAsk", "--", "x"}
	if !slices.Equal(got, want) || noBypass {
		t.Errorf("deny, IS_SANDBOX=1: %q, %v", got, noBypass)
	}
	got, noBypass = liveSwitchArgs(deny, "")
	if root != noBypass || slices.Contains(got, "--allow-dangerously-skip-permissions") == root {
		t.Errorf("deny without IS_SANDBOX (root %v): %q, %v", root, got, noBypass)
	}
	// Started in bypass or ask: nothing twice.
	bypass := []string{"-p", "--dangerously-skip-permissions", "--permission-prompt-tool=stdio"}
	if got, noBypass := liveSwitchArgs(bypass, ""); !slices.Equal(got, bypass) || noBypass {
		t.Errorf("bypass: %q, %v", got, noBypass)
	}
}
