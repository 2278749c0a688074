package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
)

// cards returns the messages with components posted in channel, in order.
func (f *fakeDiscord) cards(channel string) []fakeReq {
	var out []fakeReq
	for _, r := range f.find("POST", "channels/"+channel+"/messages") {
		if r.status == 200 && r.body["components"] != nil {
			out = append(out, r)
		}
	}
	return out
}

// card waits for the n-th card (from 0) of channel.
func (p *program) card(channel string, n int) fakeReq {
	p.t.Helper()
	waitFor(p.t, fmt.Sprintf("card %d", n), func() bool { return len(p.f.cards(channel)) > n })
	return p.f.cards(channel)[n]
}

// components returns the components of a card's first row.
func components(card fakeReq) []map[string]any {
	var out []map[string]any
	rows, _ := card.body["components"].([]any)
	if len(rows) == 0 {
		return nil
	}
	for _, c := range rows[0].(map[string]any)["components"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}

// click dispatches a press of a card's component by user (values for a
// select menu) and returns the interaction's callback.
func (p *program) click(channel string, card fakeReq, customID string, values []string, user string, roles ...string) map[string]any {
	p.t.Helper()
	data := map[string]any{"custom_id": customID, "component_type": 2}
	if values != nil {
		data["component_type"], data["values"] = 3, values
	}
	i := interaction(3, channel, user, data, roles...)
	i["message"] = map[string]any{"id": card.id, "channel_id": channel}
	p.f.dispatch("INTERACTION_CREATE", i)
	return p.callback(i)
}

// refusedPrivately reports whether cb is an ephemeral reply containing
// want.
func refusedPrivately(cb map[string]any, want string) bool {
	d, _ := cb["data"].(map[string]any)
	flags, _ := d["flags"].(float64)
	content, _ := d["content"].(string)
	return cb["type"].(float64) == 4 && flags == 64 && strings.Contains(content, want)
}

// TestProgramQuestions: the agent's question reaches the requester as a
// card per item, one after the other: buttons for a few options to pick
// one from, a select menu for a multi-select item; only the requester or
// an approver may answer; the labels chosen reach the agent; the question
// text shows as written, pinging nobody else.
func TestProgramQuestions(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	long := strings.Repeat("B", 120)
	var files []agentcli.QuestionOption
	for i := range 30 {
		files = append(files, agentcli.QuestionOption{Label: fmt.Sprint("f", i), Description: "file"})
	}
	agent.question = &agentcli.Question{Items: []agentcli.QuestionItem{
		{Header: "Color **now**", Text: "Which color? @everyone <@bob> `x`",
			Options: []agentcli.QuestionOption{{Label: "Red", Description: "warm"}, {Label: long}, {Label: "Green"}}},
		{Header: "Files", Text: "Which files?", MultiSelect: true, Options: files},
	}}
	p := startProgram(t, f, agent, "", "THREADS=false")
	m := p.send("c1", "alice", "question please")

	card := p.card("c1", 0)
	content := card.body["content"].(string)
	for _, want := range []string{"<@alice> ", "(1/2)", "Which color?", "@\u200beveryone", "\\<@\u200bbob\\>", "\\`x\\`",
		`**Color \*\*now\*\***`, "warm"} {
		if !strings.Contains(content, want) {
			t.Errorf("the first card %q lacks %q", content, want)
		}
	}
	if strings.Contains(content, "<@bob>") || strings.Contains(content, "@everyone") {
		t.Errorf("the first card shows a mention: %q", content)
	}
	am := card.body["allowed_mentions"].(map[string]any)
	if users, _ := am["users"].([]any); len(users) != 1 || users[0] != "alice" || len(am["parse"].([]any)) != 0 {
		t.Errorf("the card pings %v, want alice only", am)
	}
	buttons := components(card)
	if len(buttons) != 4 || buttons[3]["label"] != "Other…" {
		t.Fatalf("the first card has %d components, want 3 buttons and Other…: %v", len(buttons), card.body["components"])
	}
	for _, b := range buttons {
		if b["type"].(float64) != 2 || utf8.RuneCountInString(b["label"].(string)) > 80 || len(b["custom_id"].(string)) > 100 {
			t.Errorf("button %v: not a button within Discord's limits", b)
		}
	}
	if l := buttons[1]["label"].(string); !strings.HasPrefix(l, "BBBB") {
		t.Errorf("the second button reads %q", l)
	}
	second := buttons[1]["custom_id"].(string)
	for _, who := range [][]string{{"bob"}, {"mallory"}} {
		if cb := p.click("c1", card, second, nil, who[0], who[1:]...); !refusedPrivately(cb, "Only <@alice>") {
			t.Errorf("a press by %s: %v; want a private refusal", who[0], cb)
		}
	}
	cb := p.click("c1", card, second, nil, "alice")
	d := cb["data"].(map[string]any)
	if cb["type"].(float64) != 7 || !strings.Contains(d["content"].(string), "✅ BBBB") ||
		!strings.Contains(d["content"].(string), "by <@alice>") || len(d["components"].([]any)) != 0 {
		t.Errorf("alice's press: %v", cb)
	}

	// The second item: a menu of the first 25 of 30 options, several to
	// pick; an approver answers for alice.
	card = p.card("c1", 1)
	content = card.body["content"].(string)
	if !strings.Contains(content, "(2/2)") || !strings.Contains(content, "Which files?") ||
		!strings.Contains(content, "first 25 of 30") {
		t.Errorf("the second card: %q", content)
	}
	menu := components(card)
	if len(menu) != 1 || menu[0]["type"].(float64) != 3 {
		t.Fatalf("the second card has no select menu: %v", card.body["components"])
	}
	opts := menu[0]["options"].([]any)
	if len(opts) != 25 || menu[0]["max_values"].(float64) != 25 || menu[0]["min_values"].(float64) != 1 {
		t.Errorf("the menu: %d options, max %v, min %v", len(opts), menu[0]["max_values"], menu[0]["min_values"])
	}
	if o := opts[3].(map[string]any); o["label"] != "f3" || o["description"] != "file" {
		t.Errorf("option 3: %v", o)
	}
	id := menu[0]["custom_id"].(string)
	if cb := p.click("c1", card, id, []string{"99"}, "alice"); !refusedPrivately(cb, "") {
		t.Errorf("a value not in the menu: %v; want a private refusal", cb)
	}
	cb = p.click("c1", card, id, []string{"3", "0"}, "boss")
	if d := cb["data"].(map[string]any); cb["type"].(float64) != 7 || !strings.Contains(d["content"].(string), "✅ f3, f0 by <@boss>") {
		t.Errorf("the approver's pick: %v", cb)
	}

	want, _ := json.Marshal([][]string{{long}, {"f3", "f0"}})
	if got := p.answer(m); !strings.Contains(got, "answers: "+string(want)) {
		t.Errorf("answer %q, want the labels %s", got, want)
	}
	if starts := agent.startsCopy(); len(starts) == 0 || starts[0].OnQuestion == nil {
		t.Errorf("the session was started without OnQuestion")
	}
}

// TestProgramQuestionTimeout: a question nobody answers within
// PERMISSION_TIMEOUT gives the agent no answer (nil) and its card says
// so, without its buttons; a late press is refused privately.
func TestProgramQuestionTimeout(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	p := startProgram(t, f, agent, "", "THREADS=false", "PERMISSION_TIMEOUT=0.5")
	m := p.send("c1", "alice", "question")
	card := p.card("c1", 0)
	if got := p.answer(m); !strings.Contains(got, "answers: none") {
		t.Errorf("answer %q, want no answer", got)
	}
	if shown := f.shows("c1", card.id); !strings.Contains(shown, "Which color?") || !strings.Contains(shown, "No answer in time") {
		t.Errorf("the card shows %q after the timeout", shown)
	}
	var edit fakeReq
	for _, r := range f.find("PATCH", "channels/c1/messages/"+card.id) {
		edit = r
	}
	if c, ok := edit.body["components"].([]any); !ok || len(c) != 0 {
		t.Errorf("the card's last edit keeps its components: %v", edit.body)
	}
	b := components(card)[0]["custom_id"].(string)
	if cb := p.click("c1", card, b, nil, "alice"); !refusedPrivately(cb, "no longer waiting") {
		t.Errorf("a late press: %v", cb)
	}
}

// TestProgramQuestionsUnsupported: on a backend without
// Capabilities.Questions the gateway sets no OnQuestion (it would be an
// *UnsupportedError) and posts no card; the agent is told nobody is there.
func TestProgramQuestionsUnsupported(t *testing.T) {
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	agent.noQuestions = true
	p := startProgram(t, f, agent, "", "THREADS=false")
	if got := p.answer(p.send("c1", "alice", "question")); !strings.Contains(got, "answers: unavailable") {
		t.Errorf("answer %q", got)
	}
	starts := agent.startsCopy()
	if len(starts) == 0 {
		t.Fatal("no session started")
	}
	for _, s := range starts {
		if s.OnQuestion != nil {
			t.Error("a session was started with OnQuestion on a backend without questions")
		}
	}
	if c := f.cards("c1"); len(c) != 0 {
		t.Errorf("cards posted: %v", c)
	}
}

// TestPlainAndCutLen: the agent's text is escaped so that it shows as
// written, and cut within Discord's count of characters (UTF-16 units).
func TestPlainAndCutLen(t *testing.T) {
	for in, want := range map[string]string{
		"**bold** _it_ ~~s~~ `c` ||x|| > q # h - l [a](b)": `\*\*bold\*\* \_it\_ \~\~s\~\~ \` + "`c\\`" + ` \|\|x\|\| \> q \# h \- l \[a\]\(b\)`,
		"<@123> @everyone @here <#9> \\":                   "\\<@\u200b123\\> @\u200beveryone @\u200bhere \\<\\#9\\> \\\\",
		"plain words, 1.5 and 'quotes'":                    "plain words, 1.5 and 'quotes'",
	} {
		if got := plain(in); got != want {
			t.Errorf("plain(%q) = %q, want %q", in, got, want)
		}
	}
	emoji := strings.Repeat("😀", 10) // 2 UTF-16 units each
	if got := cutLen(emoji, 20); got != emoji {
		t.Errorf("cutLen within the bound changed the text: %q", got)
	}
	if got := cutLen(emoji, 9); got != strings.Repeat("😀", 4)+"…" || textLen(got) > 9 {
		t.Errorf("cutLen(10 emoji, 9) = %q (%d units)", got, textLen(got))
	}
}
