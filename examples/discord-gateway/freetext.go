package main

import (
	"strings"
	"unicode/utf8"
)

// Answers in the user's own words. Every item of an agent's question may
// be answered with text of one's own (agentcli.QuestionItem: the options
// are suggestions; claude's AskUserQuestion has its "Other", codex's
// request_user_input takes free text): its card has an "Other…" button
// (or "Answer…" for an item without options) that opens a form with a
// text field (Discord's modal; Runtime.OpenText, then Runtime.Answer with
// the button "text"), and the requester's next message in the card's
// channel answers it too (Runtime.Handle, answerByMessage). Either is
// bound like a press: to the requester (or an approver, through the
// form), by the question's deadline and the turn.

// maxFreeText bounds an answer in the user's own words, in characters
// (the form takes no more; a longer message is cut).
const maxFreeText = 1000

// freeTextButton is the button suffix that opens the form, freeTextID the
// form's (and a free-text choice's).
const (
	freeTextButton = "other"
	freeTextID     = "text"
)

// OpenText checks a press of a card's "Other…" button (componentID) by
// user (with roles) in channel. When the card waits for an answer in
// words of one's own and the user may give it, it returns the form's
// id (to come back through Answer with the text as the only value), its
// title and a placeholder for the text field, and true; else the reason
// and false.
func (rt *Runtime) OpenText(channel, componentID, user string, roles []string) (id, title, placeholder string, ok bool) {
	f := strings.Split(componentID, ":")
	if len(f) != 3 || f[0] != "w" || f[2] != freeTextButton {
		return "", "", "Unknown button.", false
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	w := rt.waits[f[1]]
	if w == nil || w.channel != channel || !w.free {
		return "", "", "This request is no longer waiting for an answer.", false
	}
	if why := rt.mayAnswer(w, user, roles); why != "" {
		return "", "", why, false
	}
	title = w.form[0]
	if title == "Answer:" || title == "" {
		title = "Your answer"
	}
	return "w:" + f[1] + ":" + freeTextID, title, w.form[1], true
}

// answerByMessage takes m as the answer to a question waiting in m's
// channel for an answer in words of one's own, when m's author is the
// one it was put to: the card then shows the answer. It reports whether
// m was taken. Only the requester's message answers (an approver's
// message in a shared channel may be about anything; they answer through
// the form).
func (rt *Runtime) answerByMessage(m Message) bool {
	text := strings.TrimSpace(m.Text)
	if text == "" || m.Author == "" {
		return false
	}
	rt.mu.Lock()
	var id string
	var w *waiter
	for k, x := range rt.waits {
		if x.free && x.channel == m.Channel && x.requester == m.Author && (w == nil || x.seq < w.seq) {
			id, w = k, x
		}
	}
	if w == nil {
		rt.mu.Unlock()
		return false
	}
	delete(rt.waits, id)
	rt.mu.Unlock()
	// The card was not pressed: askItem edits it to show the answer.
	w.answer <- Choice{Button: freeTextID, Values: []string{cutRunes(text, maxFreeText)}, By: m.Author, edit: true}
	return true
}

// freeText returns the text of a free-text choice and true, or false when
// c is not one.
func freeText(c Choice) (string, bool) {
	if c.Button != freeTextID || len(c.Values) != 1 {
		return "", false
	}
	t := strings.TrimSpace(c.Values[0])
	if t == "" {
		return "", false
	}
	return cutRunes(t, maxFreeText), true
}

// cutRunes cuts s to at most n runes.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
