package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// submit dispatches the form formID of card, filled in with value by
// user, and returns the interaction's callback.
func (p *program) submit(channel string, card fakeReq, formID, value, user string, roles ...string) map[string]any {
	p.t.Helper()
	data := map[string]any{"custom_id": formID, "components": []any{map[string]any{"type": 1,
		"components": []any{map[string]any{"type": 4, "custom_id": "answer", "value": value}}}}}
	i := interaction(5, channel, user, data, roles...)
	i["message"] = map[string]any{"id": card.id, "channel_id": channel}
	p.f.dispatch("INTERACTION_CREATE", i)
	return p.callback(i)
}

// TestProgramQuestionFreeText: an item of the agent's question is
// answered in the requester's own words, through the card's Other… button
// (a form) or, for an item without options, their next message in the
// channel; someone else can neither open the form nor answer by message
// (their message is a prompt of its own); an approver may open the form;
// the words reach the agent's OnQuestion and the cards show them.
func TestProgramQuestionFreeText(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	agent.question = &agentcli.Question{Items: []agentcli.QuestionItem{
		{Header: "Color", Text: "Which color?", Options: []agentcli.QuestionOption{{Label: "Red"}, {Label: "Blue"}}},
		{Header: "Name", Text: "What should it be called?"},
	}}
	p := startProgram(t, f, agent, "", "THREADS=false")
	m := p.send("c1", "alice", "question please")

	card := p.card("c1", 0)
	buttons := components(card)
	if len(buttons) != 3 || buttons[2]["label"] != "Other…" {
		t.Fatalf("the first card's buttons: %v; want Red, Blue, Other…", buttons)
	}
	other := buttons[2]["custom_id"].(string)
	if cb := p.click("c1", card, other, nil, "bob"); !refusedPrivately(cb, "Only <@alice>") {
		t.Errorf("bob opens alice's form: %v", cb)
	}
	cb := p.click("c1", card, other, nil, "alice")
	d, _ := cb["data"].(map[string]any)
	if cb["type"].(float64) != 9 || d["title"] != "Answer: Color" {
		t.Fatalf("alice's Other…: %v; want a form", cb)
	}
	input := d["components"].([]any)[0].(map[string]any)["components"].([]any)[0].(map[string]any)
	if input["placeholder"] != "Which color?" {
		t.Errorf("the form's field: %v", input)
	}
	form := d["custom_id"].(string)
	if cb := p.submit("c1", card, form, "mauve", "bob"); !refusedPrivately(cb, "Only <@alice>") {
		t.Errorf("bob fills in alice's form: %v", cb)
	}
	if cb := p.submit("c1", card, form, "   ", "alice"); !refusedPrivately(cb, "") {
		t.Errorf("an empty answer: %v; want a private refusal", cb)
	}
	cb = p.submit("c1", card, form, "  teal, *please* ", "alice")
	d, _ = cb["data"].(map[string]any)
	if cb["type"].(float64) != 7 || !strings.Contains(d["content"].(string), "✅ “teal, \\*please\\*” by <@alice>") ||
		len(d["components"].([]any)) != 0 {
		t.Errorf("alice's form: %v", cb)
	}

	// The second item has no options: Answer… and the next message.
	card = p.card("c1", 1)
	buttons = components(card)
	if len(buttons) != 1 || buttons[0]["label"] != "Answer…" {
		t.Fatalf("the second card's buttons: %v; want Answer…", buttons)
	}
	if cb := p.click("c1", card, buttons[0]["custom_id"].(string), nil, "boss"); cb["type"].(float64) != 9 {
		t.Errorf("the approver's Answer…: %v; want a form", cb)
	}
	notAnswer := p.send("c1", "bob", "not an answer")
	p.send("c1", "alice", "call it Zed")
	if got := p.answer(m); !strings.Contains(got, "answers: "+mustJSON([][]string{{"teal, *please*"}, {"call it Zed"}})) {
		t.Errorf("answer %q", got)
	}
	if shown := f.shows("c1", card.id); !strings.Contains(shown, "✅ “call it Zed” by <@alice>") {
		t.Errorf("the second card shows %q", shown)
	}
	if got := p.answer(notAnswer); !strings.Contains(got, "echo: ") || !strings.Contains(got, "not an answer") {
		t.Errorf("bob's message: %q; want it answered as a prompt", got)
	}
	for _, prompts := range agent.sessionsCopy() {
		for _, pr := range prompts {
			if strings.Contains(pr, "call it Zed") {
				t.Errorf("alice's answer was also run as a prompt")
			}
		}
	}
}

// TestProgramQuestionFreeTextTimeout: an answer in one's own words is
// bounded by PERMISSION_TIMEOUT: after it, the card says so, the form is
// refused, and the requester's message is a prompt again.
func TestProgramQuestionFreeTextTimeout(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	agent.question = &agentcli.Question{Items: []agentcli.QuestionItem{{Header: "Name", Text: "What name?"}}}
	p := startProgram(t, f, agent, "", "THREADS=false", "PERMISSION_TIMEOUT=0.5")
	m := p.send("c1", "alice", "question")
	card := p.card("c1", 0)
	b := components(card)[0]["custom_id"].(string)
	cb := p.click("c1", card, b, nil, "alice")
	form := cb["data"].(map[string]any)["custom_id"].(string)
	if got := p.answer(m); !strings.Contains(got, "answers: none") {
		t.Errorf("answer %q, want none", got)
	}
	if shown := f.shows("c1", card.id); !strings.Contains(shown, "No answer in time") {
		t.Errorf("the card shows %q", shown)
	}
	if cb := p.submit("c1", card, form, "Zed", "alice"); !refusedPrivately(cb, "no longer waiting") {
		t.Errorf("a late form: %v", cb)
	}
	if got := p.answer(p.send("c1", "alice", "Zed")); !strings.Contains(got, "echo: ") {
		t.Errorf("a late message: %q; want it answered as a prompt", got)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
