package agentclitest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// HostCall scripts a call of one of the request's host tools
// (Request.Tools), as a model would make it through a CLI.
type HostCall struct {
	// ID identifies the call; empty means a generated one.
	ID string
	// Tool is the tool's Name.
	Tool string
	// Input is the model's input, a JSON object; nil means {}.
	Input json.RawMessage
}

// HostResult is a scripted host-tool call (Call.HostCalls) and what the
// model would have received.
type HostResult struct {
	// Call is the call as scripted (ID filled in).
	Call HostCall
	// Output is the text the model receives: the handler's, or
	// "error: " and the reason of a refusal, an error or a panic.
	Output string
	// IsError reports that the call failed or was refused.
	IsError bool
}

// Answered is a scripted question (Call.Questions) and its answer.
type Answered struct {
	// Question is the question as OnQuestion saw it.
	Question agentcli.Question
	// Answer is OnQuestion's answer, or nil when there was none.
	Answer *agentcli.Answer
	// Message is what the model is told instead of an answer
	// (agentcli.NotAvailableMessage, agentcli.NoAnswerMessage), or "".
	Message string
}

// HookDecision is a tool call put to Request.Hooks.PreToolUse
// (Call.PreToolUse, and each host-tool call) and its answer.
type HookDecision struct {
	// Tool is the call as the hook saw it.
	Tool agentcli.ToolUse
	// Output is the hook's answer, as the backend applies it (a hook that
	// failed or did not answer in time refuses).
	Output agentcli.PreToolUseOutput
}

// HostResults returns every scripted host-tool call so far, in order.
func (b *Backend) HostResults() []HostResult {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.hostResults)
}

// Answers returns every scripted question so far with its answer, in
// order.
func (b *Backend) Answers() []Answered {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.answers)
}

// HookDecisions returns every call put to PreToolUse so far with its
// answer, in order.
func (b *Backend) HookDecisions() []HookDecision {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.hookDecisions)
}

// extras makes a call's scripted hook points, questions and host-tool
// calls, in that order, and returns the events they yield (a tool use
// and a tool result per host-tool call, the question tool's per
// question), to come before the call's Events.
func (b *Backend) extras(ctx context.Context, req *agentcli.Request, sessionID string, call Call, hooks *driver.RunHooks, host *driver.HostTools) []agentcli.Event {
	var evs []agentcli.Event
	for _, u := range call.PreToolUse {
		if u.Kind == "" {
			u.Kind = driver.KindOf(u.Name)
		}
		if len(u.Input) == 0 {
			u.Input = json.RawMessage("{}")
		}
		out := hooks.PreToolUse(ctx, sessionID, u, "")
		b.mu.Lock()
		b.hookDecisions = append(b.hookDecisions, HookDecision{Tool: u, Output: out})
		b.mu.Unlock()
	}
	for i, q := range call.Questions {
		q.SessionID = sessionID
		if q.ID == "" {
			q.ID = fmt.Sprintf("agentclitest_question_%d", i+1)
		}
		a, msg := driver.AskQuestion(ctx, req.OnQuestion, nil, req.PermissionTimeout, &q)
		out := msg
		if a != nil {
			out = driver.AnswerText(&q, a)
		}
		input, _ := json.Marshal(q.Items)
		evs = append(evs,
			agentcli.Event{Kind: agentcli.EventToolUse, SessionID: sessionID, Tool: &agentcli.ToolUse{ID: q.ID,
				Name: agentcli.ToolNameAskUserQuestion, RawName: agentcli.ToolNameAskUserQuestion, Kind: agentcli.ToolOther,
				Input: json.RawMessage(`{"questions":` + string(input) + `}`)}},
			agentcli.Event{Kind: agentcli.EventToolResult, SessionID: sessionID, ToolResult: &agentcli.ToolResult{ID: q.ID, Output: out, IsError: a == nil}})
		b.mu.Lock()
		b.answers = append(b.answers, Answered{Question: q, Answer: a, Message: msg})
		b.mu.Unlock()
	}
	for i, hc := range call.HostCalls {
		if hc.ID == "" {
			hc.ID = fmt.Sprintf("agentclitest_host_%d", i+1)
		}
		input := hc.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		use := agentcli.ToolUse{ID: hc.ID, Name: hc.Tool, RawName: "mcp__" + agentcli.HostServerName + "__" + hc.Tool, Kind: agentcli.ToolOther, Input: input}
		var pre *agentcli.PreToolUseOutput
		if hooks.HasPreToolUse() {
			// Recorded as the host tools call it (in HostTools.Call).
			out := hooks.PreToolUse(ctx, sessionID, use, hc.Tool)
			pre = &out
		}
		text, isErr := b.hostCall(ctx, host, hooks, pre, hc.Tool, input)
		if pre != nil {
			b.mu.Lock()
			b.hookDecisions = append(b.hookDecisions, HookDecision{Tool: use, Output: *pre})
			b.mu.Unlock()
		}
		b.mu.Lock()
		b.hostResults = append(b.hostResults, HostResult{Call: hc, Output: text, IsError: isErr})
		b.mu.Unlock()
		evs = append(evs,
			agentcli.Event{Kind: agentcli.EventToolUse, SessionID: sessionID, Tool: &use},
			agentcli.Event{Kind: agentcli.EventToolResult, SessionID: sessionID, ToolResult: &agentcli.ToolResult{ID: hc.ID, Output: text, IsError: isErr}})
	}
	return evs
}

