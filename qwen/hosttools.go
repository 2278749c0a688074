package qwen

// Host tools, questions and hooks.
//
// Host tools (Request.Tools) are agentcli's MCP server (driver.HostTools)
// in the --mcp-config file, with "alwaysLoadTools": true: qwen 0.24.4
// defers every MCP tool behind its tool_search tool unless its server
// sets that, so the model would not be offered them. The server's tools
// are approved in advance (--allowed-tools=mcp__agentcli: agentcli
// decides each call itself), an allow list keeps the server
// (--allowed-mcp-server-names), and a live session allows whatever qwen
// still asks about them. Qwen connects its MCP servers before the first
// model request.
//
// Questions (Request.OnQuestion) get qwen's own ask_user_question, which
// qwen puts to the host as a can_use_tool request whenever its input is
// stream-json and initialize was sent (yolo included: "permission rules
// and automatic approval modes must never satisfy it"), so a run with
// OnQuestion is one turn of a live session. The question goes to
// OnQuestion; its answers are allowed as the input's "answers" ({"0":
// "Blue"}, by question index, several labels joined with ", "), which qwen
// tells the model ("User has provided the following answers: ..."); no
// answer is a refusal with a message saying so, which qwen gives the
// model. An allow list leaves ask_user_question out (--core-tools), so
// with one agentcli's question tool (driver.QuestionTool) asks instead.
//
// Hooks: hooks.go.

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// askTool is qwen's own question tool.
const askTool = "ask_user_question"

// nativeQuestions reports whether qwen asks req's questions itself
// (ask_user_question through can_use_tool): whenever no allow list
// leaves the tool out.
func nativeQuestions(req *agentcli.Request) bool { return len(req.AllowedTools) == 0 }

// asksNative reports whether req's OnQuestion gets qwen's
// ask_user_question (which a live turn must then keep).
func asksNative(req *agentcli.Request) bool { return req.OnQuestion != nil && nativeQuestions(req) }

// hostServer reports whether agentcli's own MCP server is among req's
// servers (driver.HostTools). It is pure.
func hostServer(req *agentcli.Request) bool {
	return driver.IsHostServer(req, agentcli.HostServerName) &&
		slices.ContainsFunc(req.MCPServers, func(s agentcli.MCPServer) bool { return s.Name == agentcli.HostServerName })
}

// askInput is ask_user_question's input (qwen 0.24.4: 1 to 4 questions,
// each with a header and 2 to 4 options).
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

// question answers qwen's ask_user_question, which arrives as a
// can_use_tool request: never as a permission request, since allowing it
// without answers would tell the model the user gave none (see the top
// of the file).
func (p *liveProto) question(id, toolUseID string, input json.RawMessage) {
	var in askInput
	_ = json.Unmarshal(input, &in) // fields of an unexpected type are left zero
	q := &agentcli.Question{SessionID: p.h.SessionID(), ID: toolUseID}
	for _, it := range in.Questions {
		item := agentcli.QuestionItem{Header: it.Header, Text: it.Question, MultiSelect: it.MultiSelect}
		for _, o := range it.Options {
			item.Options = append(item.Options, agentcli.QuestionOption{Label: o.Label, Description: o.Description})
		}
		q.Items = append(q.Items, item)
	}
	req := p.h.Request()
	go func() {
		ctx, cancel := p.h.TurnContext()
		defer cancel()
		a, msg := driver.AskQuestion(ctx, req.OnQuestion, p.qsem, req.PermissionTimeout, q)
		if a == nil || len(q.Items) == 0 {
			if msg == "" {
				msg = agentcli.NoAnswerMessage
			}
			p.ctl.Deny(id, msg)
			return
		}
		p.ctl.Allow(id, answerInput(input, q, a))
	}()
}

// answerInput returns input with the answers a to q as its "answers":
// the question's index to the labels chosen, joined with ", " (qwen
// drops an empty answer).
func answerInput(input json.RawMessage, q *agentcli.Question, a *agentcli.Answer) map[string]any {
	var obj map[string]any
	if json.Unmarshal(input, &obj) != nil || obj == nil {
		obj = map[string]any{}
	}
	answers := map[string]string{}
	for i := range q.Items {
		if i < len(a.Answers) && len(a.Answers[i]) > 0 {
			answers[strconv.Itoa(i)] = strings.Join(a.Answers[i], ", ")
		}
	}
	obj["answers"] = answers
	return obj
}
