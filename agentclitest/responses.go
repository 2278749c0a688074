package agentclitest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
)

// responsesReq is the part of an OpenAI Responses request the server reads.
type responsesReq struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Stream       bool            `json:"stream"`
	Tools        []struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
		// Tools are the functions of a "namespace" tool (codex offers
		// each MCP server's tools as one).
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"tools"`
	// namespaced maps "<namespace>__<function>" to the namespace.
	namespaced map[string]string
}

// responsesItem is one element of a Responses "input" list.
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Output  json.RawMessage `json:"output"`
}

func parseResponses(rec *ModelRequest, body []byte) (responsesReq, error) {
	var in responsesReq
	if err := json.Unmarshal(body, &in); err != nil {
		return in, err
	}
	rec.Model = in.Model
	rec.Stream = in.Stream
	rec.System = in.Instructions
	for _, t := range in.Tools {
		switch {
		case t.Type == "namespace":
			// Offered as "<namespace>__<function>", the name a
			// ToolCall uses: codex's namespace for MCP server s is
			// "mcp__s", so its tool t is "mcp__s__t" as with claude.
			for _, f := range t.Tools {
				full := t.Name + "__" + f.Name
				rec.Tools = append(rec.Tools, full)
				if in.namespaced == nil {
					in.namespaced = map[string]string{}
				}
				in.namespaced[full] = t.Name
			}
		case t.Name != "":
			rec.Tools = append(rec.Tools, t.Name)
		case t.Function != nil:
			rec.Tools = append(rec.Tools, t.Function.Name)
		case t.Type != "":
			rec.Tools = append(rec.Tools, t.Type) // e.g. "web_search"
		}
	}
	var s string
	if !isNull(in.Input) && json.Unmarshal(in.Input, &s) == nil {
		rec.Messages = append(rec.Messages, Message{Role: "user", Text: s})
		return in, nil
	}
	var items []responsesItem
	json.Unmarshal(in.Input, &items) //nolint:errcheck // absent input: no messages
	for _, it := range items {
		switch it.Type {
		case "message", "":
			if it.Role == "" || isNull(it.Content) {
				continue
			}
			var s string
			if json.Unmarshal(it.Content, &s) == nil {
				rec.Messages = append(rec.Messages, Message{Role: it.Role, Text: s})
				continue
			}
			var parts []struct {
				Text *string `json:"text"`
			}
			json.Unmarshal(it.Content, &parts) //nolint:errcheck
			for _, p := range parts {
				if p.Text != nil {
					rec.Messages = append(rec.Messages, Message{Role: it.Role, Text: *p.Text})
				}
			}
		case "function_call_output", "custom_tool_call_output":
			rec.ToolResults = append(rec.ToolResults, ModelToolResult{CallID: it.CallID, Output: textOf(it.Output)})
		}
	}
	return in, nil
}

func openaiError(status int, msg string) any {
	typ := "server_error"
	if status >= 400 && status < 500 {
		typ = "invalid_request_error"
	}
	if status == 429 {
		typ = "rate_limit_exceeded"
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
}

func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		return
	}
	rec := newRequest("responses", r, body)
	in, perr := parseResponses(&rec, body)
	t, seq := s.takeTurn(w, rec)
	if s.refuse(w, r, t, perr, openaiError) {
		return
	}
	model := cmp.Or(in.Model, Model)
	u := t.usage()
	respID := fmt.Sprintf("resp_agentclitest_%d", seq)
	call := t.call(seq, "call_agentclitest_", rec.Tools, shellArgs, "exec_command", "shell")
	usage := map[string]any{
		"input_tokens":          u.InputTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CachedTokens},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
		"total_tokens":          u.InputTokens + u.OutputTokens,
	}
	// Final items, as they appear in output_item.done and response.completed.
	var output []any
	reasoningItem := map[string]any{
		"id": fmt.Sprintf("rs_agentclitest_%d", seq), "type": "reasoning",
		"summary": []any{map[string]any{"type": "summary_text", "text": t.Thinking}},
	}
	msgItem := map[string]any{
		"id": fmt.Sprintf("msg_agentclitest_%d", seq), "type": "message", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}},
	}
	var callItem map[string]any
	if t.Thinking != "" {
		output = append(output, reasoningItem)
	}
	if t.Text != "" {
		output = append(output, msgItem)
	}
	if call != nil {
		callItem = map[string]any{
			"id": fmt.Sprintf("fc_agentclitest_%d", seq), "type": "function_call", "status": "completed",
			"call_id": call.ID, "name": call.Name, "arguments": argsJSON(call.Args),
		}
		if ns, ok := in.namespaced[call.Name]; ok {
			callItem["namespace"], callItem["name"] = ns, call.Name[len(ns)+2:]
		}
		output = append(output, callItem)
	}
	if output == nil {
		output = []any{}
	}
	final := map[string]any{
		"id": respID, "object": "response", "status": "completed", "model": model,
		"output": output, "usage": usage, "end_turn": call == nil,
	}
	if !in.Stream {
		writeJSON(w, http.StatusOK, final)
		return
	}
	rep := responsesReply{id: respID, model: model, t: t, call: call,
		reasoning: reasoningItem, msg: msgItem, callItem: callItem, final: final}
	rep.stream(startSSE(w))
}

// responsesReply is a scripted turn as a Responses API reply: its final
// items and response.
type responsesReply struct {
	id, model                string
	t                        Turn
	call                     *ToolCall
	reasoning, msg, callItem map[string]any
	final                    map[string]any
}

// stream sends the reply as the Responses API's server-sent events.
func (r responsesReply) stream(ev *sse) {
	n := 0
	send := func(name string, data map[string]any) {
		data["type"] = name
		data["sequence_number"] = n
		n++
		ev.frame(name, data, "\n\n")
	}
	send("response.created", map[string]any{"response": map[string]any{
		"id": r.id, "object": "response", "status": "in_progress", "model": r.model, "output": []any{},
	}})
	send("response.in_progress", map[string]any{"response": map[string]any{
		"id": r.id, "object": "response", "status": "in_progress", "model": r.model, "output": []any{},
	}})
	oi := 0
	if r.t.Thinking != "" {
		id := r.reasoning["id"]
		send("response.output_item.added", map[string]any{"output_index": oi, "item": map[string]any{"id": id, "type": "reasoning", "summary": []any{}}})
		send("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": oi, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}})
		for _, c := range chunks(r.t.Thinking) {
			send("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": oi, "summary_index": 0, "delta": c})
		}
		send("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": oi, "summary_index": 0, "text": r.t.Thinking})
		send("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": oi, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": r.t.Thinking}})
		send("response.output_item.done", map[string]any{"output_index": oi, "item": r.reasoning})
		oi++
	}
	if r.t.Text != "" {
		id := r.msg["id"]
		send("response.output_item.added", map[string]any{"output_index": oi, "item": map[string]any{
			"id": id, "type": "message", "role": "assistant", "status": "in_progress", "content": []any{},
		}})
		send("response.content_part.added", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, c := range chunks(r.t.Text) {
			send("response.output_text.delta", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "delta": c})
		}
		send("response.output_text.done", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "text": r.t.Text})
		send("response.content_part.done", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "part": map[string]any{"type": "output_text", "text": r.t.Text, "annotations": []any{}}})
		send("response.output_item.done", map[string]any{"output_index": oi, "item": r.msg})
		oi++
	}
	if r.callItem != nil {
		id := r.callItem["id"]
		added := map[string]any{
			"id": id, "type": "function_call", "status": "in_progress", "call_id": r.call.ID, "name": r.callItem["name"], "arguments": "",
		}
		if ns, ok := r.callItem["namespace"]; ok {
			added["namespace"] = ns
		}
		send("response.output_item.added", map[string]any{"output_index": oi, "item": added})
		args := argsJSON(r.call.Args)
		for _, c := range chunks(args) {
			send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": oi, "delta": c})
		}
		send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": oi, "arguments": args})
		send("response.output_item.done", map[string]any{"output_index": oi, "item": r.callItem})
	}
	send("response.completed", map[string]any{"response": r.final})
}
