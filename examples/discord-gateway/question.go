package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/agentcli/agentcli"
)

// Bounds of a question's cards: Discord takes 5 buttons in a row, 25
// options in a menu, 80 characters on a button, 100 on a menu option.
const (
	maxQuestionItems = 5  // items put to the user; the rest go unanswered
	maxButtons       = 5  // more options (or a multi-select) make a menu
	maxMenuOptions   = 25 // options beyond are not shown
	maxQuestionText  = 1200
)

// askQuestion puts the agent's question to the requester of the
// conversation's turn, one card per item, in turn: the next card is posted
// once the previous one is answered. A card of a few options to pick one
// from has a button per option; a multi-select item or one of more
// options has a menu; every card also takes an answer in the user's own
// words (freetext.go: an "Other…" button, or "Answer…" for an item
// without options, and the requester's next message in the channel).
// Only the requester or an approver may answer (Runtime.Answer). The
// whole question is bounded by the request's PermissionTimeout and by the
// turn; an item not answered by then, and every item after it, goes
// unanswered, and its card says so. It returns nil when no item was
// answered: the agent is told the user did not answer. It blocks until
// then.
func (rt *Runtime) askQuestion(ctx context.Context, conv string, q *agentcli.Question) *agentcli.Answer {
	timeout := rt.o.Request.PermissionTimeout
	if timeout <= 0 {
		timeout = agentcli.DefaultPermissionTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	rt.mu.Lock()
	var requester, channel string
	if cs := rt.convs[conv]; cs != nil && cs.turn != nil {
		requester, channel = cs.turn.requester, cs.turn.channel
	}
	rt.mu.Unlock()
	if channel == "" || q == nil {
		rt.log.Error("a question outside of a turn; leaving it unanswered", "conversation", conv)
		return nil
	}
	items := q.Items
	if len(items) > maxQuestionItems {
		rt.log.Warn("the agent asked too many questions at once; the rest go unanswered",
			"conversation", conv, "asked", len(items), "shown", maxQuestionItems)
		items = items[:maxQuestionItems]
	}
	ans := &agentcli.Answer{Answers: make([][]string, 0, len(items))}
	answered := false
	for i, item := range items {
		if ctx.Err() != nil {
			break
		}
		var head string
		if len(items) > 1 {
			head = fmt.Sprintf("(%d/%d) ", i+1, len(items))
		}
		got, ok := rt.askItem(ctx, conv, channel, requester, head, item, timeout)
		ans.Answers = append(ans.Answers, got)
		answered = answered || len(got) > 0
		if !ok {
			break
		}
	}
	if !answered {
		return nil
	}
	return ans
}

// askItem puts one item to the requester and returns the labels chosen,
// and false when the walk should stop (no answer in time, the turn ended,
// the card could not be posted).
func (rt *Runtime) askItem(ctx context.Context, conv, channel, requester, head string, item agentcli.QuestionItem,
	timeout time.Duration) ([]string, bool) {
	q := newQuestionCard(head, item)
	w := &waiter{conv: conv, channel: channel, requester: requester, text: q.text, answer: make(chan Choice, 1),
		free:   true,
		form:   [2]string{shorten(oneLine("Answer: "+strings.TrimSpace(item.Header)), 45), shorten(oneLine(item.Text), 100)},
		decide: q.decides,
		label:  q.label,
	}
	id := rt.register(w)
	card := q.card("w:" + id)
	card.Text = q.text + q.hint + fmt.Sprintf("\n(no answer within %v: the agent decides on its own)", timeout)
	if rt.o.Mention && requester != "" {
		card.Text = "<@" + requester + "> " + card.Text
	}
	card.Mention = requester
	dctx, dcancel := rt.deliveryCtx()
	msgID, err := rt.o.Chat.Ask(dctx, channel, card)
	dcancel()
	if err != nil {
		rt.unregister(id)
		rt.log.Error("posting a question; leaving it unanswered", "channel", channel, "err", err)
		return nil, false
	}
	got := func(c Choice) []string {
		if c.edit {
			dctx, dcancel := rt.deliveryCtx()
			defer dcancel()
			if err := rt.o.Chat.Edit(dctx, channel, msgID, cutLen(q.text+"\n"+rt.decided(w, c), 2000)); err != nil {
				rt.log.Error("updating a question", "channel", channel, "err", err)
			}
		}
		return q.chosen(c)
	}
	select {
	case c := <-w.answer:
		return got(c), true
	case <-ctx.Done():
		if !rt.unregister(id) {
			return got(<-w.answer), true // answered just now
		}
		why := "⏱ No answer in time: the agent decides on its own."
		if context.Cause(ctx) != context.DeadlineExceeded {
			why = "⏹ The turn ended: no answer."
		}
		dctx, dcancel := rt.deliveryCtx()
		defer dcancel()
		if err := rt.o.Chat.Edit(dctx, channel, msgID, q.text+"\n"+why); err != nil {
			rt.log.Error("updating a question", "channel", channel, "err", err)
		}
		return nil, false
	}
}

// questionCard is one question item as the gateway shows it: its text,
// its options (the first maxMenuOptions), as buttons or, for a
// multiple choice or too many for buttons, a select menu.
type questionCard struct {
	item   agentcli.QuestionItem
	text   string // the card's text, at most 1800 bytes, without hint
	hint   string // how to answer
	opts   []agentcli.QuestionOption
	labels []string // what the model gets for each option
	menu   bool
}

// newQuestionCard lays out item, its text after head.
func newQuestionCard(head string, item agentcli.QuestionItem) *questionCard {
	q := &questionCard{item: item, opts: item.Options}
	text := "❓ " + head + "The agent asks:"
	if h := strings.TrimSpace(item.Header); h != "" {
		text += " **" + plain(shorten(oneLine(h), 100)) + "**"
	}
	text += "\n" + plain(shorten(strings.TrimSpace(item.Text), maxQuestionText))
	if len(q.opts) > maxMenuOptions {
		text += fmt.Sprintf("\n_(the first %d of %d options are shown)_", maxMenuOptions, len(q.opts))
		q.opts = q.opts[:maxMenuOptions]
	}
	q.labels = make([]string, len(q.opts))
	for j, o := range q.opts {
		q.labels[j] = o.Label
		if strings.TrimSpace(o.Label) == "" {
			q.labels[j] = "Option " + strconv.Itoa(j+1)
		}
	}
	q.menu = item.MultiSelect || len(q.opts) > maxButtons
	q.hint = "\n_(Or answer in your own words: **Other…**, or send your answer here.)_"
	if len(q.opts) == 0 {
		q.hint = "\n_(Answer with the button, or send your answer here.)_"
	}
	if !q.menu {
		// Buttons show labels only: the descriptions go in the text.
		for j, o := range q.opts {
			if d := strings.TrimSpace(o.Description); d != "" {
				text += "\n• **" + plain(shorten(oneLine(q.labels[j]), 80)) + "**: " + plain(shorten(oneLine(d), 150))
			}
		}
	}
	q.text = cutLen(text, 1800)
	return q
}

// pick returns the options c chose, by index; false for a choice that
// does not fit the card.
func (q *questionCard) pick(c Choice) ([]int, bool) {
	if !q.menu {
		j, err := strconv.Atoi(strings.TrimPrefix(c.Button, "o"))
		if !strings.HasPrefix(c.Button, "o") || err != nil || j < 0 || j >= len(q.opts) || len(c.Values) > 0 {
			return nil, false
		}
		return []int{j}, true
	}
	if c.Button != "" || len(c.Values) == 0 || !q.item.MultiSelect && len(c.Values) > 1 {
		return nil, false
	}
	var picked []int
	for _, v := range c.Values {
		j, err := strconv.Atoi(v)
		if err != nil || j < 0 || j >= len(q.opts) || slices.Contains(picked, j) {
			return nil, false
		}
		picked = append(picked, j)
	}
	return picked, true
}

// decides reports that c answers the card: options it has, or free text.
func (q *questionCard) decides(c Choice) bool {
	_, ok := q.pick(c)
	_, free := freeText(c)
	return ok || free
}

// chosen returns the answer c gives the model: its free text, or the
// labels of the options it chose.
func (q *questionCard) chosen(c Choice) []string {
	if t, ok := freeText(c); ok {
		return []string{t}
	}
	picked, _ := q.pick(c)
	out := make([]string, len(picked))
	for k, j := range picked {
		out[k] = q.labels[j]
	}
	return out
}

// label returns how the card shows c once answered.
func (q *questionCard) label(c Choice) string {
	if t, ok := freeText(c); ok {
		return "✅ “" + plain(shorten(oneLine(t), 300)) + "”"
	}
	var shown []string
	for _, l := range q.chosen(c) {
		shown = append(shown, plain(shorten(oneLine(l), 80)))
	}
	return "✅ " + strings.Join(shown, ", ")
}

// card returns the card's menu or option buttons and its free-text
// button, their ids under prefix; the caller sets its text.
func (q *questionCard) card(prefix string) Card {
	var card Card
	if q.menu && len(q.opts) > 0 {
		m := &Menu{ID: prefix, Placeholder: "Choose one", Min: 1, Max: 1}
		if q.item.MultiSelect {
			m.Placeholder, m.Max = "Choose one or more", len(q.opts)
		}
		for j, o := range q.opts {
			m.Options = append(m.Options, MenuOption{Value: strconv.Itoa(j), Label: oneLine(q.labels[j]),
				Description: oneLine(o.Description)})
		}
		card.Menu = m
	} else {
		for j := range q.opts {
			card.Buttons = append(card.Buttons, Button{ID: prefix + ":o" + strconv.Itoa(j), Label: oneLine(q.labels[j])})
		}
	}
	other := "Other…"
	if len(q.opts) == 0 {
		other = "Answer…"
	}
	card.Buttons = append(card.Buttons, Button{ID: prefix + ":" + freeTextButton, Label: other})
	return card
}

// plain escapes Discord's markdown in s and keeps it from mentioning
// anyone (the agent's text is not to be trusted): s shows as written.
func plain(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '*', '_', '~', '`', '|', '>', '<', '#', '-', '[', ']', '(', ')':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '@':
			b.WriteString("@\u200b")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cutLen cuts s to at most n UTF-16 code units (textLen), marking the cut
// with "…".
func cutLen(s string, n int) string {
	if textLen(s) <= n {
		return s
	}
	total := 0
	for i, r := range s {
		if total+utf16.RuneLen(r) > n-1 {
			return s[:i] + "…"
		}
		total += utf16.RuneLen(r)
	}
	return s
}