// hostCall runs one scripted host-tool call with the PreToolUse answer
// already given (pre; nil without the hook): the rest is HostTools.Call's.
func (b *Backend) hostCall(ctx context.Context, host *driver.HostTools, hooks *driver.RunHooks, pre *agentcli.PreToolUseOutput, tool string, input json.RawMessage) (string, bool) {
	if pre != nil {
		if pre.Deny {
			return "error: " + pre.Reason, true
		}
		if pre.Input != nil {
			input = pre.Input
		}
	}
	return host.Call(ctx, tool, input)
}

// HostToolName returns the name under which the real CLI cli ("claude",
// "codex", "gemini", "opencode", "copilot", "qwen", "droid") offers the host tool tool
// (Request.Tools) to the model, as a scripted model server's ToolCall
// names it.
func HostToolName(cli, tool string) string {
	switch cli {
	case "gemini":
		return "mcp_" + agentcli.HostServerName + "_" + tool
	case "opencode":
		return agentcli.HostServerName + "_" + tool
	case "copilot":
		return agentcli.HostServerName + "-" + tool
	case "droid":
		return agentcli.HostServerName + "___" + tool
	}
	return "mcp__" + agentcli.HostServerName + "__" + tool
}

// QuestionCall returns a scripted model's call that asks the user q
// through the real CLI cli's way of asking (claude's AskUserQuestion,
// codex's request_user_input, qwen's ask_user_question, agentcli's question
// tool on gemini, opencode and copilot), for a run with Request.OnQuestion in
// bypass mode.
func QuestionCall(cli string, q agentcli.Question) *ToolCall {
	var items []any
	for i, it := range q.Items {
		var opts []any
		for _, o := range it.Options {
			opts = append(opts, map[string]any{"label": o.Label, "description": o.Description})
		}
		m := map[string]any{"header": it.Header, "question": it.Text, "options": opts}
		if cli == "codex" {
			id := it.ID
			if id == "" {
				id = fmt.Sprintf("q%d", i+1)
			}
			m["id"] = id
		} else {
			m["multiSelect"] = it.MultiSelect
		}
		items = append(items, m)
	}
	args := map[string]any{"questions": items}
	switch cli {
	case "claude":
		return &ToolCall{Name: agentcli.ToolNameAskUserQuestion, Args: args}
	case "codex":
		return &ToolCall{Name: "request_user_input", Args: args}
	case "qwen":
		return &ToolCall{Name: "ask_user_question", Args: args}
	}
	return &ToolCall{Name: HostToolName(cli, driver.QuestionTool), Args: args}
}
