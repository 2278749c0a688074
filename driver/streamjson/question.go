package streamjson

import (
	"encoding/json"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
)

// askInput is the input of Claude Code's AskUserQuestion tool, which Qwen
// Code's ask_user_question shares: 1 to 4 questions, each with a header,
// 2 to 4 options and multiSelect.
type askInput struct {
	Questions []struct {
		Question string `json:"question"`
		Header   string `json:"header"`
		Options  []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
		MultiSelect bool `json:"multiSelect"`
	} `json:"questions"`
}

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
	var in askInput
	_ = json.Unmarshal(input, &in) // fields of an unexpected type are left zero
	q := &agentcli.Question{SessionID: h.SessionID(), ID: toolUseID}
	for _, it := range in.Questions {
		item := agentcli.QuestionItem{Header: it.Header, Text: it.Question, MultiSelect: it.MultiSelect}
		for _, o := range it.Options {
			item.Options = append(item.Options, agentcli.QuestionOption{Label: o.Label, Description: o.Description})
		}
		q.Items = append(q.Items, item)
	}
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
