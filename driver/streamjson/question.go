package streamjson

import (
	"encoding/json"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
)

// AnswerKey returns the key of the i-th question (its text q) in the
// "answers" of an AskUserQuestion input (see AskUserQuestion).
type AnswerKey func(i int, q string) string

// AskUserQuestion answers the can_use_tool request id about an
// AskUserQuestion call (toolUseID, input): never as a permission
// request, since allowing it without answers would tell the model the
// user answered nothing. The question goes to Request.OnQuestion, one at
// a time (qsem, a channel of capacity 1 of the session's), bounded by
// the turn and Request.PermissionTimeout; the answers are allowed as the
// input's "answers" (key(i, question text) to the labels chosen, joined
// with ", "; an empty answer is left out); no answer (no OnQuestion, an
// error, the deadline) is a refusal whose message says so. It does not
// block.
func (c *Conn) AskUserQuestion(h *live.Host, qsem chan struct{}, id, toolUseID string, input json.RawMessage, key AnswerKey) {
	// Claude Code's AskUserQuestion input (Qwen Code's ask_user_question
	// shares it): 1 to 4 questions, each with a header, 2 to 4 options and
	// multiSelect. Fields of an unexpected type are left zero.
	items, _ := driver.QuestionItems(input)
	q := &agentcli.Question{SessionID: h.SessionID(), ID: toolUseID, Items: items}
	req := h.Request()
	go func() {
		ctx, cancel := h.TurnContext()
		defer cancel()
		a, msg := driver.AskQuestion(ctx, req.OnQuestion, qsem, req.PermissionTimeout, q)
		if a == nil || len(q.Items) == 0 {
			if msg == "" {
				msg = agentcli.NoAnswerMessage
			}
			c.Deny(id, msg)
			return
		}
		c.Allow(id, answered(input, q, a, key))
	}()
}

// answered returns input (an object, else {}) with the answers a to q as
// its "answers" (see AskUserQuestion).
func answered(input json.RawMessage, q *agentcli.Question, a *agentcli.Answer, key AnswerKey) map[string]any {
	var obj map[string]any
	if json.Unmarshal(input, &obj) != nil || obj == nil {
		obj = map[string]any{}
	}
	answers := map[string]string{}
	for i, it := range q.Items {
		if i < len(a.Answers) && len(a.Answers[i]) > 0 {
			answers[key(i, it.Text)] = strings.Join(a.Answers[i], ", ")
		}
	}
	obj["answers"] = answers
	return obj
}
